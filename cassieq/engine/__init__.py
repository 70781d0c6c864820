"""The bucket/pointer queue algorithm. Imports no database, web or Spark code."""

from cassieq.engine.clock import Clock, FakeClock, SystemClock
from cassieq.engine.context import Tuning
from cassieq.engine.engine import QueueEngine
from cassieq.engine.observe import CallCounter, Observer
from cassieq.engine.parking import PARKING, Parking

__all__ = [
    "PARKING",
    "CallCounter",
    "Clock",
    "FakeClock",
    "Observer",
    "Parking",
    "QueueEngine",
    "SystemClock",
    "Tuning",
]
