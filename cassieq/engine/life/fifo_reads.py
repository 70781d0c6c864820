"""What a look at a FIFO group reads (life/fifo.py ``next_heads``): the head it finds with
the messages right after it, and the rows of the group's entries, read side by side."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from cassieq.engine.context import EngineContext
from cassieq.model import MessageRow, QueueDefinition

# Entries of one bucket from which their bucket is read whole instead of one by one (a
# group's messages sent in one batch sit together).
BUCKET_READ_FROM = 3


@dataclass(slots=True)
class Head:
    """A group's lowest unretired message (None: not written yet, its put under way), the
    messages right after it that were visible when read with it (a receive that takes the
    head may answer them after it), and the group's entries after the head, as read."""

    row: MessageRow | None
    followers: list[MessageRow]
    rest: list[int]


async def read_rows(
    ctx: EngineContext, queue: QueueDefinition, monotons: list[int]
) -> dict[int, MessageRow | None]:
    """The rows of these messages (None: no row), side by side: a bucket that holds
    BUCKET_READ_FROM of them or more is read whole, the others one by one."""
    store, pid = ctx.store, queue.id
    by_bucket: dict[int, list[int]] = {}
    for m in monotons:
        by_bucket.setdefault(queue.bucket_of(m), []).append(m)

    async def read(bucket: int, wanted: list[int]) -> list[tuple[int, MessageRow | None]]:
        if len(wanted) >= BUCKET_READ_FROM:
            snap = await store.read_bucket(pid, bucket)
            rows = {r.monoton: r for r in snap.messages}
            return [(m, rows.get(m)) for m in wanted]
        got = await asyncio.gather(*(store.read_message(pid, bucket, m) for m in wanted))
        return list(zip(wanted, got, strict=True))

    parts = await asyncio.gather(*(read(b, ms) for b, ms in by_bucket.items()))
    return {m: row for part in parts for m, row in part}
