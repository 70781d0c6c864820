"""Injectable time: the engine asks a Clock, tests move a FakeClock."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> int:
        """Milliseconds since the Unix epoch, UTC."""
        ...


class SystemClock:
    def now(self) -> int:
        return time.time_ns() // 1_000_000


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self._now = start_ms

    def now(self) -> int:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += round(seconds * 1000)
