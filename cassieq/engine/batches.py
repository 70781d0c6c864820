"""v2 batches: receive, ack and visibility change of many messages at once.

Each is one conditional batch per bucket partition (each row conditioned on its own
state, decided on its own): a receive of N takes what it can from a bucket at once
(``Reader.receive``), a batch ack or visibility change groups its receipts by bucket
(``Acker.ack_many``, ``Acker.change_many``). The one-message operations are their
one-entry cases.
"""

from __future__ import annotations

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
        return await self._reader.receive(queue, max_messages, invisibility_ms)

    async def ack(
        self, queue: QueueDefinition, receipts: list[PopReceipt]
    ) -> list[EngineError | None]:
        """Per receipt, in order: None (acked) or why not."""
        return await self._acker.ack_many(queue, receipts)

    async def change_visibility(
        self, queue: QueueDefinition, changes: list[VisibilityChange]
    ) -> list[PopReceipt | EngineError]:
        """Per entry, in order: the new receipt, or why not."""
        return await self._acker.change_many(queue, changes)
