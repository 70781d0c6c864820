"""Snapshots of reader buckets this server read a moment ago, with its own puts added
(or made of its own puts, when it has not read the bucket).

A get that finds a message it has not tried in a recent snapshot goes straight to the
compare-and-set that consumes it, without reading the bucket again; the LWT confirms the
message is still there and still at that version. A snapshot that shows nothing to take
is believed only of a full bucket whose visible messages this server is taking or took (a
take that fails leaves its message to the invisibility side, as when the bucket is read);
of any other bucket it is read again before the reader decides it is exhausted.
"""

from __future__ import annotations

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.recent import Recent
from cassieq.model import BucketState, MessageRow, QueueId

HINT_MAX_AGE_MS = 1_000


class BucketHints:
    def __init__(self, ctx: EngineContext) -> None:
        self._snaps: Recent[tuple[QueueId, int], BucketState] = Recent(
            ctx, HINT_MAX_AGE_MS, ctx.tuning.bucket_cache_entries
        )

    def get(self, queue: QueueId, bucket: int) -> BucketState | None:
        return self._snaps.get((queue, bucket))

    def put(self, queue: QueueId, snap: BucketState) -> None:
        self._snaps.put((queue, snap.bucket), snap)

    def drop(self, queue: QueueId, bucket: int) -> None:
        self._snaps.drop((queue, bucket))

    def add_written(self, queue: QueueId, bucket: int, rows: list[MessageRow]) -> None:
        """This server wrote ``rows`` into the bucket: add them to its snapshot, or make
        them its snapshot.

        Made of this server's writes alone, a snapshot is a hint like any other: a take
        confirms each row, and one that shows nothing to take is read again unless it is
        full. A full one is the bucket as written (each monoton is written only by the
        writer that took it, and this server wrote them all), so the reader of a queue fed
        by this server no longer reads each bucket once more to learn what it wrote."""
        snap = self._snaps.get((queue, bucket))
        if snap is None:
            ordered = tuple(sorted(rows, key=lambda row: row.monoton))
            made = BucketState(bucket=bucket, sealed_at=None, finalized_at=None, messages=ordered)
            self._snaps.put((queue, bucket), made)
            return
        merged = {m.monoton: m for m in snap.messages}
        for row in rows:
            merged.setdefault(row.monoton, row)
        messages = tuple(merged[k] for k in sorted(merged))
        # Keeps the time of the read: the rows of other servers are no fresher for it.
        self._snaps.replace((queue, bucket), msgspec.structs.replace(snap, messages=messages))
