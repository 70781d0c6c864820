"""The memory store's subscription rows (the same protocol as schema 0014's table)."""

from __future__ import annotations

import msgspec

from cassieq.model import QueueId
from cassieq.model_subscriptions import SubscriptionDef


class MemorySubscriptions:
    """Mixed into MemoryStore: each subscription by (queue, name)."""

    _subscriptions: dict[QueueId, dict[str, SubscriptionDef]]

    async def insert_subscription(self, sub: SubscriptionDef) -> SubscriptionDef | None:
        kept = self._subscriptions.setdefault(sub.queue, {})
        stored = kept.get(sub.name)
        if stored is not None:
            return stored
        kept[sub.name] = sub
        return None

    async def read_subscription(self, queue: QueueId, name: str) -> SubscriptionDef | None:
        return self._subscriptions.get(queue, {}).get(name)

    async def read_subscriptions(self, queue: QueueId) -> list[SubscriptionDef]:
        return [s for _, s in sorted(self._subscriptions.get(queue, {}).items())]

    async def cas_subscription_position(
        self, queue: QueueId, name: str, expected_revision: int, position: str, change: str
    ) -> bool:
        kept = self._subscriptions.get(queue, {})
        stored = kept.get(name)
        if stored is None or stored.revision != expected_revision:
            return False
        kept[name] = msgspec.structs.replace(
            stored, position=position, revision=expected_revision + 1, change=change
        )
        return True

    async def delete_subscription(self, queue: QueueId, name: str) -> None:
        kept = self._subscriptions.get(queue)
        if kept is not None:
            kept.pop(name, None)
            if not kept:
                del self._subscriptions[queue]

    async def delete_subscriptions(self, queue: QueueId) -> None:
        self._subscriptions.pop(queue, None)
