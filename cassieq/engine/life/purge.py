"""Purge: every message put before the call is retired; later puts stay.

The cut is the queue's monoton read at the call: every put that returned before the call
took a monoton below it, every put that starts after it takes one at or above it. The rows
themselves are retired (acked, marked purged) by compare-and-set, so no server delivers
them again whatever its cached queue definition says; a row that changed under the purge
(a delivery in between) is read again and retired at its new version, so a row in flight
is purged too and its receipt becomes stale.

Which buckets: from the repair pointer (late writes behind the invisibility pointer are
still repair's to move) and the invisibility pointer's stragglers, up to the cut's bucket.
The pointers are read before the monoton: a repair move that finished before the repair
pointer passed its bucket wrote its copy at a monoton below the cut, inside the walk.
A move repair has begun (the row's ``republished_to``) is followed to its copy, which may
sit past the cut: the copy's place is taken first by a purged row (an insert that does
nothing when the copy is there), then the copy retired. Idempotent: a retried purge finds
retired rows acked and skips them.
"""

from __future__ import annotations

import asyncio

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import Contention
from cassieq.engine.life.put import new_message
from cassieq.model import QueueDefinition

READS_AT_ONCE = 8
ENTRIES_PER_BATCH = 50
MAX_FOLLOW = 8  # a copy of a copy: repair moves a row again only when it is late again


class Purger:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx

    async def purge(self, queue: QueueDefinition) -> int:
        """Retire every message below the monoton read now; how many this call retired."""
        store, qid = self._ctx.store, queue.id
        repair, state = await asyncio.gather(
            store.read_pointer(qid, "repair"), store.read_invisibility(qid)
        )
        cut = await store.read_monoton(qid)
        if cut == 0:
            return 0
        first = min(repair, state.bucket)
        buckets = sorted({*state.stragglers, *range(first, queue.bucket_of(cut - 1) + 1)})
        purged = 0
        for start in range(0, len(buckets), READS_AT_ONCE):
            counts = await asyncio.gather(
                *(self._bucket(queue, b, cut) for b in buckets[start : start + READS_AT_ONCE])
            )
            purged += sum(counts)
        self._ctx.log.info("queue_purged", queue=str(qid), cut=cut, purged=purged)
        return purged

    async def _bucket(self, queue: QueueDefinition, bucket: int, cut: int) -> int:
        store, qid = self._ctx.store, queue.id
        purged = 0
        for _ in range(self._ctx.tuning.max_cas_attempts):
            snap = await store.read_bucket(qid, bucket)
            rows = [m for m in snap.messages if m.monoton < cut]
            left = [m for m in rows if not m.acked]
            # Copies of repair moves (done, or begun and now retired here) may sit past the
            # cut, where the walk does not go.
            follow = [m.republished_to for m in rows if m.acked and m.republished_to is not None]
            for target in follow:
                if target >= cut:
                    purged += await self._copy(queue, target, 0)
            if not left:
                return purged
            now = self._ctx.clock.now()
            for start in range(0, len(left), ENTRIES_PER_BATCH):
                chunk = left[start : start + ENTRIES_PER_BATCH]
                applied = await store.cas_messages(
                    qid,
                    bucket,
                    [(m.version, m.retired(now, purged=True)) for m in chunk],
                    keep_body=True,
                )
                purged += sum(applied)
                for m, done in zip(chunk, applied, strict=True):
                    if done and m.republished_to is not None:
                        # A move begun: the message is counted once, here, not at its copy.
                        await self._copy(queue, m.republished_to, 0)
            # Rows that changed under us are read again (loop); retired ones are skipped.
        raise Contention(f"could not purge bucket {bucket} of {qid} (contention)")

    async def _copy(self, queue: QueueDefinition, monoton: int, depth: int) -> int:
        """Retire the copy of a repair move at ``monoton``, or hold its place so the move
        never writes it; 1 if this call retired a message there."""
        store, qid, bucket = self._ctx.store, queue.id, queue.bucket_of(monoton)
        now = self._ctx.clock.now()
        placeholder = new_message(monoton, "", now).retired(now, purged=True)
        # Written only when the copy is not there yet (then the move's own insert does
        # nothing); a finalized bucket takes neither.
        await store.insert_messages(qid, bucket, [placeholder], now)
        for _ in range(self._ctx.tuning.max_cas_attempts):
            row = await store.read_message(qid, bucket, monoton)
            if row is None or row.acked:
                if row is not None and row.republished_to is not None and depth < MAX_FOLLOW:
                    return await self._copy(queue, row.republished_to, depth + 1)
                return 0
            if await store.cas_message(qid, bucket, row.version, row.retired(now, purged=True)):
                if row.republished_to is not None and depth < MAX_FOLLOW:
                    return 1 + await self._copy(queue, row.republished_to, depth + 1)
                return 1
        raise Contention(f"could not purge monoton {monoton} of {qid} (contention)")
