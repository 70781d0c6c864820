"""Taking monotons: the per-queue counter every message id comes from.

A taken value is never handed out twice, even when the message write then fails
(the value becomes a hole, which the reader and repair step over).

Two strategies, selectable so the benchmark can compare them:
- ``PerPutMonotons``: one compare-and-set per put (the original design);
- ``GroupedMonotons``: concurrent puts in this process share one compare-and-set
  that reserves a contiguous range (group commit), so N waiting puts cost one LWT.
"""

from __future__ import annotations

import asyncio
import random
from typing import Literal, Protocol

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import Contention
from cassieq.model import QueueId

MonotonStrategy = Literal["grouped", "per_put"]


class Monotons(Protocol):
    async def take(self, queue: QueueId, count: int = 1) -> int:
        """Reserve ``count`` consecutive monotons; return the first."""
        ...


class PerPutMonotons:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx
        self._known: dict[QueueId, int] = {}  # last value seen: saves a read per put

    async def take(self, queue: QueueId, count: int = 1) -> int:
        store = self._ctx.store
        expected = self._known.get(queue)
        if expected is None:
            expected = await store.read_monoton(queue)
        for attempt in range(self._ctx.tuning.max_cas_attempts):
            applied, current = await store.cas_monoton(queue, expected, expected + count)
            self._known[queue] = current
            if applied:
                return expected
            expected = current
            # Jittered exponential backoff: without it, losers retry in lock-step and lose again.
            await asyncio.sleep(random.uniform(0, min(0.05, 0.001 * 2 ** min(attempt, 6))))
        raise Contention(f"could not take a monoton for {queue} (contention)")


class GroupedMonotons:
    def __init__(self, ctx: EngineContext) -> None:
        self._single = PerPutMonotons(ctx)
        self._waiting: dict[QueueId, list[tuple[int, asyncio.Future[int]]]] = {}
        self._flushing: set[QueueId] = set()
        self._tasks: set[asyncio.Task[None]] = set()  # held: the loop keeps only weak refs

    async def take(self, queue: QueueId, count: int = 1) -> int:
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(queue, []).append((count, future))
        if queue not in self._flushing:
            self._flushing.add(queue)
            task = asyncio.get_running_loop().create_task(self._flush(queue))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await future

    async def _flush(self, queue: QueueId) -> None:
        try:
            # Whoever arrives while a CAS is in flight joins the next one.
            while batch := self._waiting.pop(queue, []):
                total = sum(count for count, _ in batch)
                try:
                    first = await self._single.take(queue, total)
                except Exception as exc:
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_exception(exc)
                    continue
                for count, fut in batch:
                    if not fut.done():
                        fut.set_result(first)
                    # A cancelled waiter's values are simply holes.
                    first += count
        finally:
            self._flushing.discard(queue)


def make_monotons(ctx: EngineContext, strategy: MonotonStrategy) -> Monotons:
    return GroupedMonotons(ctx) if strategy == "grouped" else PerPutMonotons(ctx)
