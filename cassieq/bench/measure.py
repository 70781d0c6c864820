"""Timing helpers: run N clients for a while, count operations, keep latencies."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


@dataclass
class Latencies:
    samples: dict[str, list[float]] = field(default_factory=dict)

    def timed(self, name: str, started: float) -> None:
        self.samples.setdefault(name, []).append((time.perf_counter() - started) * 1000)

    def summary(self) -> dict[str, dict[str, float]]:
        return {name: _percentiles(values) for name, values in sorted(self.samples.items())}


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {"p50": 0.0, "p99": 0.0}

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {"p50": at(0.50), "p99": at(0.99)}


async def rate(clients: int, seconds: float, step: Callable[[int], Awaitable[bool]]) -> float:
    """Operations per second: ``clients`` loops calling ``step`` until time is up.

    ``step`` returns whether it completed an operation (False: nothing to do, e.g. empty).
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    done = 0

    async def client(index: int) -> None:
        nonlocal done
        while loop.time() < deadline:
            if await step(index):
                done += 1

    started = loop.time()
    await asyncio.gather(*(client(i) for i in range(clients)))
    return done / (loop.time() - started)
