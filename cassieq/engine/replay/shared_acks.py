"""A shared subscription's acks and new leases: compare-and-sets of its delivery rows on
the version and tag a receipt names, a bucket's in one conditional batch (the buckets side
by side), each entry decided on its own, as the queue's own (life/ack.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import EngineError, InvalidArgument, StaleReceipt
from cassieq.engine.life.ack import REPEATED, STALE
from cassieq.model import PopReceipt, QueueDefinition, VisibilityChange
from cassieq.model_subscriptions import Finished, SubDelivery, SubscriptionDef
from cassieq.tokens import new_token

SEEK_STALE = "the receipt is stale: the subscription was sought (a seek starts afresh) since"
NO_BODY = "a subscription's delivery cannot change the message's body (it is the queue's)"
NO_LEASE = "visibilityTimeoutSeconds is required to change a subscription's delivery"


class SharedAcks:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx

    async def ack_many(
        self, q: QueueDefinition, sub: SubscriptionDef, receipts: Sequence[PopReceipt]
    ) -> list[EngineError | None]:
        """Each receipt's delivery acked, or why not (in the order given)."""
        now = self._ctx.clock.now()
        wanted = [(r, _light(r, now, None, "acked")) for r in receipts]
        outcomes = await self._apply(q, sub, wanted)
        acked = sum(o is None for o in outcomes)
        if acked:
            self._ctx.observers.subscription_acked(q, sub.name, acked)
        return [None if o is None else o for o in outcomes]

    async def change_many(
        self, q: QueueDefinition, sub: SubscriptionDef, changes: Sequence[VisibilityChange]
    ) -> list[PopReceipt | EngineError]:
        """Each delivery's new lease: its new receipt, or why not (in the order given)."""
        now = self._ctx.clock.now()
        wanted: list[tuple[PopReceipt, SubDelivery | EngineError]] = []
        for change in changes:
            if change.body is not None:
                wanted.append((change.receipt, InvalidArgument(NO_BODY)))
            elif change.invisibility_ms is None:
                wanted.append((change.receipt, InvalidArgument(NO_LEASE)))
            elif change.invisibility_ms < 0:
                wanted.append(
                    (change.receipt, InvalidArgument("the new invisibility must be >= 0"))
                )
            else:
                lease_end = now + change.invisibility_ms
                wanted.append((change.receipt, _light(change.receipt, now, lease_end, None)))
        outcomes = await self._apply(q, sub, wanted)
        answers: list[PopReceipt | EngineError] = []
        for (receipt, new), outcome in zip(wanted, outcomes, strict=True):
            if outcome is None and isinstance(new, SubDelivery):
                answers.append(
                    PopReceipt(
                        receipt.queue_version,
                        receipt.monoton,
                        new.version,
                        receipt.tag,
                        receipt.partition,
                    )
                )
            else:
                answers.append(outcome or StaleReceipt(STALE))
        return answers

    async def _apply(
        self,
        q: QueueDefinition,
        sub: SubscriptionDef,
        wanted: Sequence[tuple[PopReceipt, SubDelivery | EngineError]],
    ) -> list[EngineError | None]:
        outcomes: list[EngineError | None] = [None] * len(wanted)
        groups: dict[tuple[int, int], list[int]] = {}
        seen: set[tuple[int, int]] = set()
        partitions = q.options.stored_partitions
        for i, (receipt, new) in enumerate(wanted):
            key = (receipt.partition, receipt.monoton)
            if isinstance(new, EngineError):
                outcomes[i] = new
            elif receipt.queue_version != sub.generation:
                outcomes[i] = StaleReceipt(SEEK_STALE)
            elif not 0 <= receipt.partition < partitions:
                outcomes[i] = StaleReceipt(STALE)
            elif key in seen:
                outcomes[i] = InvalidArgument(REPEATED)
            else:
                seen.add(key)
                view = q.in_partition(receipt.partition)
                groups.setdefault((receipt.partition, view.bucket_of(receipt.monoton)), []).append(
                    i
                )

        async def bucket(partition: int, number: int, indexes: list[int]) -> None:
            entries = []
            for i in indexes:
                receipt, new = wanted[i]
                assert isinstance(new, SubDelivery)
                entries.append((receipt.version, receipt.tag, new, False))
            applied = await self._ctx.store.cas_sub_deliveries(
                q.in_partition(partition).id, sub.name, number, sub.generation, entries
            )
            for i, ok in zip(indexes, applied, strict=True):
                outcomes[i] = None if ok else StaleReceipt(STALE)

        await asyncio.gather(*(bucket(p, b, ix) for (p, b), ix in groups.items()))
        return outcomes


def _light(
    receipt: PopReceipt, now: int, lease_end: int | None, finished: Finished | None
) -> SubDelivery:
    """The row as an ack or a new lease leaves it (only its changed columns are written:
    the store keeps the rest as stored)."""
    return SubDelivery(
        monoton=receipt.monoton,
        version=receipt.version + 1,
        delivery_count=0,  # not written by such a change
        next_visible_on=now if lease_end is None else lease_end,
        tag=receipt.tag,
        updated_at=now,
        change=new_token(),
        finished=finished,
    )
