"""Get next: the invisibility side first, then the reader bucket; seal and advance."""

from __future__ import annotations

import asyncio

from cassieq.engine.context import EngineContext
from cassieq.engine.delivery import Deliverer
from cassieq.engine.invisibility import InvisibilitySide
from cassieq.model import Delivery, QueueDefinition, QueueId

MAX_STEPS = 64


class Reader:
    def __init__(
        self, ctx: EngineContext, deliverer: Deliverer, invisibility: InvisibilitySide
    ) -> None:
        self._ctx = ctx
        self._deliverer = deliverer
        self._invisibility = invisibility
        # queue -> (reader bucket, when this server first saw monotons of it unwritten)
        self._missing_since: dict[QueueId, tuple[int, int]] = {}
        # queue -> the seal-and-advance this server is doing now: readers that find the
        # bucket exhausted at the same moment wait for one LWT pair instead of each racing.
        self._advancing: dict[QueueId, asyncio.Future[None]] = {}

    async def get_next(self, queue: QueueDefinition, invisibility_ms: int) -> Delivery | None:
        store, qid = self._ctx.store, queue.id
        bucket = await store.read_pointer(qid, "reader")
        delivery = await self._invisibility.deliver(queue, bucket, invisibility_ms)
        if delivery is not None:
            return delivery
        for _ in range(MAX_STEPS):
            snap = await store.read_bucket(qid, bucket)
            now = self._ctx.clock.now()
            visible = [m for m in snap.messages if m.visible(now)]
            if visible:
                untried = [m for m in visible if not self._deliverer.busy(queue, m)]
                if not untried:
                    # Other readers of this server are trying them all: rather than spend an
                    # LWT to lose, wait for one outcome and look again.
                    await self._deliverer.wait_for_tries(queue, visible)
                    continue
                delivery = await self._deliverer.first_of(queue, bucket, untried, invisibility_ms)
                if delivery is not None:
                    return delivery
                continue  # lost every race, or dead-lettered: look again
            # Nothing to take here. Leave the bucket only when no writer can still be
            # given a monoton in it; invisible messages stay for the invisibility side.
            if await store.read_monoton(qid) < (bucket + 1) * queue.options.bucket_size:
                return None
            if self._writes_may_be_in_flight(queue, snap.bucket, len(snap.messages), now):
                return None
            await self._advance(queue, bucket, now)
            bucket = await store.read_pointer(qid, "reader")
        return None

    async def _advance(self, queue: QueueDefinition, bucket: int, now: int) -> None:
        """Seal the reader's bucket and move the pointer past it, once per server at a time."""
        qid = queue.id
        running = self._advancing.get(qid)
        if running is not None:
            await asyncio.shield(running)
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._advancing[qid] = done
        try:
            store = self._ctx.store
            await store.seal_bucket(qid, bucket, now)
            if await store.cas_pointer(qid, "reader", bucket, bucket + 1):
                self._ctx.log.debug("reader_advanced", queue=str(qid), bucket=bucket + 1)
        finally:
            del self._advancing[qid]
            done.set_result(None)

    def _writes_may_be_in_flight(
        self, queue: QueueDefinition, bucket: int, written: int, now: int
    ) -> bool:
        """A taken monoton whose row is missing is a write in flight or a dead writer's hole.

        Sealing at once would turn every in-flight write into a late write that only
        repair delivers, after the finalize wait (the original design's behaviour under
        concurrent puts). Waiting a short grace lets them land; after it they are holes.
        """
        if written >= queue.options.bucket_size:
            return False
        seen = self._missing_since.get(queue.id)
        if seen is None or seen[0] != bucket:
            self._missing_since[queue.id] = (bucket, now)
            return True
        return now - seen[1] < self._ctx.tuning.hole_grace_ms
