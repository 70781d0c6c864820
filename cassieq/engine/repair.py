"""The repair loop: seal wait, finalize, move late writes once, drop finished buckets.

One owner per queue at a time (a lease), so a late write is moved once, not once per
server. The repair pointer never passes a bucket the reader has not sealed, and so
never the monoton's bucket.
"""

from __future__ import annotations

import msgspec

from cassieq.engine.context import EngineContext, new_token
from cassieq.engine.errors import Contention
from cassieq.engine.leases import Leases
from cassieq.engine.monotons import Monotons
from cassieq.model import BucketState, InvisibilityState, MessageRow, QueueDefinition

MAX_BUCKETS_PER_RUN = 256


def lease_name(queue: QueueDefinition) -> str:
    return f"repair:{queue.id}"


class Repairer:
    def __init__(self, ctx: EngineContext, monotons: Monotons, leases: Leases) -> None:
        self._ctx = ctx
        self._monotons = monotons
        self._leases = leases

    async def run_once(self, queue: QueueDefinition) -> int | None:
        """Repair what is due; the number of buckets finished, or None without the lease."""
        ctx, store, qid = self._ctx, self._ctx.store, queue.id
        if not await self._leases.hold(lease_name(queue)):
            return None
        finalize_ms = queue.options.finalize_seconds * 1000
        bucket = await store.read_pointer(qid, "repair")
        done = 0
        while done < MAX_BUCKETS_PER_RUN:
            snap = await store.read_bucket(qid, bucket)
            now = ctx.clock.now()
            if snap.sealed_at is None or now < snap.sealed_at + finalize_ms:
                break  # the reader is still here, or late writers may still be on their way
            if not snap.finalized:
                await store.finalize_bucket(qid, bucket, now)
                # Writes that landed between the read and the finalize are in this one.
                snap = await store.read_bucket(qid, bucket)
            state = await store.read_invisibility(qid)
            for row in snap.messages:
                if _needs_move(row, snap, state, now):
                    await self._move(queue, snap, row)
            await self._drop_if_finished(queue, bucket, state)
            if not await store.cas_pointer(qid, "repair", bucket, bucket + 1):
                break  # someone else repairs this queue now (our lease lapsed)
            ctx.log.debug("bucket_repaired", queue=str(qid), bucket=bucket)
            bucket += 1
            done += 1
            if not await self._leases.hold(lease_name(queue)):
                break
        return done

    async def _move(self, queue: QueueDefinition, snap: BucketState, row: MessageRow) -> None:
        """Re-publish a late write at a fresh monoton and retire the original.

        Claim (record the target monoton on the original), write the copy, ack the
        original. After a crash the claim expires and the next owner finishes the same
        move: the copy is written only if it is not there yet.
        """
        ctx, store, qid = self._ctx, self._ctx.store, queue.id
        now = ctx.clock.now()
        target = await self._monotons.take(qid)
        claim = msgspec.structs.replace(
            row,
            version=row.version + 1,
            republished_to=target,
            next_visible_on=now + ctx.tuning.claim_ms,
            updated_at=now,
            change=new_token(),
        )
        if not await store.cas_message(qid, snap.bucket, row.version, claim):
            return  # someone delivered or moved it first
        for _ in range(ctx.tuning.max_cas_attempts):
            copy = MessageRow(
                monoton=target,
                message=row.message,
                version=1,
                delivery_count=row.delivery_count,
                acked=False,
                next_visible_on=row.next_visible_on,
                tag=row.tag,
                created_at=now,
                updated_at=now,
                change=new_token(),
            )
            if await store.read_message(qid, queue.bucket_of(target), target) is not None:
                break
            if await store.insert_messages(qid, queue.bucket_of(target), [copy], now):
                break
            # The target's bucket was finalized meanwhile: point the claim at a new one.
            target = await self._monotons.take(qid)
            retarget = msgspec.structs.replace(
                claim, version=claim.version + 1, republished_to=target, change=new_token()
            )
            if not await store.cas_message(qid, snap.bucket, claim.version, retarget):
                return
            claim = retarget
        else:
            raise Contention(f"could not re-publish {qid} monoton {row.monoton}")
        retired = msgspec.structs.replace(
            claim, version=claim.version + 1, acked=True, acked_at=now, change=new_token()
        )
        await store.cas_message(qid, snap.bucket, claim.version, retired)
        ctx.log.info("late_write_republished", queue=str(qid), monoton=row.monoton, to=target)

    async def _drop_if_finished(
        self, queue: QueueDefinition, bucket: int, state: InvisibilityState
    ) -> None:
        if not queue.options.delete_buckets_after_finalize:
            return
        if bucket >= state.bucket or bucket in state.stragglers:
            return  # the invisibility side still needs it; it drops it when done
        snap = await self._ctx.store.read_bucket(queue.id, bucket)
        if all(m.acked for m in snap.messages):
            await self._ctx.store.delete_bucket(queue.id, bucket)


def _needs_move(row: MessageRow, snap: BucketState, state: InvisibilityState, now: int) -> bool:
    if row.acked:
        return False
    if row.republished_to is not None:
        return row.next_visible_on <= now  # a move whose owner died: finish it
    if row.late_write(snap.sealed_at):
        return True
    # An unacked message the invisibility side has already passed (a reader that stalled
    # past the seal delivered it): nobody else will look at it again.
    return snap.bucket < state.bucket and snap.bucket not in state.stragglers
