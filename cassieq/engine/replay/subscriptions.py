"""The subscriptions' façade: what the API calls (``QueueEngine.subscriptions``).

A subscription names a queue and keeps its own position in it (ordered mode: read by
position, commit, seek), over the queue's own message rows: a put costs the same with any
number of subscriptions. How positions, reads, holes and retention work:
docs/guides/subscriptions.md.
"""

from __future__ import annotations

from cassieq.engine.context import EngineContext
from cassieq.engine.tenancy.queues import QueueDirectory
from cassieq.model_subscriptions import (
    ReadBatch,
    SeekTarget,
    SubscriptionDef,
    SubscriptionInfo,
    SubscriptionMode,
)


class Subscriptions:
    def __init__(self, ctx: EngineContext, queues: QueueDirectory) -> None:
        self._ctx = ctx
        self._queues = queues

    async def create(
        self, account: str, queue: str, name: str, mode: SubscriptionMode, start: str
    ) -> tuple[SubscriptionDef, bool]:
        """The subscription and whether this call created it (False: it existed with these
        options). ``start``: "earliest", "latest" or an RFC 3339 time. Raises
        QueueNotFound, SubscriptionExists (other options: 409), InvalidArgument (a bad name,
        mode or start; "shared" is refused until shared subscriptions exist),
        SubscriptionLimitReached (409)."""
        raise NotImplementedError

    async def list(self, account: str, queue: str) -> list[SubscriptionInfo]:
        raise NotImplementedError

    async def get(self, account: str, queue: str, name: str) -> SubscriptionInfo:
        """Raises QueueNotFound, SubscriptionNotFound."""
        raise NotImplementedError

    async def delete(self, account: str, queue: str, name: str) -> None:
        """Raises QueueNotFound, SubscriptionNotFound."""
        raise NotImplementedError

    async def read(self, account: str, queue: str, name: str, limit: int) -> ReadBatch:
        """Up to ``limit`` (1..1000) messages after the committed position, in id order
        within each partition. Does not move the position (commit does). Raises
        QueueNotFound, SubscriptionNotFound, InvalidArgument (limit)."""
        raise NotImplementedError

    async def commit(
        self, account: str, queue: str, name: str, position: str, expected: str | None
    ) -> SubscriptionDef:
        """Store ``position`` as the committed one (compare-and-set on ``expected`` when
        given: PositionConflict, 409, when it is not the stored one). Raises
        InvalidArgument for a position that is not one of this queue's."""
        raise NotImplementedError

    async def seek(
        self, account: str, queue: str, name: str, target: SeekTarget
    ) -> SubscriptionDef:
        """Move the committed position to ``target`` (replay): the next read starts there."""
        raise NotImplementedError
