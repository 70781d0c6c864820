"""Peek: the messages still in a queue, in monoton order, without touching any of them.

Only reads (the invisibility state, the monoton, bucket partitions): no lease, no
compare-and-set, so a peek changes nothing and costs no LWT. The messages still in the
queue live in the invisibility pointer's stragglers and in its bucket up to the one past
the monoton's (where a repair copy may sit): finished buckets hold none.
"""

from __future__ import annotations

import asyncio

from cassieq.engine.context import EngineContext
from cassieq.engine.life.fifo import sequence_number
from cassieq.model import MessageRow, PeekedMessage, QueueDefinition

MAX_LIMIT = 100
# Buckets read by one peek at most (in groups of READS_AT_ONCE): a page stops early, with a
# cursor, rather than read an unbounded run of emptied buckets.
MAX_BUCKETS_PER_PEEK = 64
READS_AT_ONCE = 8


class Peeker:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx

    async def peek(
        self, queue: QueueDefinition, limit: int, after: int | None
    ) -> tuple[list[PeekedMessage], int | None]:
        """Up to ``limit`` messages with a monoton above ``after``; the cursor of the next
        page (the last monoton looked at), or None when the queue has nothing further."""
        store, qid = self._ctx.store, queue.id
        state, monoton = await asyncio.gather(store.read_invisibility(qid), store.read_monoton(qid))
        start = 0 if after is None else queue.bucket_of(after + 1)
        top = queue.bucket_of(monoton) + 1
        buckets = [
            *(b for b in sorted(state.stragglers) if b >= start),
            *range(max(start, state.bucket), top + 1),
        ]
        now = self._ctx.clock.now()
        found: list[PeekedMessage] = []
        reading = buckets[:MAX_BUCKETS_PER_PEEK]
        for i in range(0, len(reading), READS_AT_ONCE):
            group = reading[i : i + READS_AT_ONCE]
            snaps = await asyncio.gather(*(store.read_bucket(qid, b) for b in group))
            for snap in snaps:
                for m in snap.messages:
                    if (after is None or m.monoton > after) and _in_queue(queue, m, now):
                        found.append(_peeked(m, now, queue))
                        if len(found) == limit:
                            return found, m.monoton
        if len(buckets) > len(reading):
            # Stopped at the read bound: the next page goes on after the last bucket read.
            return found, (reading[-1] + 1) * queue.options.bucket_size - 1
        return found, None


def _in_queue(queue: QueueDefinition, m: MessageRow, now: int) -> bool:
    """Not acked, dead-lettered, expired (marked or due) nor moved elsewhere by repair."""
    return (
        not m.acked
        and m.republished_to is None
        and not m.past_retention(now, queue.options.retention_ms)
    )


def _peeked(m: MessageRow, now: int, queue: QueueDefinition) -> PeekedMessage:
    partition = queue.partition
    return PeekedMessage(
        monoton=m.monoton,
        body=m.message,
        attributes=m.attributes,
        delivery_count=m.delivery_count,
        visible=m.visible(now),
        sent_at=m.created_at,
        partition=partition,
        group=m.group,
        sequence_number=sequence_number(partition, m.monoton) if queue.options.fifo else None,
    )
