"""Queue statistics without re-reading history.

Finished buckets are summed in the invisibility state as the pointer leaves them;
only the live buckets (pointer to monoton, plus stragglers) are read.
"""

from __future__ import annotations

from cassieq.engine.context import EngineContext
from cassieq.model import Counts, InvisibilityState, QueueDefinition, Statistics

MAX_LIVE_BUCKETS = 100_000


class StatisticsReader:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx

    async def read(self, queue: QueueDefinition) -> Statistics:
        return (await self.read_with_state(queue))[0]

    async def read_with_state(
        self, queue: QueueDefinition
    ) -> tuple[Statistics, InvisibilityState, int]:
        """The statistics, with the invisibility state and the monoton they were read at."""
        # The pointer may pass (and drop) a bucket between reading its state and reading
        # the buckets: then the bucket is in neither. Read again until the state held.
        state = await self._ctx.store.read_invisibility(queue.id)
        for _ in range(8):
            used = state
            stats, monoton = await self._read(queue, used)
            state = await self._ctx.store.read_invisibility(queue.id)
            if state.rev == used.rev:
                break
        return stats, used, monoton

    async def _read(
        self, queue: QueueDefinition, state: InvisibilityState
    ) -> tuple[Statistics, int]:
        store, qid = self._ctx.store, queue.id
        monoton = await store.read_monoton(qid)
        now = self._ctx.clock.now()
        # One past the monoton's bucket: a repair copy may sit there.
        top = min(queue.bucket_of(monoton) + 1, state.bucket + MAX_LIVE_BUCKETS)
        buckets = [*sorted(state.stragglers), *range(state.bucket, top + 1)]
        total, in_flight = state.summary, 0
        for bucket in buckets:
            snap = await store.read_bucket(qid, bucket)
            total = total + Counts.of(snap.messages)
            in_flight += sum(
                1
                for m in snap.messages
                if m.republished_to is None
                and not m.acked
                and m.delivery_count > 0
                and m.next_visible_on > now
            )
        stats = Statistics(
            size=total.published - total.acked - total.dead_lettered,
            in_flight=in_flight,
            published=total.published,
            delivered=total.delivered,
            acked=total.acked,
            dead_lettered=total.dead_lettered,
        )
        return stats, monoton
