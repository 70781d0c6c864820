"""Dead letters: what becomes of a message that used up its deliveries, and redrives back.

A message past ``maxDeliveryCount`` is never dropped by accident: it is moved to its queue's
dead-letter queue exactly once (claim, copy, retire: move.py), retired when the queue has
none set (CassieQ's behaviour), or held in its queue, not delivered, while the dead-letter
queue it names does not exist. A redrive moves a dead-letter queue's messages back by the
same protocol.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import QueueNotFound
from cassieq.engine.life.move import TargetGone, write_copy
from cassieq.engine.life.put import Publisher, new_message
from cassieq.engine.recent import Recent
from cassieq.engine.tenancy.queues import QueueDirectory
from cassieq.model import MessageRow, QueueDefinition, QueueId
from cassieq.tokens import new_token

DLQ_WARNING_INTERVAL_MS = 60_000


class DeadLetters:
    def __init__(
        self,
        ctx: EngineContext,
        publisher: Publisher,
        queues: QueueDirectory,
        note_version: Callable[[QueueDefinition, int, int], None],
    ) -> None:
        self._ctx = ctx
        self._publisher = publisher
        self._queues = queues
        # The deliverer's memory of versions this server moved past (see Deliverer.busy).
        self._note_version = note_version
        # Queues whose missing dead-letter queue was logged in the last minute.
        self._missing_warned: Recent[QueueId, bool] = Recent(ctx, DLQ_WARNING_INTERVAL_MS)

    async def dead_letter_all(
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
                self._note_version(queue, row.monoton, row.version + 1)

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
            retired = await self.retire(queue, bucket, row, unsealed=unsealed)
            if retired:
                self._ctx.observers.dead_lettered(queue, 1)
            return retired
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
        # Its one end as dead-lettered: a move redone after a crash retires it here once.
        if await self.retire(queue, bucket, claim):
            self._ctx.observers.dead_lettered(queue, 1)
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

        def copy_at(target: int, now: int) -> MessageRow:
            fresh = new_message(
                target,
                claim.message,
                now,
                attributes=claim.attributes,
                attribute_types=claim.attribute_types,
                group=claim.group,
            )
            return msgspec.structs.replace(fresh, dead_letter_source=source)

        def retargeted(row: MessageRow, monoton: int, now: int) -> MessageRow:
            return msgspec.structs.replace(
                row,
                version=row.version + 1,
                dlq_monoton=monoton,
                updated_at=now,
                change=new_token(),
            )

        return await write_copy(
            self._ctx,
            self._publisher,
            queue,
            bucket,
            claim,
            dlq,
            target_of=lambda row: row.dlq_monoton or 0,  # set by the claim
            copy_at=copy_at,
            retargeted=retargeted,
            what="dead-letter",
        )

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

    async def finish_redrives(
        self, queue: QueueDefinition, bucket: int, rows: list[MessageRow]
    ) -> list[MessageRow]:
        """Finish the redrive moves found among ``rows`` (cut short: their server died), to
        the same target, side by side; the rows still to deliver here. A finished one is
        never delivered from here too (that would be a second copy)."""

        async def finished(row: MessageRow) -> bool:
            if row.redrive_to is None or not await self._finish_redrive(queue, bucket, row):
                return False
            self._note_version(queue, row.monoton, row.version + 1)
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


def _redo_target(row: MessageRow, dlq: QueueDefinition, *, redrive: bool) -> int | None:
    """The target an earlier, unfinished move of this kind into ``dlq`` recorded: a redo
    of the move goes there again (no second copy)."""
    same_kind = row.redrive_to == (dlq.name if redrive else None)
    if same_kind and not row.dlq_held and row.dlq_version == dlq.version:
        return row.dlq_monoton
    return None
