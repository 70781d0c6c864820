"""The store's FIFO rows (schemas 0013, 0016): group entries, the groups, deduplication
claims, receive attempts."""

from __future__ import annotations

from typing import Any

import msgspec
from cassandra.query import BatchStatement, BatchType

from cassieq.model import MessageRow, QueueId
from cassieq.store.base import DedupClaim
from cassieq.store.cassandra.binding import add_prepared
from cassieq.store.cassandra.execution import APPLIED, CONTENDED, REJECTED, CassandraBase
from cassieq.store.cassandra.lwt import Outcome

_encode = msgspec.msgpack.Encoder().encode
_decode_row = msgspec.msgpack.Decoder(MessageRow).decode


def _claim_of(key: str, r: Any) -> DedupClaim:
    return DedupClaim(
        key=key,
        monoton=int(r.monoton),
        partition=int(r.partition or 0),
        tag=r.tag,
        created_at=int(r.created_at),
        row=_decode_row(r.message),
        written=bool(r.written),
    )


class FifoRows(CassandraBase):
    async def add_group_messages(
        self, queue: QueueId, group: str, monotons: list[int], now: int, ttl_s: int
    ) -> None:
        if len(monotons) == 1:
            await self._run(self._q.group_message_add, (str(queue), group, monotons[0], now, ttl_s))
            return
        # One partition: an unlogged batch is one mutation (a put of a batch to one group
        # wrote one row after another before).
        batch = BatchStatement(batch_type=BatchType.UNLOGGED)
        for monoton in monotons:
            add_prepared(batch, self._q.group_message_add, (str(queue), group, monoton, now, ttl_s))
        await self._run(batch)

    async def read_group_messages(self, queue: QueueId, group: str, limit: int) -> list[int]:
        rows = await self._run(self._q.group_messages_read, (str(queue), group, limit))
        return [int(r.monoton) for r in rows]

    async def remove_group_messages(self, queue: QueueId, group: str, monotons: list[int]) -> None:
        await self._run(self._q.group_messages_remove, (str(queue), group, monotons))

    async def touch_group(self, queue: QueueId, group: str, now: int, ttl_s: int) -> None:
        await self._run(self._q.group_touch, (str(queue), group, now, ttl_s))

    async def list_groups(self, queue: QueueId, after: str, limit: int) -> list[str]:
        rows = await self._run(self._q.groups_list, (str(queue), after, limit))
        return [r.group_id for r in rows]

    async def read_dedup(self, queue: QueueId, key: str) -> DedupClaim | None:
        rows = await self._run(self._q.dedup_read, (str(queue), key))
        return _claim_of(key, rows[0]) if rows and rows[0].tag is not None else None

    async def _dedup_serial(self, queue: QueueId, key: str) -> DedupClaim | None:
        rows = await self._read_serial(self._q.dedup_read, (str(queue), key))
        return _claim_of(key, rows[0]) if rows and rows[0].tag is not None else None

    async def claim_dedup(self, claim: DedupClaim, queue: QueueId, ttl_s: int) -> DedupClaim | None:
        qid = str(queue)

        async def resolve() -> Outcome:
            # The claim's tag is this call's own: a row carrying it is this write.
            stored = await self._dedup_serial(queue, claim.key)
            if stored is None:
                return CONTENDED
            return APPLIED if stored.tag == claim.tag else REJECTED

        params = (
            qid, claim.key, claim.monoton, claim.partition, claim.tag, claim.created_at,
            claim.written, _encode(claim.row), ttl_s,
        )  # fmt: skip
        applied, _ = await self._lwt("claim_dedup", self._q.dedup_claim, params, resolve)
        if applied:
            return None
        # Not applied: a claim is kept. Read at SERIAL, as the condition saw it (a claim can
        # also have expired since: then say so by claiming again).
        stored = await self._dedup_serial(queue, claim.key)
        if stored is None:
            return await self.claim_dedup(claim, queue, ttl_s)
        return stored

    async def replace_dedup(
        self, queue: QueueId, expected_tag: str, claim: DedupClaim, ttl_s: int
    ) -> bool:
        async def resolve() -> Outcome:
            stored = await self._dedup_serial(queue, claim.key)
            if stored is not None and stored.tag == claim.tag:
                return APPLIED
            return CONTENDED if stored is not None and stored.tag == expected_tag else REJECTED

        params = (
            ttl_s, claim.monoton, claim.partition, claim.tag, claim.created_at, claim.written,
            _encode(claim.row), str(queue), claim.key, expected_tag,
        )  # fmt: skip
        applied, _ = await self._lwt("replace_dedup", self._q.dedup_replace, params, resolve)
        return applied

    async def mark_dedup_written(self, queue: QueueId, key: str, ttl_s: int) -> None:
        await self._run(self._q.dedup_mark_written, (ttl_s, str(queue), key))

    async def write_receive_attempt(
        self, queue: QueueId, attempt_id: str, now: int, answer: bytes, ttl_s: int
    ) -> None:
        await self._run(self._q.receive_attempt_write, (str(queue), attempt_id, now, answer, ttl_s))

    async def read_receive_attempt(
        self, queue: QueueId, attempt_id: str
    ) -> tuple[int, bytes] | None:
        rows = await self._run(self._q.receive_attempt_read, (str(queue), attempt_id))
        if not rows or rows[0].answer is None:
            return None
        return int(rows[0].created_at), bytes(rows[0].answer)
