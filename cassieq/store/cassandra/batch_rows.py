"""v2 batches on one bucket partition: conditional batches of takes, retirements and acks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cassandra.query import BatchStatement

from cassieq.model import (
    MessageRow,
    QueueId,
)
from cassieq.store.batches import (
    AckEntry,
    by_bytes,
    check_ack_entries,
    check_cas_entries,
    row_bytes,
)
from cassieq.store.cassandra.binding import add_prepared
from cassieq.store.cassandra.execution import (
    CassandraBase,
)
from cassieq.store.cassandra.rows import (
    message_retire_values,
    message_set_values,
    message_take_values,
)
from cassieq.tokens import new_token


class MessageBatches(CassandraBase):
    # ----------------------------------------------------------------- v2 batches

    async def cas_messages(
        self,
        queue: QueueId,
        bucket: int,
        entries: list[tuple[int, MessageRow]],
        *,
        unsealed: bool = False,
        keep_body: bool = False,
        units: list[int] | None = None,
    ) -> list[bool]:
        check_cas_entries(entries, units)
        if units is not None:  # applied together or not at all: one batch whatever its size
            return await self._cas_messages(
                queue, bucket, entries, unsealed=unsealed, keep_body=keep_body, units=units
            )
        applied: list[bool] = []
        # Rows that carry their bodies: large ones go in parts, one after the other (parts
        # sent at once would only contend for the partition's Paxos). Without the bodies
        # (nor the attributes, never written here) a batch of rows is small.
        parts = [entries] if keep_body else by_bytes(entries, lambda e: row_bytes(e[1]))
        for part in parts:
            applied += await self._cas_messages(
                queue, bucket, part, unsealed=unsealed, keep_body=keep_body
            )
        return applied

    async def _cas_messages(
        self,
        queue: QueueId,
        bucket: int,
        entries: list[tuple[int, MessageRow]],
        *,
        unsealed: bool,
        keep_body: bool,
        units: list[int] | None = None,
    ) -> list[bool]:
        qid, q = str(queue), self._q
        full = q.message_cas_unsealed if unsealed else q.message_cas
        take = q.message_take_unsealed if unsealed else q.message_take
        retire = q.message_retire_unsealed if unsealed else q.message_retire

        def add(batch: BatchStatement, i: int) -> None:
            expected, row = entries[i]
            key = (qid, bucket, row.monoton, expected)
            if not keep_body:
                add_prepared(batch, full, (*message_set_values(row), *key))
            elif row.acked:
                add_prepared(batch, retire, (*message_retire_values(row), *key))
            else:
                add_prepared(batch, take, (*message_take_values(row), *key))

        def holds(i: int, stored: Any) -> bool:
            # A "not applied" answer carries sealed_at only when it was in the condition.
            if stored.version != entries[i][0]:
                return False
            return not (unsealed and stored.sealed_at is not None)

        def ours(i: int, stored: Any) -> bool:
            return bool(stored.last_change == entries[i][1].change)

        monotons = [row.monoton for _, row in entries]
        return await self._batch_lwt(
            "cas_messages", qid, bucket, monotons, add, holds, ours, units=units
        )

    async def ack_messages(
        self, queue: QueueId, bucket: int, entries: list[AckEntry], now: int
    ) -> list[bool]:
        check_ack_entries(entries)
        if not entries:
            return []
        qid, token = str(queue), new_token()

        def add(batch: BatchStatement, i: int) -> None:
            monoton, version, tag = entries[i]
            params = (version + 1, now, now, token, qid, bucket, monoton, version, tag)
            add_prepared(batch, self._q.message_ack, params)

        def holds(i: int, stored: Any) -> bool:
            _, version, tag = entries[i]
            return bool(stored.version == version and stored.tag == tag)

        def ours(i: int, stored: Any) -> bool:
            return bool(stored.last_change == token)

        monotons = [monoton for monoton, _, _ in entries]
        return await self._batch_lwt("ack_messages", qid, bucket, monotons, add, holds, ours)

    async def _batch_lwt(
        self,
        primitive: str,
        qid: str,
        bucket: int,
        monotons: list[int],
        add: Callable[[BatchStatement, int], None],
        holds: Callable[[int, Any], bool],
        ours: Callable[[int, Any], bool],
        *,
        units: list[int] | None = None,
    ) -> list[bool]:
        """One conditional batch on the bucket partition per round (``batch_lwt``)."""
        read_some = (self._q.messages_read_sealed, (qid, bucket))
        return await self._batch_rounds(
            primitive, monotons, add, read_some, holds, ours, units=units
        )
