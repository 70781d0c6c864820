"""The bucket/pointer queue algorithm. Imports no database, web or Spark code."""

from cassieq.engine.clock import Clock, FakeClock, SystemClock
from cassieq.engine.context import Tuning
from cassieq.engine.engine import QueueEngine

__all__ = ["Clock", "FakeClock", "QueueEngine", "SystemClock", "Tuning"]
