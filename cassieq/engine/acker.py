"""Ack and update: changes made by the holder of a pop receipt."""

from __future__ import annotations

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import InvalidArgument, StaleReceipt
from cassieq.engine.invisibility import InvisibilitySide
from cassieq.model import MessageRow, PopReceipt, QueueDefinition
from cassieq.tokens import new_token


class Acker:
    def __init__(self, ctx: EngineContext, invisibility: InvisibilitySide) -> None:
        self._ctx = ctx
        self._invisibility = invisibility

    async def ack(self, queue: QueueDefinition, receipt: PopReceipt) -> None:
        if receipt.queue_version != queue.version:
            raise StaleReceipt("the receipt belongs to a deleted version of this queue")
        # One conditional update, no read: the receipt names the version and tag it holds.
        acked = await self._ctx.store.ack_message(
            queue.id,
            queue.bucket_of(receipt.monoton),
            receipt.monoton,
            receipt.version,
            receipt.tag,
            self._ctx.clock.now(),
        )
        if not acked:
            raise StaleReceipt("the receipt is stale: acked, redelivered or updated since")
        self._invisibility.note_acked(queue.id, queue.bucket_of(receipt.monoton), receipt.monoton)

    async def update(
        self,
        queue: QueueDefinition,
        receipt: PopReceipt,
        message: str | None,
        invisibility_ms: int,
    ) -> PopReceipt:
        if invisibility_ms < 0:
            raise InvalidArgument("newInvisibilitySeconds must be >= 0")
        row = await self._held(queue, receipt)
        now = self._ctx.clock.now()
        changed = msgspec.structs.replace(
            row,
            version=row.version + 1,
            message=row.message if message is None else message,
            next_visible_on=now + invisibility_ms,
            updated_at=now,
            change=new_token(),
        )
        bucket = queue.bucket_of(row.monoton)
        if not await self._ctx.store.cas_message(queue.id, bucket, row.version, changed):
            raise StaleReceipt("the message changed since this receipt was issued")
        self._invisibility.note_changed(queue.id, bucket)
        if changed.next_visible_on < row.next_visible_on:
            await self._invisibility.lower_due(queue, bucket, changed.next_visible_on)
        return PopReceipt(queue.version, row.monoton, changed.version, row.tag)

    async def _held(self, queue: QueueDefinition, receipt: PopReceipt) -> MessageRow:
        if receipt.queue_version != queue.version:
            raise StaleReceipt("the receipt belongs to a deleted version of this queue")
        row = await self._ctx.store.read_message(
            queue.id, queue.bucket_of(receipt.monoton), receipt.monoton
        )
        if row is None or row.tag != receipt.tag or row.version != receipt.version or row.acked:
            raise StaleReceipt("the receipt is stale: acked, redelivered or updated since")
        return row
