"""Consuming one message (the LWT that makes a delivery) and dead-lettering.

Shared by the reader (its bucket) and the invisibility side (buckets behind it).
"""

from __future__ import annotations

import asyncio
import random
from collections import OrderedDict

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.publisher import Publisher
from cassieq.engine.queues import QueueDirectory
from cassieq.model import Delivery, MessageRow, PopReceipt, QueueDefinition, QueueId
from cassieq.tokens import new_token

TAKEN_CACHE_SIZE = 65_536


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
        self._taken: OrderedDict[tuple[QueueId, int], int] = OrderedDict()

    async def first_of(
        self,
        queue: QueueDefinition,
        bucket: int,
        candidates: list[MessageRow],
        invisibility_ms: int,
        *,
        unsealed: bool = False,
    ) -> Delivery | None:
        """Try candidates (oldest first when strict FIFO, else in random order); with
        ``unsealed`` (the reader's bucket), only while the bucket is not sealed."""
        if not queue.options.strict_fifo:
            # Random order spreads concurrent readers over the bucket: fewer lost CAS.
            candidates = random.sample(candidates, len(candidates))
        for row in candidates:
            if self.busy(queue, row):
                continue
            key = (queue.id, row.monoton)
            trying = self._trying[key] = asyncio.get_running_loop().create_future()
            try:
                delivery = await self.consume(
                    queue, bucket, row, invisibility_ms, unsealed=unsealed
                )
            finally:
                del self._trying[key]
                trying.set_result(None)
            if delivery is not None:
                return delivery
        return None

    def busy(self, queue: QueueDefinition, row: MessageRow) -> bool:
        """Another reader of this server is taking it, or took this version of it already."""
        key = (queue.id, row.monoton)
        return key in self._trying or self._taken.get(key, 0) > row.version

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
        key = (queue.id, monoton)
        self._taken[key] = version
        self._taken.move_to_end(key)
        while len(self._taken) > TAKEN_CACHE_SIZE:
            self._taken.popitem(last=False)

    async def consume(
        self,
        queue: QueueDefinition,
        bucket: int,
        row: MessageRow,
        invisibility_ms: int,
        *,
        unsealed: bool = False,
    ) -> Delivery | None:
        ctx = self._ctx
        now = ctx.clock.now()
        if row.delivery_count >= queue.options.max_delivery_count:
            await self.dead_letter(queue, bucket, row, unsealed=unsealed)
            # Whatever came of it, this version is gone: a snapshot still showing it must
            # not make this server try it again.
            self.note_version(queue, row.monoton, row.version + 1)
            return None
        taken = msgspec.structs.replace(
            row,
            version=row.version + 1,
            delivery_count=row.delivery_count + 1,
            next_visible_on=now + invisibility_ms,
            updated_at=now,
            change=new_token(),
        )
        if not await ctx.store.cas_message(queue.id, bucket, row.version, taken, unsealed=unsealed):
            if not unsealed:  # then someone won it: it is at least at the next version
                self.note_version(queue, row.monoton, row.version + 1)
            return None  # another reader won it, or (unsealed) the bucket was sealed
        self.note_version(queue, row.monoton, taken.version)
        return Delivery(
            receipt=PopReceipt(queue.version, row.monoton, taken.version, row.tag),
            message=row.message,
            # The deliveries before this one (0 on the first), as CassieQ counts them; the
            # row keeps the deliveries made, and max_delivery_count is judged on the count
            # before a delivery (above), i.e. on this same number.
            delivery_count=row.delivery_count,
        )

    async def dead_letter(
        self, queue: QueueDefinition, bucket: int, row: MessageRow, *, unsealed: bool = False
    ) -> None:
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
        if not await ctx.store.cas_message(queue.id, bucket, row.version, claim, unsealed=unsealed):
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
