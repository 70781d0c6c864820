"""Taking monotons: the per-queue counter every message id comes from.

A taken value is never handed out twice, even when the message write then fails
(the value becomes a hole, which the reader and repair step over).

One compare-and-set reserves ``count`` consecutive values; the publisher decides how many
(one per put, or a whole group of concurrent puts: see ``publisher.py``).
"""

from __future__ import annotations

import asyncio
import random
from typing import Literal

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import Contention, QueueNotFound
from cassieq.model import QueueId

MonotonStrategy = Literal["grouped", "per_put"]


class Monotons:
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
            if current < expected:
                # The counter never goes back while the queue version lives: its state was
                # deleted (a server put from a queue cache older than the deletion's grace).
                # Taking values again from 0 would write rows no one reads or deletes. The
                # value seen stays known, so this server's later puts to the version (never
                # reused: a re-created queue is the next one) are refused too.
                raise QueueNotFound(f"queue {queue.queue!r} not found in account {queue.account!r}")
            self._known[queue] = current
            if applied:
                return expected
            expected = current
            # Jittered exponential backoff: without it, losers retry in lock-step and lose again.
            await asyncio.sleep(random.uniform(0, min(0.05, 0.001 * 2 ** min(attempt, 6))))
        raise Contention(f"could not take a monoton for {queue} (contention)")
