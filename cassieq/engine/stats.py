"""Queue statistics without re-reading history.

Finished buckets are summed in the invisibility state as the pointer leaves them; only
the live buckets are read: the stragglers, the invisibility pointer's bucket up to the
reader's, and the reader's onwards up to the monoton. The last part is the backlog, which
can be any length: it is read up to ``AHEAD_EXACT_BUCKETS`` buckets past the reader, and
beyond that counted from the monoton (buckets no reader has reached hold only messages
never delivered: each monoton taken there is one published message, a hole left by a
dead writer counted as one too). So a statistics call costs at most a bounded number
of bucket reads, however deep the backlog.
"""

from __future__ import annotations

import asyncio

from cassieq.engine.context import EngineContext
from cassieq.model import Counts, InvisibilityState, MessageRow, QueueDefinition, Statistics

MAX_LIVE_BUCKETS = 100_000
AHEAD_EXACT_BUCKETS = 64
READS_AT_ONCE = 16


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
        store, qid, size = self._ctx.store, queue.id, queue.options.bucket_size
        monoton, reader = await asyncio.gather(
            store.read_monoton(qid), store.read_pointer(qid, "reader")
        )
        now = self._ctx.clock.now()
        # One past the monoton's bucket: a repair copy may sit there.
        top = min(queue.bucket_of(monoton) + 1, state.bucket + MAX_LIVE_BUCKETS)
        last_read = min(top, max(reader, state.bucket) + AHEAD_EXACT_BUCKETS)
        buckets = [*sorted(state.stragglers), *range(state.bucket, last_read + 1)]
        # Beyond last_read: never reached by a reader, so every message there is unread.
        unread = max(0, monoton - (last_read + 1) * size)
        total = state.summary + Counts(published=unread)
        live = _Live(now, queue.options.max_delivery_count, queue.options.retention_ms)
        for start in range(0, len(buckets), READS_AT_ONCE):
            snaps = await asyncio.gather(
                *(store.read_bucket(qid, b) for b in buckets[start : start + READS_AT_ONCE])
            )
            for snap in snaps:
                total = total + Counts.of(snap.messages)
                for m in snap.messages:
                    live.add(m)
        # Purged messages count as expired (api-v2.md has no purged statistic).
        expired = total.expired + total.purged + live.expired
        oldest = None if live.oldest_created is None else (now - live.oldest_created) / 1000
        stats = Statistics(
            size=total.published - total.acked - total.dead_lettered - expired,
            in_flight=live.in_flight,
            published=total.published,
            delivered=total.delivered,
            acked=total.acked,
            dead_lettered=total.dead_lettered,
            dead_letter_pending=live.dead_letter_pending,
            # Beyond the buckets read, every message is unread: visible, as far as this
            # bounded read can tell (a delay or the retention is not looked at there).
            visible=live.visible + unread,
            delayed=live.delayed,
            expired=expired,
            oldest_message_age_s=oldest,
        )
        return stats, monoton


class _Live:
    """What the live rows of the buckets read say about the messages still in the queue."""

    def __init__(self, now: int, max_deliveries: int, retention_ms: int) -> None:
        self.now, self.max_deliveries, self.retention_ms = now, max_deliveries, retention_ms
        self.in_flight = self.dead_letter_pending = self.visible = self.delayed = 0
        # Past the retention and not yet met by a reader (not yet marked): already expired.
        self.expired = 0
        self.oldest_created: int | None = None

    def add(self, m: MessageRow) -> None:
        if m.republished_to is not None or m.acked:
            return
        now = self.now
        if m.past_retention(now, self.retention_ms):
            self.expired += 1
            return
        if self.oldest_created is None or m.created_at < self.oldest_created:
            self.oldest_created = m.created_at
        if _dead_letter_pending(m, self.max_deliveries, now):
            self.dead_letter_pending += 1
        elif m.next_visible_on > now:
            if m.delivery_count > 0:
                self.in_flight += 1
            else:
                self.delayed += 1
        else:
            self.visible += 1


def _dead_letter_pending(m: MessageRow, max_deliveries: int, now: int) -> bool:
    """Past its deliveries and not in a delivery's lease: held, being moved, or due for its
    move at the next get."""
    if m.dead_letter_pending:
        return True
    return m.delivery_count >= max_deliveries and m.next_visible_on <= now
