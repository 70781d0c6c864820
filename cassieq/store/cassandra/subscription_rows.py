"""The store's subscription rows (schema 0014): one per subscription, in its queue's
partition; the committed position moved by compare-and-set on its revision."""

from __future__ import annotations

from typing import Any

from cassieq.model import QueueId
from cassieq.model_subscriptions import SubscriptionDef
from cassieq.store.cassandra.execution import APPLIED, CONTENDED, REJECTED, CassandraBase
from cassieq.store.cassandra.lwt import Outcome


def _subscription_of(queue: QueueId, r: Any) -> SubscriptionDef:
    return SubscriptionDef(
        queue=queue,
        name=r.name,
        mode=r.mode,
        start=r.start,
        created_at=int(r.created_at),
        position=r.position,
        revision=int(r.revision),
        change=r.last_change or "",
        generation=int(r.generation or 0),  # schema 0015: null on ordered ones of before
        done=r.done or "",
    )


class SubscriptionRows(CassandraBase):
    async def _subscription_serial(self, queue: QueueId, name: str) -> SubscriptionDef | None:
        rows = await self._read_serial(self._q.subscription_read, (str(queue), name))
        return _subscription_of(queue, rows[0]) if rows else None

    async def insert_subscription(self, sub: SubscriptionDef) -> SubscriptionDef | None:
        async def resolve() -> Outcome:
            stored = await self._subscription_serial(sub.queue, sub.name)
            if stored is None:
                return CONTENDED
            return APPLIED if stored.change == sub.change else REJECTED

        params = (
            str(sub.queue), sub.name, sub.mode, sub.start, sub.created_at, sub.position,
            sub.revision, sub.change, sub.generation, sub.done,
        )  # fmt: skip
        applied, _ = await self._lwt(
            "insert_subscription", self._q.subscription_insert, params, resolve
        )
        if applied:
            return None
        stored = await self._subscription_serial(sub.queue, sub.name)
        if stored is None:  # deleted between the refusal and this read: try again
            return await self.insert_subscription(sub)
        return stored

    async def read_subscription(self, queue: QueueId, name: str) -> SubscriptionDef | None:
        rows = await self._run(self._q.subscription_read, (str(queue), name))
        return _subscription_of(queue, rows[0]) if rows else None

    async def read_subscriptions(self, queue: QueueId) -> list[SubscriptionDef]:
        rows = await self._run(self._q.subscriptions_read, (str(queue),))
        return [_subscription_of(queue, r) for r in rows]

    async def cas_subscription_position(
        self, queue: QueueId, name: str, expected_revision: int, position: str, change: str
    ) -> bool:
        resolve = self._by_change(
            self._q.subscription_read,
            (str(queue), name),
            change,
            lambda row: row is not None and int(row.revision) == expected_revision,
        )
        params = (position, expected_revision + 1, change, str(queue), name, expected_revision)
        applied, _ = await self._lwt(
            "cas_subscription_position", self._q.subscription_position_cas, params, resolve
        )
        return applied

    async def delete_subscription(self, queue: QueueId, name: str) -> None:
        await self._run(self._q.subscription_delete, (str(queue), name))

    async def delete_subscriptions(self, queue: QueueId) -> None:
        await self._run(self._q.subscriptions_delete, (str(queue),))
