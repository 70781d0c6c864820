"""Dropping a shared subscription's delivery rows (schema 0015) when nothing needs them: the
subscription deleted, its queue deleted, or a bucket dropped at the end of its retention."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

from cassieq.engine.context import EngineContext
from cassieq.model import QueueDefinition, QueueId
from cassieq.store.base import Store

# Deletes of delivery partitions sent at once.
_AT_ONCE = 32


class FirstKept(Protocol):
    async def first_kept(self, view: QueueDefinition) -> int: ...


async def drop_deliveries(
    ctx: EngineContext, q: QueueDefinition, names: Sequence[str], kept: FirstKept
) -> int:
    """Delete the delivery rows of subscriptions ``names`` in every bucket of every
    partition that may hold some (from the first bucket still kept up to the partition's
    monoton; before it every bucket was dropped, with its delivery rows); how many
    partitions of rows were deleted."""
    deletes: list[tuple[QueueId, str, int]] = []
    for view in q.partition_views():
        first = await kept.first_kept(view)
        top = await ctx.store.read_monoton(view.id)
        last = max(first, view.bucket_of(max(top - 1, 0)))
        deletes += [(view.id, name, b) for name in names for b in range(first, last + 1)]
    await delete_deliveries(ctx.store, deletes)
    return len(deletes)


async def delete_deliveries(store: Store, deletes: Sequence[tuple[QueueId, str, int]]) -> None:
    """Delete these (queue partition, subscription, bucket) partitions of delivery rows,
    ``_AT_ONCE`` at a time (the queue's deletion job calls it too)."""
    for start in range(0, len(deletes), _AT_ONCE):
        part = deletes[start : start + _AT_ONCE]
        await asyncio.gather(*(store.delete_sub_deliveries(qid, n, b) for qid, n, b in part))


async def drop_bucket_deliveries(
    ctx: EngineContext, view: QueueDefinition, names: Sequence[str], bucket: int
) -> None:
    """A bucket dropped: the delivery rows every shared subscription had of it."""
    await asyncio.gather(*(ctx.store.delete_sub_deliveries(view.id, n, bucket) for n in names))
