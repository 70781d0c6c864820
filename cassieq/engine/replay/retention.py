"""What a queue with subscriptions keeps: every bucket until its retention ends.

Without subscriptions a bucket is dropped as soon as the queue is done with it (finalized,
every message acked). A subscription may read it again (seek back: replay), so while a
queue has subscriptions, finished buckets are kept and dropped whole only once their
newest message is older than ``messageRetentionSeconds``, read by every subscription or
not (docs/guides/subscriptions.md). The first subscription of a queue marks, per partition,
the first bucket kept this way (the ``retention`` pointer, stored plus one: 0 is unset);
repair's sweep drops from that mark on, up to the repair pointer (finalized buckets only,
none the invisibility side still holds). When the last subscription is deleted, the sweep
drops the finished buckets kept for it at once.
"""

from __future__ import annotations

from cassieq.engine.context import EngineContext
from cassieq.engine.replay.shared_rows import drop_bucket_deliveries
from cassieq.model import QueueDefinition

MAX_BUCKETS_PER_SWEEP = 256


def kept_behind(mark: int, repair: int) -> bool:
    """Whether the sweep has buckets to look at: a retention ``mark`` is set (stored plus
    one) and its bucket is behind the ``repair`` pointer."""
    return bool(mark) and mark - 1 < repair


class Retention:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx

    async def mark(self, queue: QueueDefinition) -> None:
        """Before the first subscription reads: mark each partition's first kept bucket."""
        store = self._ctx.store
        for view in queue.partition_views():
            if await store.read_pointer(view.id, "retention"):
                continue
            first = await self._first_unfinished(view)
            # Lost to another server's mark: that one stands (it is no later than ours).
            await store.cas_pointer(view.id, "retention", 0, first + 1)

    async def first_kept(self, view: QueueDefinition) -> int:
        """The first bucket of partition ``view`` that may still hold messages."""
        store = self._ctx.store
        mark = await store.read_pointer(view.id, "retention")
        if mark:
            return mark - 1
        if not view.options.delete_buckets_after_finalize:
            return 0
        return await self._first_unfinished(view)

    async def _first_unfinished(self, view: QueueDefinition) -> int:
        """The first bucket the queue's repair or invisibility side still holds: every one
        before it was finished (and dropped, unless kept)."""
        repair = await self._ctx.store.read_pointer(view.id, "repair")
        state = await self._ctx.store.read_invisibility(view.id)
        return min([repair, *state.stragglers])

    async def sweep(self, view: QueueDefinition) -> int:
        """Drop the kept buckets of partition ``view`` that are due; how many (run by the
        repair loop's lease holder)."""
        store, now = self._ctx.store, self._ctx.clock.now()
        mark = await store.read_pointer(view.id, "retention")
        if not mark:
            return 0
        bucket, repair = mark - 1, await store.read_pointer(view.id, "repair")
        if not kept_behind(mark, repair):
            return 0
        state = await store.read_invisibility(view.id)
        subs = await store.read_subscriptions(view.id.whole)  # fresh, as kept_for_subscriptions
        kept, shared = bool(subs), [s.name for s in subs if s.mode == "shared"]
        retention_ms = view.options.message_retention_seconds * 1000
        dropped = 0
        while dropped < MAX_BUCKETS_PER_SWEEP and bucket < min(repair, state.bucket):
            if bucket in state.stragglers:
                break  # the invisibility side still holds deliveries of it
            snap = await store.read_bucket(view.id, bucket)
            newest = max((r.created_at for r in snap.messages), default=None)
            expired = newest is None or newest + retention_ms <= now
            done = all(r.acked for r in snap.messages)
            if not expired and (kept or not done):
                break
            if snap.messages and view.options.delete_buckets_after_finalize:
                await store.delete_bucket(view.id, bucket)
            await drop_bucket_deliveries(self._ctx, view, shared, bucket)
            if not await store.cas_pointer(view.id, "retention", bucket + 1, bucket + 2):
                break  # another server swept it
            bucket += 1
            dropped += 1
        return dropped
