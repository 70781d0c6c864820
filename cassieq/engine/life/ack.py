"""Ack and update: changes made by the holder of a pop receipt, one or many at a time.

Many at a time (v2 batches): the receipts are grouped by bucket, and each bucket's
share is one conditional batch on its partition (buckets side by side); each entry is
decided on its own, so a stale receipt never holds back the rest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import msgspec

from cassieq.engine import policy
from cassieq.engine.context import EngineContext
from cassieq.engine.errors import EngineError, InvalidArgument, StaleReceipt, Unsettled
from cassieq.engine.hints import BucketHints
from cassieq.engine.life.bucket_groups import BucketGroups
from cassieq.engine.life.fifo import Fifo
from cassieq.engine.life.redeliver import InvisibilitySide
from cassieq.model import MessageRow, PopReceipt, QueueDefinition, QueueId, VisibilityChange
from cassieq.store.base import StoreError
from cassieq.store.batches import AckEntry
from cassieq.tokens import new_token

STALE = "the receipt is stale: acked, redelivered or updated since"
OLD_VERSION = "the receipt belongs to a deleted version of this queue"
REPEATED = "the batch names this receipt more than once: only its first entry counts"

R = TypeVar("R")


class Acker:
    def __init__(
        self, ctx: EngineContext, invisibility: InvisibilitySide, hints: BucketHints
    ) -> None:
        self._ctx = ctx
        self._invisibility = invisibility
        self._hints = hints
        # Acks of one bucket that come while one is being written go together (v1's one
        # at a time, v2's batches of different clients alike).
        self._groups: BucketGroups[AckEntry] = BucketGroups(lambda entry: entry[0])
        # Told when a changed lease now ends (long polling wakes a waiter then).
        self.on_leased: Callable[[QueueId, int], None] | None = None
        # FIFO queues: told of this server's acks (their groups' entries go at once).
        self.fifo: Fifo | None = None

    async def ack(self, queue: QueueDefinition, receipt: PopReceipt) -> None:
        if receipt.queue_version != queue.version:
            raise StaleReceipt(OLD_VERSION)
        # One conditional update, no read: the receipt names the version and tag it holds.
        bucket = queue.bucket_of(receipt.monoton)
        entry = (receipt.monoton, receipt.version, receipt.tag)
        (acked,) = await self._acks(queue.id, bucket, [entry], alone=True)
        if not acked:
            raise StaleReceipt(STALE)
        self._invisibility.note_acked(queue.id, bucket, receipt.monoton, receipt.version)
        if queue.options.fifo and self.fifo is not None:
            await self.fifo.acked(queue, [receipt.monoton])

    async def ack_many(
        self, queue: QueueDefinition, receipts: list[PopReceipt]
    ) -> list[EngineError | None]:
        """Per receipt, in order: None (acked) or why not."""

        async def bucket_acks(bucket: int, held: list[PopReceipt]) -> list[EngineError | None]:
            entries = [(r.monoton, r.version, r.tag) for r in held]
            acked = await self._acks(queue.id, bucket, entries)
            for receipt, done in zip(held, acked, strict=True):
                if done:
                    self._invisibility.note_acked(
                        queue.id, bucket, receipt.monoton, receipt.version
                    )
            if queue.options.fifo and self.fifo is not None:
                await self.fifo.acked(
                    queue, [r.monoton for r, done in zip(held, acked, strict=True) if done]
                )
            return [None if done else StaleReceipt(STALE) for done in acked]

        return await per_bucket(queue, receipts, lambda r: r, bucket_acks)

    async def _acks(
        self, queue: QueueId, bucket: int, entries: list[AckEntry], *, alone: bool = False
    ) -> list[bool]:
        """Ack the entries, with those of other acks of the bucket that come meanwhile.
        ``alone``: a single ack, sent as the plain conditional update when nothing joined it."""
        store = self._ctx.store

        async def write(group: list[AckEntry]) -> list[bool]:
            now = self._ctx.clock.now()
            if alone and len(group) == 1:
                monoton, version, tag = group[0]
                return [await store.ack_message(queue, bucket, monoton, version, tag, now)]
            return await store.ack_messages(queue, bucket, group, now)

        return await self._groups.run((queue, bucket), entries, write)

    async def update(
        self,
        queue: QueueDefinition,
        receipt: PopReceipt,
        message: str | None,
        invisibility_ms: int,
    ) -> PopReceipt:
        if invisibility_ms < 0:
            raise InvalidArgument("newInvisibilitySeconds must be >= 0")
        change = VisibilityChange(receipt=receipt, invisibility_ms=invisibility_ms, body=message)
        (outcome,) = await self.change_many(queue, [change])
        if isinstance(outcome, EngineError):
            raise outcome
        return outcome

    async def change_many(
        self, queue: QueueDefinition, changes: list[VisibilityChange]
    ) -> list[PopReceipt | EngineError]:
        """Per entry, in order: the new receipt (the old one is stale from now), or why not."""
        # A new body over the queue's limit refuses the whole request, before any change.
        for index, change in enumerate(changes):
            if change.body is not None:
                policy.check_body(queue.options, change.body, index)

        def invalid(change: VisibilityChange) -> EngineError | None:
            if change.invisibility_ms is not None and change.invisibility_ms < 0:
                return InvalidArgument("the new invisibility must be >= 0")
            return None

        return await per_bucket(
            queue,
            changes,
            lambda c: c.receipt,
            lambda bucket, held: self._change_in_bucket(queue, bucket, held),
            invalid,
        )

    async def _change_in_bucket(
        self, queue: QueueDefinition, bucket: int, held: list[VisibilityChange]
    ) -> list[PopReceipt | EngineError]:
        """One read of the rows the receipts name, then one conditional batch."""
        rows = await self._rows(queue, bucket, [c.receipt.monoton for c in held])
        now = self._ctx.clock.now()
        changed: dict[int, tuple[MessageRow, MessageRow]] = {}
        for change in held:
            row = rows.get(change.receipt.monoton)
            if row is not None and _holds(row, change.receipt):
                changed[row.monoton] = (row, _changed(row, change, now))
        applied = await self._ctx.store.cas_messages(
            queue.id, bucket, [(row.version, new) for row, new in changed.values()]
        )
        won = {m: pair for (m, pair), done in zip(changed.items(), applied, strict=True) if done}
        if won:
            self._invisibility.note_changed(queue.id, bucket)
            # The reader's snapshot of the bucket shows these rows as they were (leased):
            # a full one is believed without a read, and the reader would leave the bucket
            # without seeing them visible again. A change to 0 waited up to the snapshot's
            # age (a second) before this server delivered it.
            self._hints.drop(queue.id, bucket)
            if self.on_leased is not None:
                self.on_leased(queue.id, min(new.next_visible_on for _, new in won.values()))
        # A delivery behind the pointer that now ends earlier: its straggler is due then.
        lowered = [
            new.next_visible_on
            for row, new in won.values()
            if new.next_visible_on < row.next_visible_on
        ]
        if lowered:
            await self._invisibility.lower_due(queue, bucket, min(lowered))
        return [
            _receipt(queue, won[c.receipt.monoton][1])
            if c.receipt.monoton in won
            else StaleReceipt(STALE)
            for c in held
        ]

    async def current(
        self, queue: QueueDefinition, receipt: PopReceipt, deliveries: int
    ) -> PopReceipt | None:
        """The receipt, as it is now, of the delivery ``receipt`` was given for: after
        changes made through that delivery's later receipts (visibility changes keep the
        delivery and bump the version), as long as it is still the ``deliveries``-th one.
        None when that delivery is over: acked, delivered again, or the row is gone.

        SQS keeps a receipt handle valid through ChangeMessageVisibility, while here every
        change bumps the version the receipt names; the SQS endpoint follows with this."""
        if receipt.queue_version != queue.version:
            return None
        bucket = queue.bucket_of(receipt.monoton)
        row = await self._ctx.store.read_message(queue.id, bucket, receipt.monoton)
        if (
            row is None
            or row.acked
            or row.tag != receipt.tag
            or row.delivery_count != deliveries
            or row.republished_to is not None
        ):
            return None
        return _receipt(queue, row)

    async def _rows(
        self, queue: QueueDefinition, bucket: int, monotons: list[int]
    ) -> dict[int, MessageRow]:
        store = self._ctx.store
        if len(monotons) == 1:
            row = await store.read_message(queue.id, bucket, monotons[0])
            return {} if row is None else {row.monoton: row}
        wanted = set(monotons)
        snap = await store.read_bucket(queue.id, bucket)
        return {m.monoton: m for m in snap.messages if m.monoton in wanted}


def _holds(row: MessageRow, receipt: PopReceipt) -> bool:
    """Whether the row is still the delivery the receipt was given for."""
    return row.tag == receipt.tag and row.version == receipt.version and not row.acked


def _receipt(queue: QueueDefinition, row: MessageRow) -> PopReceipt:
    return PopReceipt(queue.version, row.monoton, row.version, row.tag, queue.partition)


def _changed(row: MessageRow, change: VisibilityChange, now: int) -> MessageRow:
    return msgspec.structs.replace(
        row,
        version=row.version + 1,
        message=row.message if change.body is None else change.body,
        # None: the lease stays as it is (one already over stays over: visible now).
        next_visible_on=row.next_visible_on
        if change.invisibility_ms is None
        else now + change.invisibility_ms,
        updated_at=now,
        change=new_token(),
    )


E = TypeVar("E")


async def per_bucket(
    queue: QueueDefinition,
    entries: Sequence[E],
    receipt_of: Callable[[E], PopReceipt],
    run_bucket: Callable[[int, list[E]], Awaitable[list[R]]],
    invalid: Callable[[E], EngineError | None] = lambda _: None,
    *,
    version: tuple[int, str] | None = None,
) -> list[R | EngineError]:
    """Run ``run_bucket`` on each bucket's entries (buckets side by side); the outcomes in
    entry order. An entry that is ``invalid``, whose receipt is of another queue version,
    or that repeats an earlier entry's receipt, is answered without a store call.
    ``version``: the version receipts must name and the error's text when they do not (a
    shared subscription's generation; default: the queue's version).

    A conditional batch changes a row once, so entries naming the same message with
    different receipts (an old delivery's and the current one's) go in separate rounds,
    one after the other, as if sent one after the other."""
    expected, stale = version or (queue.version, OLD_VERSION)
    outcomes: dict[int, R | EngineError] = {}
    rounds: list[dict[int, list[int]]] = []
    seen: dict[int, list[tuple[int, str]]] = {}
    for i, entry in enumerate(entries):
        receipt = receipt_of(entry)
        held = seen.setdefault(receipt.monoton, [])
        if (error := invalid(entry)) is not None:
            outcomes[i] = error
        elif receipt.queue_version != expected:
            outcomes[i] = StaleReceipt(stale)
        elif (receipt.version, receipt.tag) in held:
            outcomes[i] = StaleReceipt(REPEATED)
        else:
            if len(rounds) == len(held):
                rounds.append({})
            rounds[len(held)].setdefault(queue.bucket_of(receipt.monoton), []).append(i)
            held.append((receipt.version, receipt.tag))

    async def run(bucket: int, indexes: list[int]) -> None:
        try:
            answers: list[R | EngineError] = list(
                await run_bucket(bucket, [entries[i] for i in indexes])
            )
        except StoreError as exc:
            # This bucket's conditional batch could not be settled (nor read back): its
            # entries are answered so, the other buckets' outcomes still reported.
            answers = [Unsettled(f"the outcome could not be settled now: {exc}")] * len(indexes)
        outcomes.update(zip(indexes, answers, strict=True))

    for groups in rounds:
        await asyncio.gather(*(run(b, idx) for b, idx in groups.items()))
    return [outcomes[i] for i in range(len(entries))]
