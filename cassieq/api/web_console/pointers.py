"""The bucket-and-pointer view of one queue: where the reader, invisibility and repair
pointers are, the buckets between them, and whether a pointer has stalled.

A pointer one bucket behind the reader is the normal state (the reader's bucket is not
sealed yet). A pointer is shown as stalled, as the engine's StallWatch logs it, when it is
more than one bucket behind the reader and the bucket it waits on was sealed longer ago
than the queue's finalize wait plus a minute: redelivery (invisibility) or repair of
everything behind it has stopped.

A queue of many partitions (issue 35) has a set of pointers per partition: the page shows
one row per partition (its pointers, lags, next monoton and whether one stalled), and the
bucket table of partition 0.

A queue's subscriptions (issue 36) keep their own position in it, each a row beside the
queue's pointers: its mode and start, its committed position (opaque text, shortened on
the page) and the monotons it stands at in each partition (a shared one: its cursor, the
next message never delivered, and its done position, the first not finished), its lag
(messages after the position; shared: not yet finished) and the age of the first of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from cassieq.engine import QueueEngine
from cassieq.engine.replay import positions
from cassieq.engine.upkeep.stall import GRACE_MS
from cassieq.model import BucketState, QueueDefinition

# Buckets read for one page: the oldest few behind and the newest around the reader.
MAX_BUCKETS = 24
HEAD_BUCKETS = 8
# A position longer than this shows its head and tail (the whole of it in the title).
POSITION_SHOWN = 20


@dataclass(frozen=True)
class Pointer:
    name: str
    bucket: int
    lag: int  # buckets behind the reader
    stalled: bool


@dataclass(frozen=True)
class BucketRow:
    bucket: int
    messages: int
    acked: int
    sealed_at: int | None
    finalized_at: int | None
    pointers: tuple[str, ...]


@dataclass(frozen=True)
class PointerView:
    reader: int
    monoton: int
    pointers: tuple[Pointer, ...]
    buckets: tuple[BucketRow, ...]
    skipped: int  # buckets between the head and the tail not shown

    @property
    def stalled(self) -> bool:
        return any(p.stalled for p in self.pointers)


@dataclass(frozen=True)
class PartitionRow:
    partition: int
    reader: int
    invisibility: Pointer
    repair: Pointer
    monoton: int  # the partition's next monoton

    @property
    def stalled(self) -> bool:
        return self.invisibility.stalled or self.repair.stalled


@dataclass(frozen=True)
class SubscriptionRow:
    name: str
    mode: str
    start: str
    position: str
    lag: int  # messages after the committed position
    oldest_age_s: float | None  # of the first of them still stored; None: none
    # Per partition, the monotons its pointers stand at: an ordered one's position; a shared
    # one's cursor (next never delivered) and done (first not finished), and its generation.
    cursor: tuple[int, ...] = ()
    done: tuple[int, ...] = ()
    generation: int = 0

    @property
    def pointers(self) -> str:
        """The monotons, partition by partition ("p0 12 · p1 30"; shared: "cursor / done")."""
        if not self.done:
            return " · ".join(f"p{p} {m}" for p, m in enumerate(self.cursor))
        return " · ".join(
            f"p{p} {c} / {d}" for p, (c, d) in enumerate(zip(self.cursor, self.done, strict=True))
        )

    @property
    def short_position(self) -> str:
        if len(self.position) <= POSITION_SHOWN:
            return self.position
        return f"{self.position[:12]}…{self.position[-6:]}"


async def subscription_rows(engine: QueueEngine, queue: QueueDefinition) -> list[SubscriptionRow]:
    """A row per subscription of ``queue``, in the order the engine lists them."""
    found = await engine.subscriptions.list(queue.account, queue.name)
    now, count = engine.now(), queue.options.stored_partitions
    return [
        SubscriptionRow(
            name=info.definition.name,
            mode=info.definition.mode,
            start=info.definition.start,
            position=info.definition.position,
            cursor=tuple(positions.decode(info.definition.position, count)),
            done=tuple(positions.decode(info.definition.done, count))
            if info.definition.mode == "shared"
            else (),
            generation=info.definition.generation,
            lag=info.lag,
            oldest_age_s=None
            if info.oldest_unread_at is None
            else max(0, now - info.oldest_unread_at) / 1000,
        )
        for info in found
    ]


async def partition_rows(engine: QueueEngine, queue: QueueDefinition) -> list[PartitionRow]:
    """A row per partition of ``queue``, in partition order."""
    views = queue.partition_views()
    seen = await engine.inspect_partition_pointers(queue)
    now = engine.now()
    limit = queue.options.finalize_seconds * 1000 + GRACE_MS
    rows = []
    for view, p in zip(views, seen, strict=True):
        # The buckets the two pointers wait on: sealed how long ago says stalled or not.
        waits = await engine.inspect_buckets(view, [p.invisibility.bucket, p.repair])
        pointers = [
            Pointer(
                name, state.bucket, p.reader - state.bucket, _stalled(state, p.reader, now, limit)
            )
            for name, state in zip(("invisibility", "repair"), waits, strict=True)
        ]
        rows.append(PartitionRow(view.partition, p.reader, pointers[0], pointers[1], p.monoton))
    return rows


async def pointer_view(engine: QueueEngine, queue: QueueDefinition) -> PointerView:
    seen = await engine.inspect_pointers(queue)
    reader, repair, invisibility, monoton = (
        seen.reader,
        seen.repair,
        seen.invisibility,
        seen.monoton,
    )
    at = {"invisibility": invisibility.bucket, "repair": repair}
    first = min(at.values())
    last = max(reader, queue.bucket_of(max(monoton - 1, 0)))
    numbers = list(range(first, last + 1))
    skipped = 0
    if len(numbers) > MAX_BUCKETS:
        skipped = len(numbers) - MAX_BUCKETS
        numbers = numbers[:HEAD_BUCKETS] + numbers[HEAD_BUCKETS + skipped :]
    states = dict(zip(numbers, await engine.inspect_buckets(queue, numbers), strict=True))
    now = engine.now()
    limit = queue.options.finalize_seconds * 1000 + GRACE_MS
    pointers = [Pointer("reader", reader, 0, False)]
    for name, bucket in at.items():
        state = states.get(bucket) or await engine.inspect_bucket(queue, bucket)
        pointers.append(Pointer(name, bucket, reader - bucket, _stalled(state, reader, now, limit)))
    marks = {b: tuple(p.name for p in pointers if p.bucket == b) for b in numbers}
    rows = tuple(_row(states[b], marks[b]) for b in numbers)
    return PointerView(reader, monoton, tuple(pointers), rows, skipped)


def _stalled(state: BucketState, reader: int, now: int, limit: int) -> bool:
    if reader <= state.bucket + 1 or state.sealed_at is None:
        return False
    return now - state.sealed_at > limit


def _row(state: BucketState, pointers: tuple[str, ...]) -> BucketRow:
    return BucketRow(
        bucket=state.bucket,
        messages=len(state.messages),
        acked=sum(1 for m in state.messages if m.acked),
        sealed_at=state.sealed_at,
        finalized_at=state.finalized_at,
        pointers=pointers,
    )
