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
    return percentiles(values, p50=0.50, p99=0.99)


def percentiles(values: list[float], **at: float) -> dict[str, float]:
    """Named nearest-rank percentiles, rounded: ``percentiles(v, p50=0.5)``; 0.0 for none."""
    ordered = sorted(values)
    if not ordered:
        return dict.fromkeys(at, 0.0)
    last = len(ordered) - 1
    return {name: round(ordered[min(last, int(q * len(ordered)))], 2) for name, q in at.items()}


async def rate(clients: int, seconds: float, step: Callable[[int], Awaitable[bool]]) -> float:
    """Operations per second: ``clients`` loops calling ``step`` until time is up.

    ``step`` returns whether it completed an operation (False: nothing to do, e.g. empty).
    """

    async def counted(index: int) -> int:
        return 1 if await step(index) else 0

    return await throughput(clients, seconds, counted)


async def throughput(clients: int, seconds: float, step: Callable[[int], Awaitable[int]]) -> float:
    """Messages per second: ``clients`` loops calling ``step`` until time is up; ``step``
    returns how many messages it moved (a batch moves several, an empty answer none)."""
    moved, elapsed = await run_clients(clients, seconds, step)
    return moved / elapsed


async def run_clients(
    clients: int, seconds: float, step: Callable[[int], Awaitable[int]]
) -> tuple[int, float]:
    """(messages moved by all clients, seconds it took): ``clients`` loops calling ``step``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    done = 0

    async def client(index: int) -> None:
        nonlocal done
        while loop.time() < deadline:
            # Not `done += await step(index)`: that reads `done` before the await and
            # writes it back after, dropping what every other client counted meanwhile
            # (at 32 clients the figures came out about 32 times too low).
            moved = await step(index)
            done += moved

    started = loop.time()
    await asyncio.gather(*(client(i) for i in range(clients)))
    return done, loop.time() - started
