"""The Store on Apache Cassandra: prepared statements, an LWT for every change that must
not race, every LWT outcome resolved (``lwt.py``), the driver bridged to asyncio."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from typing import Any

from cassandra import (
    CoordinationFailure,
    InvalidRequest,
    OperationTimedOut,
    ReadTimeout,
    Unavailable,
    WriteTimeout,
)
from cassandra.cluster import Cluster, NoHostAvailable, Session
from cassandra.connection import ConnectionBusy, ConnectionException
from cassandra.protocol import IsBootstrappingErrorMessage, OverloadedErrorMessage, ServerError
from cassandra.query import BatchStatement, BatchType

from cassieq.config import Settings
from cassieq.model import (
    Account,
    BucketState,
    DeletionJob,
    InvisibilityState,
    KeyspaceSecret,
    MessageRow,
    QueueDefinition,
    QueueId,
    RedriveTask,
    StatsSnapshot,
)
from cassieq.store.base import (
    AckEntry,
    PointerKind,
    SchemaStatus,
    StoreUnavailable,
    by_bytes,
    check_ack_entries,
    check_cas_entries,
    row_bytes,
)
from cassieq.store.cassandra.batch_lwt import run_batch_lwt
from cassieq.store.cassandra.binding import add_prepared
from cassieq.store.cassandra.lwt import (
    LwtRetry,
    Outcome,
    Resolver,
    run_lwt,
)
from cassieq.store.cassandra.rows import (
    account_of,
    bucket_of,
    insert_values,
    invisibility_of,
    message_of,
    message_retire_values,
    message_set_values,
    message_take_values,
    queue_of,
    queue_params,
    queue_replace_params,
    redrive_task_of,
    secret_of,
)
from cassieq.store.cassandra.schema import schema_status
from cassieq.store.cassandra.session import (
    connect,
    consistency_level,
    execute_async,
)
from cassieq.store.cassandra.statements import Statements
from cassieq.store.observer import LwtObserver, LwtTally
from cassieq.tokens import new_token

# Reads and idempotent writes (never an LWT) are retried on these, then answered as
# StoreUnavailable (a 503): every way a node that dies, restarts or is overloaded can fail
# a request. Anything else escaping is a bug in the statement (InvalidRequest...).
_RETRYABLE = (
    Unavailable,
    NoHostAvailable,
    ReadTimeout,
    WriteTimeout,
    CoordinationFailure,  # ReadFailure / WriteFailure: a replica answered with a failure
    OperationTimedOut,
    ConnectionException,
    ConnectionBusy,
    ServerError,
    OverloadedErrorMessage,
    IsBootstrappingErrorMessage,
)
_MAX_TRIES = 6
# Rows per page of a bucket read: a bucket holds up to 10,000 messages of up to 256 KiB.
BUCKET_PAGE_ROWS = 256
# Rows per page of a listing (accounts, an account's queue rows): deleted queue names keep
# their rows, so an account's partition grows with the names a tenant ever used; no single
# response of the coordinator holds more than this many of them.
LIST_PAGE_ROWS = 200
MARKER_TTL_S = 7 * 24 * 3600  # markers of a dropped bucket outlive any writer

APPLIED, REJECTED, CONTENDED = Outcome.APPLIED, Outcome.REJECTED, Outcome.CONTENDED


class CassandraStore:
    """The Store on Apache Cassandra: prepared statements, LWT for every change that
    must not race, execution bridged from the driver's threads to asyncio."""

    def __init__(
        self,
        session: Session,
        keyspace: str,
        *,
        serial_consistency: str = "LOCAL_SERIAL",
        lwt_retry: LwtRetry | None = None,
        observer: LwtObserver | None = None,
    ) -> None:
        self._session = session
        self._serial = consistency_level(serial_consistency)
        # Reads are of one row or a bounded slice and come whole; bucket partitions (up to
        # 10,000 messages) and listings are read in pages (read_bucket, list_*).
        session.default_fetch_size = None
        self.keyspace = keyspace
        self._q = Statements(session, keyspace)
        self._lwt_retry = lwt_retry or LwtRetry()
        self.lwt_tally = LwtTally()
        self.observer: LwtObserver = observer or self.lwt_tally

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

    # ----------------------------------------------------------------- execution

    async def _run(
        self, statement: Any, params: Sequence[Any] | None = None, *, page_rows: int | None = None
    ) -> list[Any]:
        """A read or an idempotent write, retried; with ``page_rows``, read in pages."""
        for attempt in range(_MAX_TRIES):
            try:
                if page_rows is not None:
                    return await execute_async(
                        self._session, statement, params, page_rows=page_rows
                    )
                return await self._once(statement, params)
            except _RETRYABLE as exc:
                if attempt == _MAX_TRIES - 1:
                    raise StoreUnavailable(f"Cassandra did not answer: {exc!r}") from exc
                await asyncio.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
        raise AssertionError("unreachable")

    def _once(self, statement: Any, params: Sequence[Any] | None) -> asyncio.Future[list[Any]]:
        return execute_async(self._session, statement, params)

    async def _lwt(
        self, primitive: str, statement: Any, params: Sequence[Any], resolve: Resolver
    ) -> tuple[bool, Any]:
        """Run an LWT until its outcome is known (see ``lwt.run_lwt``); never re-sent
        blindly, never assumed: a failure after sending is read back with ``resolve``."""
        return await run_lwt(
            primitive,
            lambda: self._once(statement, params),
            resolve,
            retry=self._lwt_retry,
            observer=self.observer,
        )

    async def _read_serial(self, statement: Any, params: Sequence[Any]) -> list[Any]:
        bound = statement.bind(params)
        bound.consistency_level = self._serial
        return await self._run(bound)

    def _by_change(
        self, read: Any, key: Sequence[Any], change: str, holds: Callable[[Any], bool]
    ) -> Resolver:
        """Resolve an LWT that writes a change token: applied if the row carries ours;
        else contended while ``holds(row)`` (the condition, on the row read at SERIAL,
        None for no row), rejected otherwise."""

        async def resolve() -> Outcome:
            rows = await self._read_serial(read, key)
            row = rows[0] if rows else None
            if row is not None and row.last_change == change:
                return APPLIED
            return CONTENDED if holds(row) else REJECTED

        return resolve

    async def applied_migrations(self) -> dict[int, str]:
        """Schema file number → checksum, as recorded by `cassieq schema apply` (/ready
        compares them with the files this server was built with)."""
        try:
            rows = await self._run(
                f"SELECT number, checksum FROM {self.keyspace}.schema_migrations"
            )
        except InvalidRequest:
            return {}  # no such table (or keyspace): nothing applied
        return {int(r.number): str(r.checksum) for r in rows}

    async def schema_status(self) -> SchemaStatus:
        return schema_status(await self.applied_migrations())

    # ----------------------------------------------------------------- accounts

    async def insert_account(self, account: Account) -> bool:
        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.account_read, (account.name,))
            if not rows:
                return CONTENDED
            # Keys are 64 random bytes each: equal keys mean this very insert.
            return APPLIED if dict(rows[0].keys or {}) == account.keys else REJECTED

        applied, _ = await self._lwt(
            "insert_account",
            self._q.account_insert,
            (account.name, account.keys, account.created_at),
            resolve,
        )
        return applied

    async def read_account(self, name: str) -> Account | None:
        rows = await self._run(self._q.account_read, (name,))
        return account_of(rows[0]) if rows else None

    async def list_accounts(self) -> list[Account]:
        rows = await self._run(self._q.account_list, (), page_rows=LIST_PAGE_ROWS)
        return sorted((account_of(r) for r in rows), key=lambda a: a.name)

    async def delete_account(self, name: str, created_at: int) -> None:
        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.account_read, (name,))
            if not rows:
                return APPLIED  # gone: by this delete or another, the account is deleted
            # Still that account: not applied, its condition holding. Another one: a later
            # account of the name, left alone.
            return CONTENDED if account_of(rows[0]).created_at == created_at else REJECTED

        await self._lwt("delete_account", self._q.account_delete, (name, created_at), resolve)

    async def mark_account_deleting(self, name: str, created_at: int, now: int) -> None:
        await self._run(self._q.account_deletion_mark, (name, created_at, now))

    async def read_account_deletion(self, name: str) -> tuple[int, int] | None:
        rows = await self._run(self._q.account_deletion_read, (name,))
        if not rows:
            return None
        return int(rows[0].account_created_at), int(rows[0].started_at or 0)

    async def unmark_account_deleting(self, name: str) -> None:
        await self._run(self._q.account_deletion_unmark, (name,))

    async def add_key(self, account: str, key_name: str, key: str) -> bool:
        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.account_read, (account,))
            if not rows or rows[0].created_at is None:
                return REJECTED  # no such account
            keys = rows[0].keys or {}
            if keys.get(key_name) == key:
                return APPLIED
            return REJECTED if key_name in keys else CONTENDED

        applied, _ = await self._lwt(
            "add_key", self._q.key_add, (key_name, key, account, key_name), resolve
        )
        return applied

    async def remove_key(self, account: str, key_name: str) -> None:
        await self._run(self._q.key_remove, (key_name, account))

    async def replace_key(self, account: str, key_name: str, expected: str, new: str) -> bool:
        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.account_read, (account,))
            stored = (rows[0].keys or {}).get(key_name) if rows else None
            # A new value is fresh ciphertext (a random nonce): equal means ours.
            if stored == new:
                return APPLIED
            return CONTENDED if stored == expected else REJECTED

        params = (key_name, new, account, key_name, expected)
        applied, _ = await self._lwt("replace_key", self._q.key_replace, params, resolve)
        return applied

    # ----------------------------------------------------------------- secrets

    async def read_secret(self, name: str) -> KeyspaceSecret | None:
        rows = await self._run(self._q.secret_read, (name,))
        return secret_of(rows[0]) if rows and rows[0].value is not None else None

    async def insert_secret(self, secret: KeyspaceSecret) -> bool:
        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.secret_read, (secret.name,))
            if not rows or rows[0].value is None:
                return CONTENDED
            # A value is random bytes: the stored one is ours only if this insert applied.
            return APPLIED if rows[0].value == secret.value else REJECTED

        params = (
            secret.name, secret.value, secret.version, secret.previous, secret.previous_until,
            secret.created_at,
        )  # fmt: skip
        applied, _ = await self._lwt("insert_secret", self._q.secret_insert, params, resolve)
        return applied

    async def replace_secret(self, secret: KeyspaceSecret, expected_version: int) -> bool:
        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.secret_read, (secret.name,))
            row = rows[0] if rows else None
            if row is not None and row.value == secret.value:
                return APPLIED
            holds = row is not None and row.version == expected_version
            return CONTENDED if holds else REJECTED

        params = (
            secret.value, secret.version, secret.previous, secret.previous_until, secret.name,
            expected_version,
        )  # fmt: skip
        applied, _ = await self._lwt("replace_secret", self._q.secret_replace, params, resolve)
        return applied

    # ----------------------------------------------------------------- queues

    async def insert_queue(self, queue: QueueDefinition) -> QueueDefinition | None:
        resolve = self._queue_resolver(queue, lambda row: row is None)
        applied, row = await self._lwt(
            "insert_queue", self._q.queue_insert, queue_params(queue), resolve
        )
        if applied:
            return None
        if row is not None and row.version is not None:
            return queue_of(row)
        return await self.read_queue(queue.account, queue.name)

    async def replace_queue(
        self, queue: QueueDefinition, expected_version: int, expected_rev: int | None = None
    ) -> bool:
        def holds(row: Any) -> bool:
            if row is None or int(row.version) != expected_version:
                return False
            return expected_rev is None or int(row.options_rev or 0) == expected_rev

        resolve = self._queue_resolver(queue, holds)
        p = queue_replace_params(queue)
        # UPDATE order: every column but the key, then the key, then the condition.
        params: tuple[Any, ...] = (*p[2:], p[0], p[1], expected_version)
        stmt = self._q.queue_replace
        if expected_rev == 0:
            stmt = self._q.queue_replace_rev_first
        elif expected_rev is not None:
            stmt, params = self._q.queue_replace_rev, (*params, expected_rev)
        applied, _ = await self._lwt("replace_queue", stmt, params, resolve)
        return applied

    def _queue_resolver(self, queue: QueueDefinition, holds: Callable[[Any], bool]) -> Resolver:
        """Applied if the queue row is stored as ours (a queue row carries no change
        token: its whole content, creation time included, tells ours from another's)."""

        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.queue_read, (queue.account, queue.name))
            row = rows[0] if rows else None
            if row is not None and queue_of(row) == queue:
                return APPLIED
            return CONTENDED if holds(row) else REJECTED

        return resolve

    async def read_queue(self, account: str, name: str) -> QueueDefinition | None:
        rows = await self._run(self._q.queue_read, (account, name))
        return queue_of(rows[0]) if rows else None

    async def list_queues(self, account: str) -> list[QueueDefinition]:
        rows = await self._run(self._q.queue_list, (account,), page_rows=LIST_PAGE_ROWS)
        return [queue_of(r) for r in rows]

    async def list_queues_page(
        self, account: str, after: str | None, limit: int
    ) -> list[QueueDefinition]:
        if after is None:
            rows = await self._run(self._q.queue_page_first, (account, limit))
        else:
            rows = await self._run(self._q.queue_page_after, (account, after, limit))
        return [queue_of(r) for r in rows]

    # ----------------------------------------------------------------- monotons

    async def read_monoton(self, queue: QueueId) -> int:
        rows = await self._run(self._q.monoton_read, (str(queue),))
        return int(rows[0].value) if rows and rows[0].value is not None else 0

    async def cas_monoton(self, queue: QueueId, expected: int, new: int) -> tuple[bool, int]:
        token = new_token()
        qid = str(queue)
        seen: list[int] = []  # the values the read backs found, at SERIAL

        def holds(row: Any) -> bool:
            seen.append(_value(row))
            return seen[-1] == expected

        resolve = self._by_change(self._q.monoton_read, (qid,), token, holds)
        stmt, params = _first_or_cas(
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
            value = _value(rows[0] if rows else None)
            # A pointer only moves forward; anyone who moved it to `new` did our work.
            if value == new:
                return APPLIED
            return CONTENDED if value == expected else REJECTED

        stmt, params = _first_or_cas(
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
        stmt, params = _first_or_cas(
            self._q.invisibility_cas_first, self._q.invisibility_cas, values, expected_rev
        )
        applied, _ = await self._lwt("cas_invisibility", stmt, params, resolve)
        return applied

    # ----------------------------------------------------------------- leases

    async def acquire_lease(self, name: str, owner: str, now: int, ttl_ms: int) -> bool:
        # The TTL only clears rows of owners long gone; expiry is decided by expires_at,
        # on the engine's clock, so tests can move time.
        ttl_s = max(60, ttl_ms * 10 // 1000)
        expires = now + ttl_ms
        current = await self._read_serial(self._q.lease_read, (name,))
        held = current[0] if current else None
        if held is not None and held.owner != owner and held.expires_at > now:
            return False

        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.lease_read, (name,))
            row = rows[0] if rows else None
            if row is not None and row.owner == owner and row.expires_at == expires:
                return APPLIED
            if held is None:
                return CONTENDED if row is None else REJECTED
            unchanged = row is not None and (row.owner, row.expires_at) == (
                held.owner,
                held.expires_at,
            )
            return CONTENDED if unchanged else REJECTED

        params: tuple[Any, ...]
        if held is None:
            statement, params = self._q.lease_insert, (name, owner, expires, ttl_s)
        else:
            statement = self._q.lease_take
            params = (ttl_s, owner, expires, name, held.owner, held.expires_at)
        applied, _ = await self._lwt("acquire_lease", statement, params, resolve)
        return applied

    # ----------------------------------------------------------------- deletion

    async def add_deletion_job(self, job: DeletionJob) -> None:
        q = job.queue
        await self._run(
            self._q.job_insert,
            (str(q), q.account, q.queue, q.version, job.bucket_size, job.created_at),
        )

    async def list_deletion_jobs(self, after: QueueId | None, limit: int) -> list[DeletionJob]:
        if after is None:
            rows = await self._run(self._q.job_page_first, (limit,))
        else:
            rows = await self._run(self._q.job_page_after, (str(after), limit))
        return [
            DeletionJob(
                queue=QueueId(r.account_name, r.queue_name, r.version),
                bucket_size=r.bucket_size,
                created_at=r.created_at,
            )
            for r in rows
        ]

    async def remove_deletion_job(self, job: DeletionJob) -> None:
        await self._run(self._q.job_delete, (str(job.queue),))

    async def delete_queue_state(self, queue: QueueId, buckets: int) -> None:
        qid = str(queue)
        for start in range(0, buckets, 64):
            await asyncio.gather(
                *(
                    self._run(self._q.bucket_drop, (qid, b))
                    for b in range(start, min(start + 64, buckets))
                )
            )
        await self._run(self._q.monoton_delete, (qid,))
        await self._run(self._q.invisibility_delete, (qid,))
        for kind in ("reader", "repair"):
            await self._run(self._q.pointer_delete, (qid, kind))

    # ----------------------------------------------------------------- statistics

    async def write_stats_snapshot(self, snapshot: StatsSnapshot) -> None:
        s, q = snapshot, snapshot.queue
        await self._run(
            self._q.stats_write,
            (
                q.version, s.computed_at, s.published, s.acked, s.dead_lettered, s.in_flight,
                s.backlog, s.delivered, s.delivery_count_histogram, s.oldest_unacked_age_s,
                s.ack_latency_p50_ms, s.ack_latency_p95_ms, s.ack_latency_p99_ms,
                s.rows_scanned, q.account, q.queue,
            ),
        )  # fmt: skip

    async def delete_stats_snapshot(self, account: str, queue: str) -> None:
        await self._run(self._q.stats_delete, (account, queue))

    # ----------------------------------------------------------------- redrive tasks
    async def write_redrive_task(self, queue: QueueId, task: RedriveTask) -> None:
        t = task
        await self._run(
            self._q.redrive_task_write,
            (
                str(queue), t.id, t.status, t.moved, t.total, t.failed, t.target, t.updated_at,
                t.started_at, t.max_per_second,
            ),
        )  # fmt: skip

    async def read_redrive_task(self, queue: QueueId, task_id: str) -> RedriveTask | None:
        rows = await self._run(self._q.redrive_task_read, (str(queue), task_id))
        return redrive_task_of(rows[0]) if rows else None

    async def list_redrive_tasks(self, queue: QueueId) -> list[RedriveTask]:
        rows = await self._run(self._q.redrive_task_list, (str(queue),))
        return [redrive_task_of(r) for r in rows]

    async def cancel_redrive_task(self, queue: QueueId, task_id: str) -> None:
        await self._run(self._q.redrive_task_cancel, (str(queue), task_id))

    async def read_stats_snapshot(self, account: str, queue: str) -> StatsSnapshot | None:
        rows = await self._run(self._q.stats_read, (account, queue))
        if not rows:
            return None
        r = rows[0]
        return StatsSnapshot(
            queue=QueueId(account, queue, int(r.version)),
            computed_at=r.computed_at,
            published=r.published,
            acked=r.acked,
            dead_lettered=r.dead_lettered,
            in_flight=r.in_flight,
            backlog=r.backlog,
            delivered=r.delivered,
            delivery_count_histogram=dict(r.delivery_count_histogram or {}),
            oldest_unacked_age_s=r.oldest_unacked_age_s,
            ack_latency_p50_ms=r.ack_latency_p50_ms,
            ack_latency_p95_ms=r.ack_latency_p95_ms,
            ack_latency_p99_ms=r.ack_latency_p99_ms,
            rows_scanned=r.rows_scanned,
        )

    # ----------------------------------------------------------------- v2 batches

    async def cas_messages(
        self,
        queue: QueueId,
        bucket: int,
        entries: list[tuple[int, MessageRow]],
        *,
        unsealed: bool = False,
        keep_body: bool = False,
    ) -> list[bool]:
        check_cas_entries(entries)
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
        return await self._batch_lwt("cas_messages", qid, bucket, monotons, add, holds, ours)

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
    ) -> list[bool]:
        """One conditional batch on the bucket partition per round (``batch_lwt``)."""

        async def send(indexes: list[int]) -> list[Any]:
            batch = BatchStatement(batch_type=BatchType.UNLOGGED)
            for i in indexes:
                add(batch, i)
            return await self._once(batch, ())

        async def read(indexes: list[int]) -> list[Any]:
            wanted = [monotons[i] for i in indexes]
            return await self._read_serial(self._q.messages_read_sealed, (qid, bucket, wanted))

        return await run_batch_lwt(
            primitive,
            monotons,
            send,
            read,
            holds,
            ours,
            retry=self._lwt_retry,
            observer=self.observer,
        )


def _value(row: Any) -> int:
    """A counter-like row's value (monoton, pointer); an absent row or value is 0."""
    return 0 if row is None or row.value is None else int(row.value)


def _first_or_cas(
    first: Any, cas: Any, params: tuple[Any, ...], expected: int
) -> tuple[Any, tuple[Any, ...]]:
    """The statement for moving a value from ``expected``: ``IF ... = null`` for the first
    write (0: none yet), else ``IF ... = expected`` with it as the last parameter."""
    return (first, params) if expected == 0 else (cas, (*params, expected))
