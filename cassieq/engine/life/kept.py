"""Whether a queue keeps its finished buckets for subscriptions (replay/retention.py says
how long): asked where the queue's life drops a bucket (repair, the invisibility side)."""

from __future__ import annotations

from cassieq.engine.context import EngineContext
from cassieq.model import QueueDefinition


async def kept_for_subscriptions(ctx: EngineContext, queue: QueueDefinition) -> bool:
    """Whether finished buckets of ``queue`` are kept for subscriptions (read fresh: a drop
    is once per bucket, and a stale answer would lose a bucket for replay)."""
    return bool(await ctx.store.read_subscriptions(queue.id.whole))
