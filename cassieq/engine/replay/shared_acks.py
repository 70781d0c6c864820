"""A shared subscription's acks and new leases: compare-and-sets of its delivery rows on
the version and tag a receipt names, a bucket's in one conditional batch (buckets and
partitions side by side), each entry decided on its own, with the queue's own rules for a
batch (life/ack.py's per_bucket: a repeated receipt, two receipts of one message, a
bucket whose batch cannot be settled)."""

from __future__ import annotations

from collections.abc import Sequence

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import EngineError, InvalidArgument, StaleReceipt
from cassieq.engine.life.ack import STALE, per_bucket
from cassieq.engine.life.partitions import by_partition
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

        async def partition(
            view: QueueDefinition, part: list[PopReceipt]
        ) -> list[EngineError | None]:
            now = self._ctx.clock.now()

            async def bucket(number: int, held: list[PopReceipt]) -> list[EngineError | None]:
                changes = [(r, _light(r, now, None, "acked")) for r in held]
                applied = await self._apply(view, sub, number, changes)
                return [None if ok else StaleReceipt(STALE) for ok in applied]

            return await per_bucket(
                view, part, lambda r: r, bucket, version=(sub.generation, SEEK_STALE)
            )

        outcomes = await by_partition(q, receipts, lambda r: r.partition, partition)
        acked = sum(o is None for o in outcomes)
        if acked:
            self._ctx.observers.subscription_acked(q, sub.name, acked)
        return outcomes

    async def change_many(
        self, q: QueueDefinition, sub: SubscriptionDef, changes: Sequence[VisibilityChange]
    ) -> list[PopReceipt | EngineError]:
        """Each delivery's new lease: its new receipt, or why not (in the order given)."""

        def invalid(change: VisibilityChange) -> EngineError | None:
            if change.body is not None:
                return InvalidArgument(NO_BODY)
            if change.invisibility_ms is None:
                return InvalidArgument(NO_LEASE)
            if change.invisibility_ms < 0:
                return InvalidArgument("the new invisibility must be >= 0")
            return None

        async def partition(
            view: QueueDefinition, part: list[VisibilityChange]
        ) -> list[PopReceipt | EngineError]:
            now = self._ctx.clock.now()

            async def bucket(
                number: int, held: list[VisibilityChange]
            ) -> list[PopReceipt | EngineError]:
                rows = [
                    (c.receipt, _light(c.receipt, now, now + (c.invisibility_ms or 0), None))
                    for c in held
                ]
                applied = await self._apply(view, sub, number, rows)
                return [
                    _renewed(receipt, new) if ok else StaleReceipt(STALE)
                    for (receipt, new), ok in zip(rows, applied, strict=True)
                ]

            return await per_bucket(
                view, part, lambda c: c.receipt, bucket, invalid,
                version=(sub.generation, SEEK_STALE),
            )  # fmt: skip

        return await by_partition(q, changes, lambda c: c.receipt.partition, partition)

    async def _apply(
        self,
        view: QueueDefinition,
        sub: SubscriptionDef,
        bucket: int,
        changes: list[tuple[PopReceipt, SubDelivery]],
    ) -> list[bool]:
        return await self._ctx.store.cas_sub_deliveries(
            view.id,
            sub.name,
            bucket,
            sub.generation,
            [(receipt.version, receipt.tag, new, False) for receipt, new in changes],
        )


def _renewed(receipt: PopReceipt, new: SubDelivery) -> PopReceipt:
    return PopReceipt(
        receipt.queue_version, receipt.monoton, new.version, receipt.tag, receipt.partition
    )


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
