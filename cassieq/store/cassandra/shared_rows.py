"""The store's shared-subscription rows (schema 0015): the delivery rows, one conditional
batch on a (queue partition, subscription, bucket) partition per round (``batch_lwt``),
and the move of a subscription's whole state by compare-and-set on its revision."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cassandra.query import BatchStatement

from cassieq.model import QueueId
from cassieq.model_subscriptions import SubDelivery, SubscriptionDef
from cassieq.store.base_shared import DeliveryChange, check_unique
from cassieq.store.cassandra.binding import add_prepared
from cassieq.store.cassandra.execution import CassandraBase


def _delivery_of(r: Any) -> SubDelivery:
    return SubDelivery(
        monoton=int(r.monoton),
        version=int(r.version),
        delivery_count=int(r.delivery_count or 0),
        next_visible_on=int(r.next_visible_on or 0),
        tag=r.tag or "",
        updated_at=int(r.updated_at or 0),
        change=r.last_change or "",
        finished=r.finished,
        first_delivered_at=None if r.first_delivered_at is None else int(r.first_delivered_at),
    )


def _state(row: SubDelivery) -> tuple[Any, ...]:
    return (
        row.version, row.delivery_count, row.next_visible_on, row.finished, row.tag,
        row.updated_at, row.first_delivered_at, row.change,
    )  # fmt: skip


class SharedRows(CassandraBase):
    async def cas_subscription(
        self, queue: QueueId, name: str, expected_revision: int, new: SubscriptionDef
    ) -> bool:
        resolve = self._by_change(
            self._q.subscription_read,
            (str(queue), name),
            new.change,
            lambda row: row is not None and int(row.revision) == expected_revision,
        )
        params = (
            new.position, new.done, new.generation, expected_revision + 1, new.change,
            str(queue), name, expected_revision,
        )  # fmt: skip
        applied, _ = await self._lwt("cas_subscription", self._q.subscription_cas, params, resolve)
        return applied

    async def read_sub_deliveries(
        self, queue: QueueId, name: str, bucket: int, generation: int
    ) -> list[SubDelivery]:
        rows = await self._run(self._q.deliveries_read, (str(queue), name, bucket, generation))
        return [_delivery_of(r) for r in rows]

    async def insert_sub_deliveries(
        self, queue: QueueId, name: str, bucket: int, generation: int, rows: list[SubDelivery]
    ) -> list[bool]:
        check_unique([r.monoton for r in rows])
        key = (str(queue), name, bucket, generation)

        def add(batch: BatchStatement, i: int) -> None:
            add_prepared(batch, self._q.delivery_insert, (*key, rows[i].monoton, *_state(rows[i])))

        def ours(i: int, stored: Any) -> bool:
            return bool(stored.last_change == rows[i].change)

        monotons = [r.monoton for r in rows]
        return await self._delivery_batch(
            "insert_sub_deliveries", key, monotons, add, lambda _i, _s: False, ours, absent=True
        )

    async def cas_sub_deliveries(
        self, queue: QueueId, name: str, bucket: int, generation: int,
        entries: list[DeliveryChange],
    ) -> list[bool]:  # fmt: skip
        check_unique([new.monoton for _, _, new, _ in entries])
        key = (str(queue), name, bucket, generation)

        def add(batch: BatchStatement, i: int) -> None:
            version, tag, new, take = entries[i]
            condition = (*key, new.monoton, version, tag)
            params: tuple[Any, ...]
            if take:
                params = (
                    new.version, new.delivery_count, new.next_visible_on, new.finished,
                    new.updated_at, new.first_delivered_at, new.change, *condition,
                )  # fmt: skip
                add_prepared(batch, self._q.delivery_cas, params)
            else:
                params = (
                    new.version, new.next_visible_on, new.finished, new.updated_at, new.change,
                    *condition,
                )  # fmt: skip
                add_prepared(batch, self._q.delivery_change, params)

        def holds(i: int, stored: Any) -> bool:
            version, tag, _, _ = entries[i]
            return bool(stored.version == version and stored.tag == tag)

        def ours(i: int, stored: Any) -> bool:
            return bool(stored.last_change == entries[i][2].change)

        monotons = [new.monoton for _, _, new, _ in entries]
        return await self._delivery_batch("cas_sub_deliveries", key, monotons, add, holds, ours)

    async def delete_sub_deliveries(self, queue: QueueId, name: str, bucket: int) -> None:
        await self._run(self._q.deliveries_delete, (str(queue), name, bucket))

    async def _delivery_batch(
        self,
        primitive: str,
        key: tuple[str, str, int, int],
        monotons: list[int],
        add: Callable[[BatchStatement, int], None],
        holds: Callable[[int, Any], bool],
        ours: Callable[[int, Any], bool],
        *,
        absent: bool = False,
    ) -> list[bool]:
        if not monotons:
            return []
        read_some = (self._q.deliveries_read_some, key)
        return await self._batch_rounds(
            primitive, monotons, add, read_some, holds, ours, absent_holds=absent
        )
