"""The repair loop: seal wait, finalize, move late writes once, drop finished buckets.

One owner per queue at a time (a lease), so a late write is moved once, not once per
server. The repair pointer never passes a bucket the reader has not sealed, and so
never the monoton's bucket; a bucket the reader pointer passed without its seal stored
is sealed here, so such a queue heals instead of stalling (``_seal_if_passed``).
"""

from __future__ import annotations

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.life.expire import expire, expiring
from cassieq.engine.life.kept import kept_for_subscriptions
from cassieq.engine.life.move import TargetGone, write_copy
from cassieq.engine.life.put import Publisher, new_message
from cassieq.engine.replay.retention import Retention, kept_behind
from cassieq.engine.upkeep.leases import Leases
from cassieq.engine.upkeep.stall import StallWatch
from cassieq.model import BucketState, InvisibilityState, MessageRow, QueueDefinition
from cassieq.tokens import new_token

MAX_BUCKETS_PER_RUN = 256


def lease_name(queue: QueueDefinition) -> str:
    return f"repair:{queue.id}"


class Repairer:
    def __init__(self, ctx: EngineContext, publisher: Publisher, leases: Leases) -> None:
        self._ctx = ctx
        self._publisher = publisher
        self._leases = leases
        self._stalls = StallWatch(ctx)
        self._retention = Retention(ctx)

    async def run_once(self, queue: QueueDefinition) -> int | None:
        """Repair what is due; the number of buckets finished, or None without the lease
        (0 without asking for it where there is nothing to do: ``_start``)."""
        ctx, store, qid = self._ctx, self._ctx.store, queue.id
        bucket = await self._start(queue)
        if bucket is None:
            return 0
        if not await self._leases.hold(lease_name(queue)):
            return None
        finalize_ms = queue.options.finalize_seconds * 1000
        done = 0
        blocker = "runs up to the reader"
        while done < MAX_BUCKETS_PER_RUN:
            snap = await store.read_bucket(qid, bucket)
            now = ctx.clock.now()
            if snap.sealed_at is None and await self._seal_if_passed(queue, bucket, now):
                snap = await store.read_bucket(qid, bucket)
            if snap.sealed_at is None:
                blocker = "the reader is in this bucket"
                break
            if now < snap.sealed_at + finalize_ms:
                blocker = f"late writers' wait until {snap.sealed_at + finalize_ms}"
                break
            if not snap.finalized:
                await store.finalize_bucket(qid, bucket, now)
                # Writes that landed between the read and the finalize are in this one.
                snap = await store.read_bucket(qid, bucket)
            # Read after the finalize: no row can appear in the bucket any more.
            state = await store.read_invisibility(qid)
            if bucket >= state.bucket and bucket not in state.stragglers:
                # The invisibility side has not settled this bucket yet. Deciding now would
                # race its pass (it may be about to move past a row it read before it landed):
                # come back when it has moved on.
                blocker = f"the invisibility pointer (bucket {state.bucket}) has not passed it"
                break
            moving = [row for row in snap.messages if _needs_move(row, snap, state)]
            for row in moving:
                if expiring(queue, row, ctx.clock.now()):
                    # Outlived its retention: retired, not re-published (a copy would
                    # start its retention again).
                    await expire(ctx, queue, snap.bucket, row)
                else:
                    await self._move(queue, snap.bucket, row)
            if moving:
                snap = await store.read_bucket(qid, bucket)
                if any(_needs_move(row, snap, state) for row in snap.messages):
                    blocker = "a re-publish did not finish"
                    break  # a move did not finish (contention, an error): never skip past it
            await self._drop_if_finished(queue, snap, state)
            if not await store.cas_pointer(qid, "repair", bucket, bucket + 1):
                blocker = "another server moved the repair pointer"
                break  # someone else repairs this queue now (our lease lapsed)
            ctx.log.debug("bucket_repaired", queue=str(qid), bucket=bucket)
            bucket += 1
            done += 1
            if not await self._leases.hold(lease_name(queue)):
                break
        await self._stalls.check(queue, bucket, blocker)
        # Buckets kept for subscriptions (or since their last one went) that are due now.
        await self._retention.sweep(queue)
        return done

    async def _start(self, queue: QueueDefinition) -> int | None:
        """The repair pointer, where a run starts; None where a run could only stop there:
        the reader has not left the repair pointer's bucket, and no kept bucket is behind
        the repair pointer for the retention sweep. Three plain reads instead of the
        lease's two Paxos rounds and the bucket's read: most queues of a keyspace are idle
        at any time, and every server repaired each of them every few seconds (an idle
        server over 1,374 queues: half a core, and half a core of Cassandra's). Read before
        the lease: a pointer another owner moved meanwhile fails the run's compare-and-set
        on it, which stops the run, as a lease that lapsed mid-run does.

        A run at the reader's bucket only reads it and stops (the repair pointer never
        passes a bucket the reader has not sealed), unless a reader sealed it and died
        before moving the pointer: then the next receive finds the seal and moves on (it
        takes nothing from a sealed bucket), and repair goes on from there. Nothing of
        it is the stall check's either: it warns only of a pointer two buckets behind.
        """
        store, qid = self._ctx.store, queue.id
        repair = await store.read_pointer(qid, "repair")
        if await store.read_pointer(qid, "reader") > repair:
            return repair
        if kept_behind(await store.read_pointer(qid, "retention"), repair):
            return repair
        return None

    async def _seal_if_passed(self, queue: QueueDefinition, bucket: int, now: int) -> bool:
        """Seal a bucket the stored reader pointer has passed without its seal stored.

        The reader seals a bucket before it moves the pointer past it, but a crash between
        the two steps (or a bug) must not stop the queue for good: the invisibility side
        never passes an unsealed bucket and repair stops at one, so nothing behind it would
        be redelivered or repaired again. Sealing is idempotent (the first seal wins), and
        a reader that still takes from the bucket by a stale pointer is refused once it is
        sealed (its takes are conditioned on the seal marker).
        """
        store, qid = self._ctx.store, queue.id
        reader = await store.read_pointer(qid, "reader")
        if reader <= bucket:
            return False
        sealed_at = await store.seal_bucket(qid, bucket, now)
        self._ctx.log.warning(
            "bucket_sealed_behind_reader", queue=str(qid), bucket=bucket, reader=reader,
            sealed_at=sealed_at,
        )  # fmt: skip
        return True

    async def _move(self, queue: QueueDefinition, bucket: int, row: MessageRow) -> None:
        """Re-publish a message at a fresh monoton and retire the original, exactly once.

        Claim (record the target monoton on the original), write the copy at that target
        (only if it is not there yet), retire the original. Whoever finds a claimed,
        unretired original finishes that same move: same target, no second copy.
        """
        ctx, store, qid = self._ctx, self._ctx.store, queue.id
        claim = row
        if row.republished_to is None:
            now = ctx.clock.now()
            claim = msgspec.structs.replace(
                row,
                version=row.version + 1,
                republished_to=await self._publisher.take_monotons(qid),
                updated_at=now,
                change=new_token(),
            )
            if not await store.cas_message(qid, bucket, row.version, claim):
                return  # it changed (delivered, acked, moved): the caller re-reads it

        def copy_at(target: int, now: int) -> MessageRow:
            # A fresh row at the target that keeps the message's tag, deliveries and
            # visibility (a receipt of it stays meaningful; a lease still holds).
            fresh = new_message(
                target,
                row.message,
                now,
                delivery_count=row.delivery_count,
                attributes=row.attributes,
                attribute_types=row.attribute_types,
                group=row.group,
            )
            return msgspec.structs.replace(
                fresh, tag=row.tag, next_visible_on=row.next_visible_on,
                republished_from=row.monoton,
            )  # fmt: skip

        def retargeted(claimed: MessageRow, monoton: int, _now: int) -> MessageRow:
            return msgspec.structs.replace(
                claimed, version=claimed.version + 1, republished_to=monoton, change=new_token()
            )

        try:
            moved = await write_copy(
                ctx,
                self._publisher,
                queue,
                bucket,
                claim,
                queue,
                target_of=lambda claimed: claimed.republished_to or 0,  # set by the claim
                copy_at=copy_at,
                retargeted=retargeted,
                what="re-publish",
            )
        except TargetGone:
            return  # the queue itself was deleted meanwhile: its deletion job drops the row
        if moved is None:
            return  # the claim changed: the caller re-reads it
        claim = moved
        now = ctx.clock.now()
        retired = msgspec.structs.replace(
            claim, version=claim.version + 1, acked=True, acked_at=now, change=new_token()
        )
        if await store.cas_message(qid, bucket, claim.version, retired):
            # Applies once per move: a lost one is finished by the pass that finds the claim.
            ctx.observers.repair_moved(queue, 1)
        ctx.log.info(
            "message_republished", queue=str(qid), monoton=row.monoton, to=claim.republished_to
        )

    async def _drop_if_finished(
        self, queue: QueueDefinition, snap: BucketState, state: InvisibilityState
    ) -> None:
        if not queue.options.delete_buckets_after_finalize or snap.bucket in state.stragglers:
            return  # a straggler is dropped by the invisibility side when it settles it
        if all(m.acked for m in snap.messages) and not await kept_for_subscriptions(
            self._ctx, queue
        ):
            await self._ctx.store.delete_bucket(queue.id, snap.bucket)


def _needs_move(row: MessageRow, snap: BucketState, state: InvisibilityState) -> bool:
    """Repair's rows: late writes, unfinished moves, and rows the invisibility side passed.

    Called only once the invisibility side has settled the bucket (passed it, or keeps
    it as a straggler), so "passed and not a straggler" is final.
    """
    if row.acked:
        return False
    if row.republished_to is not None:
        return True  # a move that did not finish: finish it (we hold the lease)
    if row.late_write(snap.sealed_at):
        return True
    # An unacked row the invisibility side moved past (it landed after its read, or a
    # reader that stalled past the seal delivered it): nobody else will look at it again.
    return snap.bucket not in state.stragglers
