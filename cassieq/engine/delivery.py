"""Consuming one message (the LWT that makes a delivery) and dead-lettering.

Shared by the reader (its bucket) and the invisibility side (buckets behind it).
"""

from __future__ import annotations

import random

import msgspec

from cassieq.engine.context import EngineContext, new_token
from cassieq.engine.publisher import Publisher
from cassieq.engine.queues import QueueDirectory
from cassieq.model import Delivery, MessageRow, PopReceipt, QueueDefinition


class Deliverer:
    def __init__(self, ctx: EngineContext, publisher: Publisher, queues: QueueDirectory) -> None:
        self._ctx = ctx
        self._publisher = publisher
        self._queues = queues

    async def first_of(
        self,
        queue: QueueDefinition,
        bucket: int,
        candidates: list[MessageRow],
        invisibility_ms: int,
    ) -> Delivery | None:
        """Try candidates (oldest first when strict FIFO, else in random order)."""
        if not queue.options.strict_fifo:
            # Random order spreads concurrent readers over the bucket: fewer lost CAS.
            candidates = random.sample(candidates, len(candidates))
        for row in candidates:
            delivery = await self.consume(queue, bucket, row, invisibility_ms)
            if delivery is not None:
                return delivery
        return None

    async def consume(
        self, queue: QueueDefinition, bucket: int, row: MessageRow, invisibility_ms: int
    ) -> Delivery | None:
        ctx = self._ctx
        now = ctx.clock.now()
        if row.delivery_count >= queue.options.max_delivery_count:
            await self.dead_letter(queue, bucket, row)
            return None
        taken = msgspec.structs.replace(
            row,
            version=row.version + 1,
            delivery_count=row.delivery_count + 1,
            next_visible_on=now + invisibility_ms,
            updated_at=now,
            change=new_token(),
        )
        if not await ctx.store.cas_message(queue.id, bucket, row.version, taken):
            return None  # another reader won this one
        return Delivery(
            receipt=PopReceipt(queue.version, row.monoton, taken.version, row.tag),
            message=row.message,
            delivery_count=taken.delivery_count,
            tag=row.tag,
        )

    async def dead_letter(self, queue: QueueDefinition, bucket: int, row: MessageRow) -> None:
        """Move a message that used up its deliveries to the DLQ (or drop it), at least once.

        Claim (hide it), copy it to the DLQ, then mark it dead-lettered: a crash between
        the steps leaves the claim to expire and the move to be redone, never a loss.
        """
        ctx = self._ctx
        now = ctx.clock.now()
        claim = msgspec.structs.replace(
            row,
            version=row.version + 1,
            next_visible_on=now + ctx.tuning.claim_ms,
            updated_at=now,
            change=new_token(),
        )
        if not await ctx.store.cas_message(queue.id, bucket, row.version, claim):
            return
        dlq_name = queue.options.dlq_name
        dlq = await self._queues.find(queue.account, dlq_name) if dlq_name else None
        if dlq is not None:
            await self._publisher.put(dlq, row.message)
        elif dlq_name:
            ctx.log.warning("dead_letter_queue_missing", queue=str(queue.id), dlq=dlq_name)
        done = msgspec.structs.replace(
            claim,
            version=claim.version + 1,
            acked=True,
            dead_lettered=True,
            acked_at=ctx.clock.now(),
            updated_at=ctx.clock.now(),
            change=new_token(),
        )
        await ctx.store.cas_message(queue.id, bucket, claim.version, done)
        ctx.log.info(
            "message_dead_lettered",
            queue=str(queue.id),
            monoton=row.monoton,
            dlq=dlq.name if dlq else None,
        )
