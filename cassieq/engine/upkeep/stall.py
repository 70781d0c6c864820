"""Noticing a pointer that stopped behind the reader, and saying so once a minute.

The invisibility and repair pointers trail the reader by a bucket or so. When one of
them stays put for longer than the finalize wait plus a minute while the reader has
moved on, redelivery or repair of everything behind it has stopped: the one signal an
operator needs, logged with the queue, the bucket and what holds it. Checked from the
repair loop of the server that holds the queue's repair lease, at most once a minute
per queue (two reads), so a healthy queue costs nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from cassieq.engine.context import EngineContext
from cassieq.model import QueueDefinition, QueueId

CHECK_EVERY_MS = 60_000
GRACE_MS = 60_000


@dataclass
class _Seen:
    bucket: int
    since: int


class StallWatch:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx
        self._seen: dict[tuple[QueueId, str], _Seen] = {}
        self._next_check: dict[QueueId, int] = {}

    async def check(self, queue: QueueDefinition, repair: int, repair_blocker: str) -> None:
        """Called after each repair run with where it stopped and why."""
        now = self._ctx.clock.now()
        if now < self._next_check.get(queue.id, 0):
            return
        self._next_check[queue.id] = now + CHECK_EVERY_MS
        store = self._ctx.store
        reader = await store.read_pointer(queue.id, "reader")
        invisibility = (await store.read_invisibility(queue.id)).bucket
        limit = queue.options.finalize_seconds * 1000 + GRACE_MS
        if self._blocked(queue.id, "repair", repair, reader, now, limit):
            self._warn(queue, "repair", repair, reader, repair_blocker, now)
        if self._blocked(queue.id, "invisibility", invisibility, reader, now, limit):
            blocker = await self._invisibility_blocker(queue, invisibility)
            self._warn(queue, "invisibility", invisibility, reader, blocker, now)

    def _blocked(
        self, queue: QueueId, pointer: str, bucket: int, reader: int, now: int, limit: int
    ) -> bool:
        seen = self._seen.get((queue, pointer))
        if seen is None or seen.bucket != bucket:
            self._seen[(queue, pointer)] = _Seen(bucket, now)
            return False
        # One bucket behind is the normal state (the reader's own bucket is not sealed).
        return reader > bucket + 1 and now - seen.since > limit

    def _warn(
        self, queue: QueueDefinition, pointer: str, bucket: int, reader: int, blocker: str, now: int
    ) -> None:
        seen = self._seen[(queue.id, pointer)]
        self._ctx.log.warning(
            "queue_pointer_stalled",
            queue=str(queue.id),
            pointer=pointer,
            bucket=bucket,
            reader=reader,
            behind=reader - bucket,
            stalled_for_s=(now - seen.since) // 1000,
            blocker=blocker,
        )

    async def _invisibility_blocker(self, queue: QueueDefinition, bucket: int) -> str:
        snap = await self._ctx.store.read_bucket(queue.id, bucket)
        if snap.sealed_at is None:
            return "bucket not sealed"
        unacked = [m for m in snap.messages if not m.acked and m.republished_to is None]
        if unacked:
            due = min(m.next_visible_on for m in unacked)
            return f"{len(unacked)} unacked message(s), first visible again at {due}"
        return "nothing left to redeliver there; the next get passes it"
