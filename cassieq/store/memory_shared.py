"""The memory store's shared-subscription rows (the same protocol as schema 0015)."""

from __future__ import annotations

import msgspec

from cassieq.model import QueueId
from cassieq.model_subscriptions import SubDelivery, SubscriptionDef
from cassieq.store.base_shared import DeliveryChange, check_unique

# (queue partition, subscription, bucket) -> (generation, monoton) -> row
_Rows = dict[tuple[QueueId, str, int], dict[tuple[int, int], SubDelivery]]


class MemorySharedSubscriptions:
    """Mixed into MemoryStore."""

    _subscriptions: dict[QueueId, dict[str, SubscriptionDef]]
    _sub_deliveries: _Rows

    async def cas_subscription(
        self, queue: QueueId, name: str, expected_revision: int, new: SubscriptionDef
    ) -> bool:
        kept = self._subscriptions.get(queue, {})
        stored = kept.get(name)
        if stored is None or stored.revision != expected_revision:
            return False
        kept[name] = msgspec.structs.replace(
            stored,
            position=new.position,
            done=new.done,
            generation=new.generation,
            revision=expected_revision + 1,
            change=new.change,
        )
        return True

    async def read_sub_deliveries(
        self, queue: QueueId, name: str, bucket: int, generation: int
    ) -> list[SubDelivery]:
        rows = self._sub_deliveries.get((queue, name, bucket), {})
        return [r for (g, _), r in sorted(rows.items()) if g == generation]

    async def insert_sub_deliveries(
        self, queue: QueueId, name: str, bucket: int, generation: int, rows: list[SubDelivery]
    ) -> list[bool]:
        check_unique([r.monoton for r in rows])
        kept = self._sub_deliveries.setdefault((queue, name, bucket), {})
        applied = []
        for row in rows:
            key = (generation, row.monoton)
            applied.append(key not in kept)
            kept.setdefault(key, row)
        return applied

    async def cas_sub_deliveries(
        self, queue: QueueId, name: str, bucket: int, generation: int,
        entries: list[DeliveryChange],
    ) -> list[bool]:  # fmt: skip
        check_unique([new.monoton for _, _, new, _ in entries])
        kept = self._sub_deliveries.get((queue, name, bucket), {})
        applied = []
        for version, tag, new, take in entries:
            stored = kept.get((generation, new.monoton))
            ok = stored is not None and stored.version == version and stored.tag == tag
            if ok and stored is not None:
                kept[(generation, new.monoton)] = (
                    new
                    if take
                    else msgspec.structs.replace(
                        stored,
                        version=new.version,
                        next_visible_on=new.next_visible_on,
                        finished=new.finished,
                        updated_at=new.updated_at,
                        change=new.change,
                    )
                )
            applied.append(ok)
        return applied

    async def delete_sub_deliveries(self, queue: QueueId, name: str, bucket: int) -> None:
        self._sub_deliveries.pop((queue, name, bucket), None)
