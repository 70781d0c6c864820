"""Consuming messages (the LWT that makes deliveries: one conditional batch on the
bucket partition for all taken at once) and dead-lettering.

Shared by the reader (its bucket) and the invisibility side (buckets behind it).
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections import OrderedDict
from dataclasses import dataclass, field

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import Contention, QueueNotFound
from cassieq.engine.publisher import Publisher, new_message
from cassieq.engine.queues import QueueDirectory
from cassieq.engine.recent import Recent
from cassieq.engine.retention import expiring
from cassieq.model import Delivery, MessageRow, PopReceipt, QueueDefinition, QueueId
from cassieq.tokens import new_token

TAKEN_CACHE_SIZE = 65_536
# How long the rows this server's reader wrote into a bucket are kept for the bucket's seal
# (ReaderWrites); the invisibility side uses them only while younger than its quiet entries.
READER_WRITES_MAX_MS = 5_000
# Buckets whose reader writes are kept: a few per busy queue are being emptied at a time.
READER_WRITES_BUCKETS = 1_024
DLQ_WARNING_INTERVAL_MS = 60_000


@dataclass(slots=True)
class ReaderWrites:
    """The rows of a bucket as this server's reader's writes left them (monoton -> the
    latest such row, without its body), since ``since`` (the first of those writes)."""

    since: int
    rows: dict[int, MessageRow] = field(default_factory=dict)


# (account, queue, queue version, monoton)
_TakenKey = tuple[str, str, int, int]


def _taken_key(queue: QueueDefinition, monoton: int) -> _TakenKey:
    return (queue.account, queue.name, queue.version, monoton)


class Deliverer:
    def __init__(self, ctx: EngineContext, publisher: Publisher, queues: QueueDirectory) -> None:
        self._ctx = ctx
        self._publisher = publisher
        self._queues = queues
        # Readers of this server never race each other for one message: each skips the
        # messages another is trying right now, and the versions this server has already
        # moved past (a stale snapshot would only spend an LWT to lose). Only a hint: the
        # LWT still decides every delivery.
        self._trying: dict[tuple[QueueId, int], asyncio.Future[None]] = {}
        # Keyed by plain tuples of text and numbers: the garbage collector stops tracking
        # such a tuple, while one holding a QueueId (a GC type) stays tracked, and each
        # full collection walked all 65,536 keys.
        self._taken: OrderedDict[_TakenKey, int] = OrderedDict()
        # (queue, bucket) -> what the writes of this server's reader (its takes, conditioned
        # on the bucket not being sealed) left of the rows.
        self._reader_writes: Recent[tuple[QueueId, int], ReaderWrites] = Recent(
            ctx, READER_WRITES_MAX_MS, READER_WRITES_BUCKETS
        )
        # Queues whose missing dead-letter queue was logged in the last minute.
        self._missing_warned: Recent[QueueId, bool] = Recent(ctx, DLQ_WARNING_INTERVAL_MS)

    async def take(
        self,
        queue: QueueDefinition,
        bucket: int,
        candidates: list[MessageRow],
        want: int,
        invisibility_ms: int,
        *,
        unsealed: bool = False,
    ) -> list[Delivery]:
        """Up to ``want`` deliveries of the candidates (oldest first when strict FIFO, else
        in random order), ``want`` at a time in one conditional batch; the ones lost to
        another reader are made up from the candidates left. With ``unsealed`` (the
        reader's bucket), only while the bucket is not sealed."""
        if not queue.options.strict_fifo:
            # Random order spreads concurrent readers over the bucket: fewer lost CAS.
            candidates = random.sample(candidates, len(candidates))
        rest = iter(candidates)
        got: list[Delivery] = []
        while len(got) < want:
            # Checked as they are picked: another reader of this server may have taken
            # some while this one waited for its last batch.
            batch = list(
                itertools.islice((r for r in rest if not self.busy(queue, r)), want - len(got))
            )
            if not batch:
                break
            got += await self._try(queue, bucket, batch, invisibility_ms, unsealed=unsealed)
        return got

    async def _try(
        self,
        queue: QueueDefinition,
        bucket: int,
        rows: list[MessageRow],
        invisibility_ms: int,
        *,
        unsealed: bool,
    ) -> list[Delivery]:
        """Consume ``rows``, marked as being tried meanwhile: concurrent readers of this
        server pick others (every candidate of a batch is marked, not only the first)."""
        loop = asyncio.get_running_loop()
        keys = [(queue.id, row.monoton) for row in rows]
        tries = [loop.create_future() for _ in keys]
        self._trying.update(zip(keys, tries, strict=True))
        try:
            return await self.consume(queue, bucket, rows, invisibility_ms, unsealed=unsealed)
        finally:
            for key, trying in zip(keys, tries, strict=True):
                del self._trying[key]
                trying.set_result(None)

    def busy(self, queue: QueueDefinition, row: MessageRow) -> bool:
        """Another reader of this server is taking it, or took this version of it already."""
        if (queue.id, row.monoton) in self._trying:
            return True
        return self._taken.get(_taken_key(queue, row.monoton), 0) > row.version

    def any_trying(self, queue: QueueDefinition, rows: list[MessageRow]) -> bool:
        return any((queue.id, r.monoton) in self._trying for r in rows)

    async def wait_for_tries(self, queue: QueueDefinition, rows: list[MessageRow]) -> None:
        """Wait until one of this server's tries on these messages has an outcome."""
        waits = [
            self._trying[k] for k in ((queue.id, r.monoton) for r in rows) if k in self._trying
        ]
        if waits:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)

    async def wait_for_all_tries(self, queue: QueueDefinition, first: int, end: int) -> None:
        """Wait until no reader of this server is taking a message in ``first..end-1``."""
        while waits := [
            f for (q, m), f in self._trying.items() if q == queue.id and first <= m < end
        ]:
            await asyncio.wait(waits)

    def note_version(self, queue: QueueDefinition, monoton: int, version: int) -> None:
        """Remember that a message is at ``version`` now (this server changed it)."""
        key = _taken_key(queue, monoton)
        self._taken[key] = version
        self._taken.move_to_end(key)
        while len(self._taken) > TAKEN_CACHE_SIZE:
            self._taken.popitem(last=False)

    def pop_reader_writes(self, queue: QueueId, bucket: int) -> ReaderWrites | None:
        """What this server's reader's writes left of the bucket's rows, forgotten from now
        on (its seal is stored or failed: no more of them can come)."""
        writes = self._reader_writes.get((queue, bucket))
        self._reader_writes.drop((queue, bucket))
        return writes

    def forget_reader_writes(self, queue: QueueId, bucket: int) -> None:
        """Another write of this server changed a row of the bucket after its reader's."""
        self._reader_writes.drop((queue, bucket))

    def _note_reader_writes(self, queue: QueueId, bucket: int, rows: list[MessageRow]) -> None:
        writes = self._reader_writes.get((queue, bucket))
        if writes is None:
            self._reader_writes.put((queue, bucket), writes := ReaderWrites(self._ctx.clock.now()))
        for row in rows:
            known = writes.rows.get(row.monoton)
            if known is None or known.version < row.version:
                writes.rows[row.monoton] = without_body(row)

    async def consume(
        self,
        queue: QueueDefinition,
        bucket: int,
        rows: list[MessageRow],
        invisibility_ms: int,
        *,
        unsealed: bool = False,
    ) -> list[Delivery]:
        """Deliver rows of one bucket with one conditional batch (each row conditioned on
        its version); the deliveries made, in row order. Rows that used up their
        deliveries are dead-lettered instead."""
        ctx = self._ctx
        if any(r.redrive_to is not None for r in rows):
            rows = await self._finish_redrives(queue, bucket, rows)
        now = ctx.clock.now()
        # Outliving the retention is not a failed delivery: such rows are retired as
        # expired (in the same conditional batch as the takes), never dead-lettered.
        expiring_rows = [r for r in rows if expiring(queue, r, now)]
        live = [r for r in rows if not expiring(queue, r, now)]
        spent = [r for r in live if r.delivery_count >= queue.options.max_delivery_count]
        if spent:
            await self._dead_letter_all(queue, bucket, spent, unsealed=unsealed)
        now = ctx.clock.now()
        writes = [(row, row.retired(now, expired=True), False) for row in expiring_rows] + [
            (row, _taken(row, now, invisibility_ms), True)
            for row in live
            if row.delivery_count < queue.options.max_delivery_count
        ]
        if not writes:
            return []
        applied = await ctx.store.cas_messages(
            queue.id,
            bucket,
            [(row.version, new) for row, new, _ in writes],
            unsealed=unsealed,
            keep_body=True,  # takes and retirements: only the state changes
        )
        if unsealed:
            won_rows = [new for (_, new, _), won in zip(writes, applied, strict=True) if won]
            self._note_reader_writes(queue.id, bucket, won_rows)
        got: list[Delivery] = []
        for (row, new, deliver), won in zip(writes, applied, strict=True):
            if won:
                self.note_version(queue, row.monoton, new.version)
                if deliver:
                    got.append(delivery_of(queue, row, new))
            elif not unsealed:  # then someone won it: it is at least at the next version
                self.note_version(queue, row.monoton, row.version + 1)
            # else another reader won it, or (unsealed) the bucket was sealed
        if expired := sum(
            won for (_, _, deliver), won in zip(writes, applied, strict=True) if not deliver
        ):
            ctx.log.info("messages_expired", queue=str(queue.id), bucket=bucket, count=expired)
        return got

    async def _dead_letter_all(
        self, queue: QueueDefinition, bucket: int, rows: list[MessageRow], *, unsealed: bool
    ) -> None:
        """Dead-letter each row (side by side: each move is its own few LWTs). The
        dead-letter queue is looked up once for them all, and their targets there are taken
        first, as one range in source order (one compare-and-set): when each move took its
        own, the copies landed in whichever order the moves won their monotons, even in a
        strict-FIFO queue."""
        name = queue.options.dlq_name
        dlq = None if name is None else await self._queues.find(queue.account, name, fresh=True)
        try:
            targets = await self._targets(dlq, rows)
        except QueueNotFound:
            dlq, targets = None, {}  # its state deleted since the look-up: held, as missing

        async def one(row: MessageRow) -> None:
            changed = await self.dead_letter(
                queue, bucket, row, dlq, unsealed=unsealed, target=targets.get(row.monoton)
            )
            if changed or not unsealed:
                # This version is gone (changed here, or by whoever won it): a snapshot
                # still showing it must not make this server try it again. Refused only
                # because the bucket was sealed meanwhile (``unsealed``), it is still
                # there, and the invisibility side of this server must not skip it.
                self.note_version(queue, row.monoton, row.version + 1)

        outcomes = await asyncio.gather(*(one(r) for r in rows), return_exceptions=True)
        # Every move has finished (none left running unseen) before the first failure is
        # raised, as a one-message take raised it.
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _targets(self, dlq: QueueDefinition | None, rows: list[MessageRow]) -> dict[int, int]:
        """Monoton -> target monoton in ``dlq`` for the rows whose move needs a new target,
        taken as one range in source order; empty when the rows go nowhere (no dead-letter
        queue) or need one target at most."""
        if dlq is None:
            return {}
        # In source order, whatever order the rows came in (a strict-FIFO dead-letter queue
        # then delivers them as they were sent).
        fresh = sorted(
            (r for r in rows if _redo_target(r, dlq, redrive=False) is None),
            key=lambda r: r.monoton,
        )
        if len(fresh) < 2:
            return {}
        first = await self._publisher.take_monotons(dlq.id, len(fresh))
        return {r.monoton: first + i for i, r in enumerate(fresh)}

    async def dead_letter(
        self,
        queue: QueueDefinition,
        bucket: int,
        row: MessageRow,
        dlq: QueueDefinition | None,
        *,
        unsealed: bool = False,
        target: int | None = None,
    ) -> bool:
        """A message that used up its deliveries: to its dead-letter queue ``dlq`` (as just
        looked up: None when it does not exist), exactly once.

        Without a dead-letter queue set, it is retired as dead-lettered (CassieQ's
        behaviour: the queue's owner chose to drop such messages). With one set that does
        not exist (deleted, or never there because of a race with its creation), it is
        kept in its queue, held, until a queue of that name exists again: never dropped.
        Whether this call changed the row (its first compare-and-set applied).

        The move: claim (hide it and record its target in the dead-letter queue: that
        queue's version and a monoton of it), write the copy at the target (an insert
        that is a no-op when the row is there already), then retire the original. A move
        cut short is redone by whoever finds the claim expired, to the same target: no
        second copy. The source is never delivered again either way (its count is spent).
        ``target``: a monoton of ``dlq`` taken for this move beforehand.
        """
        if queue.options.dlq_name is None:
            return await self.retire(queue, bucket, row, unsealed=unsealed)
        if dlq is None:
            return await self._hold(queue, bucket, row, unsealed=unsealed)
        # QueueNotFound (and TargetGone) below is the dead-letter queue's, from a monoton
        # taken there: deleted since the look-up, its state too. The message is kept, as
        # for a missing one, and the receive it came in goes on (the error was a 404 on the
        # queue received from).
        try:
            claim = await self._claim(queue, bucket, row, dlq, unsealed=unsealed, target=target)
        except QueueNotFound:
            return await self._hold(queue, bucket, row, unsealed=unsealed)
        if claim is None:
            return False  # it changed (another server is moving it), or it was sealed
        try:
            moved = await self.copy_to(queue, bucket, claim, dlq, source=queue.name)
        except TargetGone as gone:
            await self._hold(queue, bucket, gone.claim)  # no copy written
            return True
        if moved is None:
            return True
        claim = moved
        now_dlq = await self._queues.find(queue.account, dlq.name, fresh=True)
        if now_dlq is None or now_dlq.version != dlq.version:
            # Deleted (and maybe created again) while the copy was written: the copy is in
            # a deleted version, which its deletion job removes. Keep the message.
            await self._hold(queue, bucket, claim)
            return True
        await self.retire(queue, bucket, claim)
        self._ctx.log.info(
            "message_dead_lettered",
            queue=str(queue.id),
            monoton=row.monoton,
            dlq=str(dlq.id),
            dlq_monoton=claim.dlq_monoton,
        )
        return True

    async def _claim(
        self,
        queue: QueueDefinition,
        bucket: int,
        row: MessageRow,
        dlq: QueueDefinition,
        *,
        unsealed: bool,
        redrive: bool = False,
        target: int | None = None,
    ) -> MessageRow | None:
        """Hide the message while it is moved and record where its copy goes (the target
        of an earlier, unfinished move into this same queue stays; else ``target``, taken
        beforehand in this queue, or a monoton taken now). ``redrive``: the move is a
        redrive back out of a dead-letter queue (its target's name is recorded too)."""
        ctx = self._ctx
        now = ctx.clock.now()
        redo = _redo_target(row, dlq, redrive=redrive)
        if redo is not None:
            target = redo
        elif target is None:
            target = await self._publisher.take_monotons(dlq.id)
        claim = msgspec.structs.replace(
            row,
            version=row.version + 1,
            next_visible_on=now + ctx.tuning.claim_ms,
            updated_at=now,
            change=new_token(),
            dlq_held=False,
            dlq_version=dlq.version,
            dlq_monoton=target,
            # A dead-letter move is no redrive, whatever an earlier, abandoned one recorded.
            redrive_to=dlq.name if redrive else None,
        )
        if not await ctx.store.cas_message(queue.id, bucket, row.version, claim, unsealed=unsealed):
            return None  # a taken target monoton is a hole in the dead-letter queue: harmless
        return claim

    async def copy_to(
        self,
        queue: QueueDefinition,
        bucket: int,
        claim: MessageRow,
        dlq: QueueDefinition,
        *,
        source: str | None,
    ) -> MessageRow | None:
        """Write the copy at the claim's target (``source``: the queue recorded on it, for a
        redrive back); the claim as it is once the copy is stored (retargeted if the target's
        bucket was finalized first), None if it changed. TargetGone, with the claim as it
        stands, when the target's state is gone (deleted) as a monoton is taken there."""
        ctx = self._ctx
        for _ in range(ctx.tuning.max_cas_attempts):
            target = claim.dlq_monoton or 0  # set by the claim
            now = ctx.clock.now()
            copy = msgspec.structs.replace(
                new_message(
                    target,
                    claim.message,
                    now,
                    attributes=claim.attributes,
                    attribute_types=claim.attribute_types,
                ),
                dead_letter_source=source,
            )
            if await ctx.store.insert_messages(dlq.id, dlq.bucket_of(target), [copy], now):
                return claim  # written now, or already there from an earlier try
            # The target's bucket was finalized without the copy: a move slower than the
            # dead-letter queue's finalize wait, or a redo after that queue consumed the
            # first copy and dropped its bucket (then this is a second copy: the one case
            # where the move is at least once, not exactly once).
            try:
                monoton = await self._publisher.take_monotons(dlq.id)
            except QueueNotFound as gone:
                raise TargetGone(claim) from gone
            retarget = msgspec.structs.replace(
                claim,
                version=claim.version + 1,
                dlq_monoton=monoton,
                updated_at=now,
                change=new_token(),
            )
            if not await ctx.store.cas_message(queue.id, bucket, claim.version, retarget):
                return None
            claim = retarget
        raise Contention(f"could not dead-letter {queue.id} monoton {claim.monoton}")

    async def retire(
        self,
        queue: QueueDefinition,
        bucket: int,
        row: MessageRow,
        *,
        unsealed: bool = False,
        dead_lettered: bool = True,
    ) -> bool:
        """The moved message's end in its queue: dead-lettered, or (a redrive) acked."""
        done = row.retired(self._ctx.clock.now(), dead_lettered=dead_lettered)
        return await self._ctx.store.cas_message(
            queue.id, bucket, row.version, done, unsealed=unsealed
        )

    async def redrive(
        self, queue: QueueDefinition, bucket: int, row: MessageRow, target: QueueDefinition
    ) -> bool:
        """Move a message of a dead-letter queue back to ``target``, exactly once: the
        dead-letter move's protocol (claim recording the target, copy, retire). The copy
        is a fresh message there (delivery count 0, attributes kept). True when moved."""
        # The target deleted, its state too, as a monoton is taken there: not moved. The
        # message stays here (once a claim was made, delivered again when it ends).
        try:
            claim = await self._claim(queue, bucket, row, target, unsealed=False, redrive=True)
        except QueueNotFound:
            return False
        if claim is None:
            return False
        try:
            moved = await self.copy_to(queue, bucket, claim, target, source=None)
        except TargetGone:
            return False
        if moved is None:
            return False
        claim = moved
        now_target = await self._queues.find(queue.account, target.name, fresh=True)
        if now_target is None or now_target.version != target.version:
            return False  # the copy went to a deleted version: the claim ends, it stays here
        if not await self.retire(queue, bucket, claim, dead_lettered=False):
            return False
        self._ctx.log.info(
            "message_redriven",
            queue=str(queue.id),
            monoton=row.monoton,
            to=str(target.id),
            to_monoton=claim.dlq_monoton,
        )
        return True

    async def _finish_redrives(
        self, queue: QueueDefinition, bucket: int, rows: list[MessageRow]
    ) -> list[MessageRow]:
        """Finish the redrive moves found among ``rows`` (cut short: their server died), to
        the same target, side by side; the rows still to deliver here. A finished one is
        never delivered from here too (that would be a second copy)."""

        async def finished(row: MessageRow) -> bool:
            if row.redrive_to is None or not await self._finish_redrive(queue, bucket, row):
                return False
            self.note_version(queue, row.monoton, row.version + 1)
            return True

        done = await asyncio.gather(*(finished(r) for r in rows))
        return [r for r, d in zip(rows, done, strict=True) if not d]

    async def _finish_redrive(self, queue: QueueDefinition, bucket: int, row: MessageRow) -> bool:
        """A found redrive claim: finish it when its target still exists (True)."""
        # Fresh: a target deleted meanwhile is seen now, not after the cache's time.
        target = await self._queues.find(queue.account, row.redrive_to or "", fresh=True)
        if target is None or target.version != row.dlq_version:
            return False  # its target is gone: the message is delivered here as before
        await self.redrive(queue, bucket, row, target)
        return True

    async def _hold(
        self, queue: QueueDefinition, bucket: int, row: MessageRow, *, unsealed: bool = False
    ) -> bool:
        """Keep the message in its queue, not delivered, until its dead-letter queue exists.

        Hidden until the hold ends, like a delivery in force: the reader leaves its bucket,
        the invisibility side keeps the bucket as a straggler due when the hold ends (then
        it is looked at again), repair and bucket deletion leave it alone (it is unacked).
        """
        ctx = self._ctx
        now = ctx.clock.now()
        held = msgspec.structs.replace(
            row,
            version=row.version + 1,
            next_visible_on=now + ctx.tuning.dead_letter_hold_ms,
            updated_at=now,
            change=new_token(),
            dlq_held=True,
        )
        if not await ctx.store.cas_message(queue.id, bucket, row.version, held, unsealed=unsealed):
            return False
        if self._missing_warned.get(queue.id) is None:
            # Once a minute per queue (per server) at most: every held message is counted
            # in the queue's statistics (deadLetterPending), the log only needs to say why.
            self._missing_warned.put(queue.id, True)
            ctx.log.warning(
                "dead_letter_queue_missing",
                queue=str(queue.id),
                dlq=queue.options.dlq_name,
                monoton=row.monoton,
                held_until=held.next_visible_on,
            )
        return True


class TargetGone(Exception):
    """A move's target queue lost its state (deleted) as a monoton was taken there for
    the copy; ``claim``: the moved row as it is stored now (the move's claim)."""

    def __init__(self, claim: MessageRow) -> None:
        super().__init__(f"the target of monoton {claim.monoton}'s move is gone")
        self.claim = claim


def candidate(queue: QueueDefinition, row: MessageRow, now: int) -> bool:
    """Whether a row may be delivered now (the reader and the invisibility side both ask
    here; what else makes a row undeliverable belongs here too)."""
    return row.visible(now)


def _redo_target(row: MessageRow, dlq: QueueDefinition, *, redrive: bool) -> int | None:
    """The target an earlier, unfinished move of this kind into ``dlq`` recorded: a redo
    of the move goes there again (no second copy)."""
    same_kind = row.redrive_to == (dlq.name if redrive else None)
    if same_kind and not row.dlq_held and row.dlq_version == dlq.version:
        return row.dlq_monoton
    return None


def _taken(row: MessageRow, now: int, invisibility_ms: int) -> MessageRow:
    """The row as a delivery leaves it: leased for ``invisibility_ms``, one more delivery."""
    return msgspec.structs.replace(
        row,
        version=row.version + 1,
        delivery_count=row.delivery_count + 1,
        next_visible_on=now + invisibility_ms,
        updated_at=now,
        change=new_token(),
        first_delivered_at=now if row.first_delivered_at is None else row.first_delivered_at,
    )


def without_body(row: MessageRow) -> MessageRow:
    """The row's state without its body and attributes (which never change after the
    insert): what a server keeps of rows it only needs to pass or redeliver later."""
    return msgspec.structs.replace(row, message="", attributes={}, attribute_types={})


def delivery_of(queue: QueueDefinition, row: MessageRow, taken: MessageRow) -> Delivery:
    """The delivery that ``taken`` (the row as the consuming write left it) made of ``row``."""
    return Delivery(
        receipt=PopReceipt(queue.version, row.monoton, taken.version, row.tag),
        message=row.message,
        # The deliveries before this one (0 on the first), as CassieQ counts them; the
        # row keeps the deliveries made, and max_delivery_count is judged on the count
        # before a delivery (in consume), i.e. on this same number.
        delivery_count=row.delivery_count,
        attributes=row.attributes,
        sent_at=row.created_at,
        first_delivered_at=taken.first_delivered_at,
        attribute_types=row.attribute_types,
    )
