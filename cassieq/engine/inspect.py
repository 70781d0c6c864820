"""Read-only looks at a queue's machinery (pointers, buckets, monotons, rows) for the
operator's debug routes, the web console and the metrics sampler: one place, so the three
show the same thing, and the only way adapters see the store's state."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from cassieq.engine.context import EngineContext
from cassieq.model import BucketState, InvisibilityState, MessageRow, QueueDefinition


@dataclass(frozen=True)
class Pointers:
    reader: int  # the bucket consumers read from
    repair: int  # the first bucket not yet finalized
    invisibility: InvisibilityState  # its bucket, stragglers and the finished buckets' counts
    monoton: int  # the next message id to be taken

    @property
    def invisibility_lag(self) -> int:
        return max(0, self.reader - self.invisibility.bucket)

    @property
    def repair_lag(self) -> int:
        return max(0, self.reader - self.repair)


class Inspector:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx

    async def pointers(self, queue: QueueDefinition) -> Pointers:
        store, qid = self._ctx.store, queue.id
        reader, repair, invisibility, monoton = await asyncio.gather(
            store.read_pointer(qid, "reader"),
            store.read_pointer(qid, "repair"),
            store.read_invisibility(qid),
            store.read_monoton(qid),
        )
        return Pointers(reader, repair, invisibility, monoton)

    async def bucket(self, queue: QueueDefinition, bucket: int) -> BucketState:
        return await self._ctx.store.read_bucket(queue.id, bucket)

    async def buckets(self, queue: QueueDefinition, buckets: list[int]) -> list[BucketState]:
        store = self._ctx.store
        return list(await asyncio.gather(*(store.read_bucket(queue.id, b) for b in buckets)))

    async def message(self, queue: QueueDefinition, monoton: int) -> MessageRow | None:
        return await self._ctx.store.read_message(queue.id, queue.bucket_of(monoton), monoton)
