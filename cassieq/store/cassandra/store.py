"""The Store on Apache Cassandra: prepared statements, an LWT for every change that must
not race, every LWT outcome resolved (``lwt.py``), the driver bridged to asyncio. Its parts:
``execution.py`` (running statements and LWTs), ``tenancy_rows.py``, ``upkeep_rows.py``,
``batch_rows.py``; here the queue's own rows: monotons, buckets, pointers."""

from __future__ import annotations

from typing import Any

from cassandra.cluster import Cluster
from cassandra.query import BatchStatement, BatchType

from cassieq.config import Settings
from cassieq.model import (
    BucketState,
    InvisibilityState,
    MessageRow,
    QueueId,
)
from cassieq.store.base import (
    PointerKind,
)
from cassieq.store.cassandra.batch_rows import MessageBatches
from cassieq.store.cassandra.binding import add_prepared
from cassieq.store.cassandra.execution import (
    APPLIED,
    BUCKET_PAGE_ROWS,
    CONTENDED,
    MARKER_TTL_S,
    REJECTED,
    counter_value,
    first_or_cas,
)
from cassieq.store.cassandra.fifo_rows import FifoRows
from cassieq.store.cassandra.lwt import (
    Outcome,
)
from cassieq.store.cassandra.rows import (
    bucket_of,
    insert_values,
    invisibility_of,
    message_of,
    message_set_values,
)
from cassieq.store.cassandra.session import (
    connect,
)
from cassieq.store.cassandra.shared_rows import SharedRows
from cassieq.store.cassandra.subscription_rows import SubscriptionRows
from cassieq.store.cassandra.tenancy_rows import TenancyRows
from cassieq.store.cassandra.upkeep_rows import UpkeepRows
from cassieq.tokens import new_token

__all__ = ["BUCKET_PAGE_ROWS", "MARKER_TTL_S", "CassandraStore"]


class CassandraStore(
    TenancyRows, UpkeepRows, MessageBatches, FifoRows, SubscriptionRows, SharedRows
):
    """The Store on Apache Cassandra: prepared statements, LWT for every change that
    must not race, execution bridged from the driver's threads to asyncio."""

    @classmethod
    def from_settings(cls, settings: Settings) -> tuple[Cluster, CassandraStore]:
        cluster, session = connect(
            settings.cassandra_hosts,
            settings.cassandra_port,
            consistency=settings.consistency,
            serial_consistency=settings.serial_consistency,
        )
        store = cls(session, settings.keyspace, serial_consistency=settings.serial_consistency)
        return cluster, store

    # ----------------------------------------------------------------- monotons

    async def read_monoton(self, queue: QueueId) -> int:
        rows = await self._run(self._q.monoton_read, (str(queue),))
        return int(rows[0].value) if rows and rows[0].value is not None else 0

    async def cas_monoton(self, queue: QueueId, expected: int, new: int) -> tuple[bool, int]:
        token = new_token()
        qid = str(queue)
        seen: list[int] = []  # the values the read backs found, at SERIAL

        def holds(row: Any) -> bool:
            seen.append(counter_value(row))
            return seen[-1] == expected

        resolve = self._by_change(self._q.monoton_read, (qid,), token, holds)
        stmt, params = first_or_cas(
            self._q.monoton_cas_first, self._q.monoton_cas, (new, token, qid), expected
        )
        applied, row = await self._lwt("cas_monoton", stmt, params, resolve)
        if applied:
            return True, new
        if row is not None:
            # No monoton row at all answers "not applied" with the [applied] column alone.
            return False, int(getattr(row, "value", None) or 0)
        # Settled by a read back, which found the value that failed the condition: no
        # second read (one at a weaker consistency could show a replica behind, lower
        # than expected, which the engine takes for a deleted queue).
        return False, seen[-1]

    # ----------------------------------------------------------------- buckets

    async def read_bucket(self, queue: QueueId, bucket: int) -> BucketState:
        rows = await self._run(
            self._q.bucket_read, (str(queue), bucket), page_rows=BUCKET_PAGE_ROWS
        )
        return bucket_of(bucket, rows)

    async def read_message(self, queue: QueueId, bucket: int, monoton: int) -> MessageRow | None:
        rows = await self._run(self._q.message_read, (str(queue), bucket, monoton))
        return message_of(rows[0]) if rows and rows[0].version is not None else None

    async def insert_messages(
        self, queue: QueueId, bucket: int, rows: list[MessageRow], now: int
    ) -> bool:
        qid, q = str(queue), self._q
        batch = BatchStatement(batch_type=BatchType.UNLOGGED)
        # The guard carries the bucket's condition: nothing is written into a finalized
        # bucket. IF NOT EXISTS on each row makes a second try of the same write a no-op.
        add_prepared(batch, q.bucket_guard, (now, qid, bucket))
        for r in rows:
            short, values = insert_values(r)
            insert = q.message_insert_new if short else q.message_insert
            add_prepared(batch, insert, (qid, bucket, *values))

        async def written() -> bool:
            # Monotons are never handed out twice: a row at ours is our write (the batch
            # is one partition's, so all of it or none).
            stored = await self._read_serial(self._q.message_read, (qid, bucket, rows[0].monoton))
            return bool(stored) and stored[0].version is not None

        async def resolve() -> Outcome:
            if await written():
                return APPLIED
            markers = await self._read_serial(self._q.bucket_markers, (qid, bucket))
            finalized = bool(markers) and markers[0].finalized_at is not None
            return REJECTED if finalized else CONTENDED

        applied, answer = await self._lwt("insert_messages", batch, (), resolve)
        if applied or answer is None:
            return applied  # answered, or settled by the read back (which saw no row)
        # Cassandra said not applied: the bucket is finalized, or a row exists already,
        # which can only be ours (an earlier try of this write).
        return await written()

    async def cas_message(
        self,
        queue: QueueId,
        bucket: int,
        expected_version: int,
        row: MessageRow,
        *,
        unsealed: bool = False,
    ) -> bool:
        qid = str(queue)

        def holds(stored: Any) -> bool:
            if stored is None or stored.version != expected_version:
                return False
            return not (unsealed and stored.sealed_at is not None)

        resolve = self._by_change(
            self._q.message_read_sealed, (qid, bucket, row.monoton), row.change, holds
        )
        params = (*message_set_values(row), qid, bucket, row.monoton, expected_version)
        statement = self._q.message_cas_unsealed if unsealed else self._q.message_cas
        applied, _ = await self._lwt("cas_message", statement, params, resolve)
        return applied

    async def ack_message(
        self, queue: QueueId, bucket: int, monoton: int, version: int, tag: str, now: int
    ) -> bool:
        qid, token = str(queue), new_token()

        def holds(stored: Any) -> bool:
            return stored is not None and stored.version == version and stored.tag == tag

        resolve = self._by_change(self._q.message_read, (qid, bucket, monoton), token, holds)
        params = (version + 1, now, now, token, qid, bucket, monoton, version, tag)
        applied, _ = await self._lwt("ack_message", self._q.message_ack, params, resolve)
        return applied

    async def seal_bucket(self, queue: QueueId, bucket: int, now: int) -> int:
        seal = self._q.bucket_seal
        return await self._marker("seal_bucket", seal, "sealed_at", str(queue), bucket, now)

    async def finalize_bucket(self, queue: QueueId, bucket: int, now: int) -> None:
        finalize = self._q.bucket_finalize
        await self._marker("finalize_bucket", finalize, "finalized_at", str(queue), bucket, now)

    async def _marker(
        self, primitive: str, statement: Any, column: str, qid: str, bucket: int, now: int
    ) -> int:
        """Set a bucket marker unless set (first one wins); the stored time, once stored.

        Whoever set it, the bucket is marked: a read back that finds it set is done, one
        that finds it unset (the usual timeout under contention with the bucket's takes and
        acks) sends it again. It is never taken as set before it is stored: a pointer that
        passed a bucket on a seal assumed stored once stalled a queue for good.
        """
        found: list[int] = []

        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.bucket_markers, (qid, bucket))
            value = getattr(rows[0], column) if rows else None
            if value is None:
                return CONTENDED
            found.append(int(value))
            return APPLIED

        applied, row = await self._lwt(primitive, statement, (now, qid, bucket), resolve)
        if found:
            return found[-1]
        if applied:
            return now
        # Not applied: it was set already, and a lost LWT answers with the stored value.
        return int(getattr(row, column))

    async def delete_bucket(self, queue: QueueId, bucket: int) -> None:
        qid = str(queue)
        markers = await self._run(self._q.bucket_markers, (qid, bucket))
        await self._run(self._q.bucket_delete_rows, (qid, bucket))
        if markers and markers[0].finalized_at is not None:
            # Re-written with a TTL so the empty partition eventually goes too.
            m = markers[0]
            await self._run(
                self._q.bucket_markers_ttl, (MARKER_TTL_S, m.sealed_at, m.finalized_at, qid, bucket)
            )

    # ----------------------------------------------------------------- pointers

    async def read_pointer(self, queue: QueueId, kind: PointerKind) -> int:
        rows = await self._run(self._q.pointer_read, (str(queue), kind))
        return int(rows[0].value) if rows and rows[0].value is not None else 0

    async def cas_pointer(self, queue: QueueId, kind: PointerKind, expected: int, new: int) -> bool:
        qid = str(queue)

        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.pointer_read, (qid, kind))
            value = counter_value(rows[0] if rows else None)
            # A pointer only moves forward; anyone who moved it to `new` did our work.
            if value == new:
                return APPLIED
            return CONTENDED if value == expected else REJECTED

        stmt, params = first_or_cas(
            self._q.pointer_cas_first, self._q.pointer_cas, (new, qid, kind), expected
        )
        applied, _ = await self._lwt(f"cas_pointer_{kind}", stmt, params, resolve)
        return applied

    async def read_invisibility(self, queue: QueueId) -> InvisibilityState:
        rows = await self._run(self._q.invisibility_read, (str(queue),))
        return invisibility_of(rows[0]) if rows and rows[0].rev is not None else InvisibilityState()

    async def cas_invisibility(
        self, queue: QueueId, expected_rev: int, new: InvisibilityState
    ) -> bool:
        qid, token = str(queue), new_token()

        def holds(stored: Any) -> bool:
            rev = stored.rev if stored is not None else None
            return (rev or 0) == expected_rev

        resolve = self._by_change(self._q.invisibility_read, (qid,), token, holds)
        s = new.summary
        values = (
            new.rev, new.bucket, new.stragglers, s.published, s.acked, s.dead_lettered,
            s.delivered, s.expired, s.purged, token, qid,
        )  # fmt: skip
        stmt, params = first_or_cas(
            self._q.invisibility_cas_first, self._q.invisibility_cas, values, expected_rev
        )
        applied, _ = await self._lwt("cas_invisibility", stmt, params, resolve)
        return applied
