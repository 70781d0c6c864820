"""The store's FIFO rows (schemas 0013, 0016, 0017): group entries, the groups,
deduplication claims (by queue, and by group), receive attempts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from cassandra.query import BatchStatement, BatchType

from cassieq.model import MessageRow, QueueId
from cassieq.store.base import DedupClaim, LwtUndecided
from cassieq.store.batches import by_bytes, row_bytes
from cassieq.store.cassandra.batch_lwt import run_batch_lwt
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


def _claims_of(rows: list[Any]) -> dict[str, DedupClaim]:
    # A row whose claim is gone but for a late `written` cell has no tag: no claim.
    return {r.dedup_key: _claim_of(r.dedup_key, r) for r in rows if r.tag is not None}


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

    # --------------------------------------------- deduplication by group (0017)
    async def read_group_dedup(
        self, queue: QueueId, group: str, keys: Sequence[str]
    ) -> dict[str, DedupClaim]:
        if not keys:
            return {}
        rows = await self._run(self._q.group_dedup_read, (str(queue), group, list(keys)))
        return _claims_of(rows)

    async def _group_dedup_serial(
        self, queue: QueueId, group: str, keys: Sequence[str]
    ) -> dict[str, DedupClaim]:
        rows = await self._read_serial(self._q.group_dedup_read, (str(queue), group, list(keys)))
        return _claims_of(rows)

    async def claim_group_dedup(
        self, queue: QueueId, group: str, claims: Sequence[DedupClaim], ttl_s: int
    ) -> dict[str, DedupClaim]:
        """One conditional batch on the group's partition (``batch_lwt``: all or nothing,
        so a round that finds some keys claimed goes again with the others), then the kept
        claims of the keys this call did not claim, read at SERIAL as the condition saw them.
        Each claim holds its message: a batch holds at most MAX_BATCH_BYTES of them (over
        Cassandra's request limit, the whole batch would be refused), one after another."""
        held: dict[str, DedupClaim] = {}
        for part in by_bytes(claims, lambda c: row_bytes(c.row)):
            held.update(await self._claim_group_part(queue, group, part, ttl_s))
        return held

    async def _claim_group_part(
        self, queue: QueueId, group: str, claims: Sequence[DedupClaim], ttl_s: int
    ) -> dict[str, DedupClaim]:
        qid, pending = str(queue), list(claims)
        held: dict[str, DedupClaim] = {}
        for _ in range(self._lwt_retry.attempts):
            if not pending:
                return held
            keys = [c.key for c in pending]

            async def send(indexes: list[int], todo: list[DedupClaim] = pending) -> list[Any]:
                batch = BatchStatement(batch_type=BatchType.UNLOGGED)
                for i in indexes:
                    c = todo[i]
                    add_prepared(batch, self._q.group_dedup_claim, (
                        qid, group, c.key, c.monoton, c.partition, c.tag, c.created_at,
                        c.written, _encode(c.row), ttl_s,
                    ))  # fmt: skip
                return await self._once(batch, ())

            async def read(indexes: list[int], keys: list[str] = keys) -> list[Any]:
                return await self._read_serial(
                    self._q.group_dedup_read, (qid, group, [keys[i] for i in indexes])
                )

            def ours(i: int, row: Any, todo: list[DedupClaim] = pending) -> bool:
                return bool(row.tag == todo[i].tag)

            applied = await run_batch_lwt(
                "claim_group_dedup", keys, send, read, lambda i, row: False, ours,
                retry=self._lwt_retry, observer=self.observer, absent_holds=True,
                key_of=lambda row: getattr(row, "dedup_key", None),
            )  # fmt: skip
            lost = [c for c, ok in zip(pending, applied, strict=True) if not ok]
            kept = {}
            if lost:
                kept = await self._group_dedup_serial(queue, group, [c.key for c in lost])
            held.update(kept)
            # A claim gone since (its TTL ran out in between): claim its key again.
            pending = [c for c in lost if c.key not in kept]
        if pending:
            raise LwtUndecided("claim_group_dedup", "the keys' claims kept vanishing")
        return held

    async def replace_group_dedup(
        self, queue: QueueId, group: str, expected_tag: str, claim: DedupClaim, ttl_s: int
    ) -> bool:
        async def resolve() -> Outcome:
            stored = (await self._group_dedup_serial(queue, group, [claim.key])).get(claim.key)
            if stored is not None and stored.tag == claim.tag:
                return APPLIED
            return CONTENDED if stored is not None and stored.tag == expected_tag else REJECTED

        params = (
            ttl_s, claim.monoton, claim.partition, claim.tag, claim.created_at, claim.written,
            _encode(claim.row), str(queue), group, claim.key, expected_tag,
        )  # fmt: skip
        applied, _ = await self._lwt(
            "replace_group_dedup", self._q.group_dedup_replace, params, resolve
        )
        return applied

    async def mark_group_dedup_written(
        self, queue: QueueId, group: str, keys: Sequence[str], ttl_s: int
    ) -> None:
        if keys:
            params = (ttl_s, str(queue), group, list(keys))
            await self._run(self._q.group_dedup_mark_written, params)

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
