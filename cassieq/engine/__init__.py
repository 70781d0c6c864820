"""The bucket/pointer queue algorithm. Imports no database, web or Spark code."""

from cassieq.engine.clock import Clock, FakeClock, SystemClock
from cassieq.engine.context import Tuning
from cassieq.engine.engine import QueueEngine
from cassieq.engine.observe import CallCounter, Observer

__all__ = [
    "CallCounter",
    "Clock",
    "FakeClock",
    "Observer",
    "QueueEngine",
    "SystemClock",
    "Tuning",
]
