"""Processed history for the backlog measurement, written as the engine leaves it.

Running 100,000 messages through put, get and ack takes longer than the benchmark's
budget, so their end state is written directly through the Store: acked rows in sealed,
finalized and emptied buckets, the monoton past them, and the reader, repair and
invisibility pointers (with its summary) moved beyond. That is exactly what a get then
meets: nothing of the history is on its path.
"""

from __future__ import annotations

import asyncio

from cassieq.model import Counts, InvisibilityState, MessageRow, QueueDefinition
from cassieq.store.base import Store

CONCURRENCY = 32


async def write_processed_history(store: Store, queue: QueueDefinition, messages: int) -> None:
    qid, size = queue.id, queue.options.bucket_size
    buckets = messages // size
    clock_ms = 0
    gate = asyncio.Semaphore(CONCURRENCY)

    async def bucket(b: int) -> None:
        async with gate:
            rows = [_processed(m, clock_ms) for m in range(b * size, (b + 1) * size)]
            assert await store.insert_messages(qid, b, rows, clock_ms)
            await store.seal_bucket(qid, b, clock_ms)
            await store.finalize_bucket(qid, b, clock_ms)
            await store.delete_bucket(qid, b)

    await asyncio.gather(*(bucket(b) for b in range(buckets)))
    total = buckets * size
    assert (await store.cas_monoton(qid, 0, total))[0]
    for kind in ("reader", "repair"):
        assert await store.cas_pointer(qid, kind, 0, buckets)
    summary = Counts(published=total, acked=total, delivered=total)
    assert await store.cas_invisibility(
        qid, 0, InvisibilityState(bucket=buckets, rev=1, summary=summary)
    )


def _processed(monoton: int, at: int) -> MessageRow:
    return MessageRow(
        monoton=monoton,
        message=f"h-{monoton}",
        version=3,
        delivery_count=1,
        acked=True,
        next_visible_on=at,
        tag=f"h{monoton}",
        created_at=at,
        updated_at=at,
        acked_at=at,
        change=f"h{monoton}",
    )
