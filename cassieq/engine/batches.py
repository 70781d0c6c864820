"""v2 batches: receive, ack and visibility change of many messages at once.

A first version over the one-message operations (each entry its own LWT); the batch
compare-and-sets (one conditional batch per bucket partition) replace it.
"""

from __future__ import annotations

import asyncio

from cassieq.engine.acker import Acker
from cassieq.engine.context import EngineContext
from cassieq.engine.errors import EngineError
from cassieq.engine.reader import Reader
from cassieq.model import Delivery, PopReceipt, QueueDefinition, VisibilityChange


class Batches:
    def __init__(self, ctx: EngineContext, reader: Reader, acker: Acker) -> None:
        self._ctx = ctx
        self._reader = reader
        self._acker = acker

    async def receive(
        self, queue: QueueDefinition, max_messages: int, invisibility_ms: int
    ) -> list[Delivery]:
        """Up to ``max_messages`` visible messages, each leased for ``invisibility_ms``."""
        deliveries: list[Delivery] = []
        while len(deliveries) < max_messages:
            delivery = await self._reader.get_next(queue, invisibility_ms)
            if delivery is None:
                break
            deliveries.append(delivery)
        return deliveries

    async def ack(
        self, queue: QueueDefinition, receipts: list[PopReceipt]
    ) -> list[EngineError | None]:
        """Per receipt, in order: None (acked) or why not."""

        async def one(receipt: PopReceipt) -> EngineError | None:
            try:
                await self._acker.ack(queue, receipt)
            except EngineError as exc:
                return exc
            return None

        return list(await asyncio.gather(*(one(r) for r in receipts)))

    async def change_visibility(
        self, queue: QueueDefinition, changes: list[VisibilityChange]
    ) -> list[PopReceipt | EngineError]:
        """Per entry, in order: the new receipt, or why not."""

        async def one(change: VisibilityChange) -> PopReceipt | EngineError:
            try:
                return await self._acker.update(
                    queue, change.receipt, change.body, change.invisibility_ms
                )
            except EngineError as exc:
                return exc

        return list(await asyncio.gather(*(one(c) for c in changes)))
