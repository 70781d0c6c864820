"""Reading one partition of a queue by position: its rows in monoton order, none skipped.

A reader by position returns the rows after its position in monoton order and stops at
the first *hole* (a monoton taken whose row is not there) that may still be filled: a
writer can still land its row while the bucket is not finalized (writes into a finalized
bucket are refused: the writer takes a new monoton). So every message is read in place,
exactly once, and a repair copy of a late write (``republished_from``) is skipped: its
original was read where it landed. A hole in a finalized bucket is a hole for good.

A hole that stays (its writer died) would hold the reader for good if nothing finalized
the bucket; the queue's own repair does once its reader has left the bucket, but a queue
read only through subscriptions has no reader of its own. So a reader that has found the
same hole for the queue's ``finalize_seconds`` (the wait repair gives late writers), in a
bucket whose monotons are all taken, finalizes the bucket itself: the late writer, if
there is one, is refused and writes its message at a new monoton, which is read there.
"""

from __future__ import annotations

from cassieq.engine.context import EngineContext
from cassieq.model import BucketState, MessageRow, QueueDefinition, QueueId, message_bytes

# Holes a server has found, with when it first found each: (partition id, monoton) -> ms.
_MAX_REMEMBERED_HOLES = 10_000
# The most message bytes (bodies and attributes) one read gathers (at least one message,
# whatever its size): a read of 1,000 messages of 1 MiB would hold 1 GiB in the server.
MAX_READ_BYTES = 8 * 1024 * 1024


class ReadBudget:
    """What one read (over every partition) may still gather, in bytes."""

    def __init__(self, limit: int = MAX_READ_BYTES) -> None:
        self.left = limit
        self.messages = 0

    def take(self, row: MessageRow) -> bool:
        """Count ``row`` in if it fits (the first message always does)."""
        size = message_bytes(row.message, row.attributes)
        if self.messages and size > self.left:
            self.left = 0
            return False
        self.left -= size
        self.messages += 1
        return True


class OrderedReader:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx
        self._holes: dict[tuple[QueueId, int], int] = {}

    async def read(
        self,
        view: QueueDefinition,
        start: int,
        limit: int,
        budget: ReadBudget | None = None,
        *,
        top: int | None = None,
        expired: list[MessageRow] | None = None,
    ) -> tuple[list[MessageRow], int]:
        """Up to ``limit`` rows of partition ``view`` from monoton ``start`` on, in order (and
        within ``budget``'s bytes), and the monoton to read from next (past every row and
        hole for good passed, and no further than the last row gathered). ``top``: the
        partition's monoton when the caller has just read it; ``expired``: gets the rows
        passed because they outlived retention."""
        store, size = self._ctx.store, view.options.bucket_size
        budget = budget or ReadBudget()
        if top is None:
            top = await store.read_monoton(view.id)
        got: list[MessageRow] = []
        at = start
        while len(got) < limit and at < top and budget.left > 0:
            snap = await store.read_bucket(view.id, view.bucket_of(at))
            end = min((snap.bucket + 1) * size, top)
            at, blocked = self._walk(view, snap, at, end, limit, got, budget, expired)
            if not blocked:
                continue
            if not await self._close_if_abandoned(view, snap, at, top):
                break  # a message still being written: the next read starts at it
        return got, at

    def _walk(
        self,
        view: QueueDefinition,
        snap: BucketState,
        at: int,
        end: int,
        limit: int,
        got: list[MessageRow],
        budget: ReadBudget,
        expired: list[MessageRow] | None,
    ) -> tuple[int, bool]:
        """Collect ``snap``'s rows from ``at`` up to ``end``: (next monoton, blocked at a
        hole that may still be filled, or at a row the budget has no room for)."""
        now = self._ctx.clock.now()
        retention_ms = view.options.message_retention_seconds * 1000
        rows = {row.monoton: row for row in snap.messages}
        while at < end and len(got) < limit:
            row = rows.get(at)
            if row is None:
                if not snap.finalized:
                    return at, True
            elif row.republished_from is None:
                if row.created_at + retention_ms <= now:
                    # Outlived retention: never read (the queue's consumers never get it).
                    if expired is not None:
                        expired.append(row)
                elif not budget.take(row):
                    return at, False  # the next read starts at it
                else:
                    got.append(row)
            at += 1
        return at, False

    async def _close_if_abandoned(
        self, view: QueueDefinition, snap: BucketState, hole: int, top: int
    ) -> bool:
        """Finalize ``snap``'s bucket if ``hole`` was found at least finalize_seconds ago
        and every monoton of the bucket is taken; True when the bucket is finalized now
        (the caller reads it again)."""
        now = self._ctx.clock.now()
        key = (view.id, hole)
        first = self._holes.get(key)
        if first is None:
            if len(self._holes) >= _MAX_REMEMBERED_HOLES:
                self._holes.clear()  # forgetting only makes a hole wait once more
            self._holes[key] = now
            return False
        full = (snap.bucket + 1) * view.options.bucket_size <= top
        if not full or now < first + view.options.finalize_seconds * 1000:
            return False
        await self._ctx.store.finalize_bucket(view.id, snap.bucket, now)
        # Another read (of this subscription or another on this server) may have finalized
        # the same bucket while this one waited on the store, and forgotten the hole already.
        self._holes.pop(key, None)
        self._ctx.log.info(
            "bucket_finalized_by_reader", queue=str(view.id), bucket=snap.bucket, hole=hole
        )
        return True

    async def first_at_or_after(self, view: QueueDefinition, start: int, time_ms: int) -> int:
        """The monoton of the first message (in monoton order, from ``start``) sent at or
        after ``time_ms``; the partition's monoton when there is none."""
        store, size = self._ctx.store, view.options.bucket_size
        top = await store.read_monoton(view.id)
        lo, hi = start // size, max(start // size, (top - 1) // size) + 1
        # Send times grow with monotons (one clock per put, taken before the monoton):
        # find the first bucket holding a message sent at or after the time, then its row.
        while lo < hi:
            mid = (lo + hi) // 2
            newest = await self._newest_from(view, mid, hi)
            if newest is None or newest < time_ms:
                lo = mid + 1
            else:
                hi = mid
        for bucket in range(lo, max(lo, (top - 1) // size) + 1):
            snap = await store.read_bucket(view.id, bucket)
            for row in sorted(snap.messages, key=lambda r: r.monoton):
                original = row.republished_from is None
                if original and row.monoton >= start and row.created_at >= time_ms:
                    return row.monoton
        return top

    async def _newest_from(self, view: QueueDefinition, bucket: int, end: int) -> int | None:
        """The latest send time in ``bucket``, or in the first bucket after it (before
        ``end``) that holds a message (a bucket of holes says nothing)."""
        for b in range(bucket, end):
            snap = await self._ctx.store.read_bucket(view.id, b)
            times = [r.created_at for r in snap.messages if r.republished_from is None]
            if times:
                return max(times)
        return None
