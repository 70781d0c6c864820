"""Everything that speaks CQL: connecting, applying the schema, and the Store."""

from __future__ import annotations

import asyncio
import collections
import functools
import hashlib
import os
import random
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any

from cassandra import (
    ConsistencyLevel,
    OperationTimedOut,
    ReadTimeout,
    RequestValidationException,
    Unavailable,
    WriteTimeout,
)
from cassandra.cluster import (
    EXEC_PROFILE_DEFAULT,
    Cluster,
    ExecutionProfile,
    NoHostAvailable,
    Session,
)
from cassandra.connection import ConnectionException
from cassandra.policies import DCAwareRoundRobinPolicy, FallthroughRetryPolicy
from cassandra.query import BatchStatement, BatchType

from cassieq.config import Settings
from cassieq.model import (
    Account,
    BucketState,
    Counts,
    DeletionJob,
    InvisibilityState,
    MessageRow,
    QueueDefinition,
    QueueId,
    QueueOptions,
    StatsSnapshot,
)
from cassieq.store.base import PointerKind
from cassieq.tokens import new_token

_KEYSPACE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,47}$")
_MIGRATION_FILE_RE = re.compile(r"^(\d{4})_[a-z0-9_]+\.cql$")
_TABLE_RE = re.compile(r"\b(FROM|INTO|UPDATE)\s+(\w+)")


def check_keyspace(keyspace: str, error: type[Exception] = ValueError) -> None:
    # Keyspace names are put into CQL text: only names of the plain form get there.
    if not _KEYSPACE_RE.match(keyspace):
        raise error(f"invalid keyspace name {keyspace!r}")


class CassandraUnavailable(RuntimeError):
    """No Cassandra node answered at the configured address."""


class SchemaError(RuntimeError):
    """The schema files or the recorded migrations are inconsistent."""


@functools.lru_cache(maxsize=512)
def _row_class(columns: tuple[str, ...]) -> Any:
    # The names the driver's own factory gives ("[applied]" -> "applied").
    names = [re.sub(r"[^A-Za-z0-9_]", "", c) or "column" for c in columns]
    return collections.namedtuple("Row", names, rename=True)


def cached_row_factory(columns: list[str], rows: list[tuple[Any, ...]]) -> list[Any]:
    """Rows as named tuples, like the driver's default factory, but with one class per
    column list: the default builds a new namedtuple class for every result (a top item
    of the server's profile)."""
    make = _row_class(tuple(columns))._make
    return [make(r) for r in rows]


def connect(
    hosts: Sequence[str],
    port: int,
    *,
    consistency: str = "LOCAL_QUORUM",
    serial_consistency: str = "LOCAL_SERIAL",
    keyspace: str | None = None,
    connect_timeout: float = 5.0,
) -> tuple[Cluster, Session]:
    """Open a session, or raise CassandraUnavailable naming the address tried."""
    profile = ExecutionProfile(
        load_balancing_policy=DCAwareRoundRobinPolicy(),
        consistency_level=_level(consistency),
        serial_consistency_level=_level(serial_consistency),
        request_timeout=15.0,
        # The driver's default policy re-sends a request after a connection error, which
        # would replay an LWT; the store retries what is safe to retry itself.
        retry_policy=FallthroughRetryPolicy(),
        row_factory=cached_row_factory,
    )
    cluster = Cluster(
        list(hosts),
        port=port,
        protocol_version=5,
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        connect_timeout=connect_timeout,
        control_connection_timeout=connect_timeout,
    )
    try:
        session = cluster.connect(keyspace)
    except NoHostAvailable as exc:
        cluster.shutdown()
        where = ", ".join(f"{h}:{port}" for h in hosts)
        raise CassandraUnavailable(
            f"no Cassandra answered at {where} (start one with `cassieq cassandra start`): {exc}"
        ) from exc
    return cluster, session


def _level(name: str) -> int:
    try:
        return int(getattr(ConsistencyLevel, name.upper()))
    except AttributeError:
        raise ValueError(f"unknown consistency level {name!r}") from None


def server_version(session: Session) -> str:
    row = session.execute("SELECT release_version FROM system.local").one()
    return str(row.release_version)


# --------------------------------------------------------------------------- schema


@dataclass(frozen=True)
class Migration:
    number: int
    name: str
    checksum: str
    statements: tuple[str, ...]


def load_migrations(schema_dir: Path) -> list[Migration]:
    migrations = []
    for path in sorted(schema_dir.glob("*.cql")):
        match = _MIGRATION_FILE_RE.match(path.name)
        if not match:
            raise SchemaError(f"{path.name}: schema files are named NNNN_snake_case.cql")
        text = path.read_text()
        migrations.append(
            Migration(
                number=int(match.group(1)),
                name=path.name,
                checksum=hashlib.sha256(text.encode()).hexdigest(),
                statements=tuple(split_statements(text)),
            )
        )
    numbers = [m.number for m in migrations]
    if len(set(numbers)) != len(numbers):
        raise SchemaError(f"two schema files share a number in {schema_dir}")
    return migrations


def split_statements(text: str) -> list[str]:
    """Split a CQL file on ';' ending a line; drop '--' comment lines."""
    lines = [ln for ln in text.splitlines() if not ln.strip().startswith("--")]
    statements, current = [], []
    for line in lines:
        current.append(line)
        if line.rstrip().endswith(";"):
            statement = "\n".join(current).strip().rstrip(";").strip()
            if statement:
                statements.append(statement)
            current = []
    if "\n".join(current).strip():
        raise SchemaError("the last statement of a schema file does not end with ';'")
    return statements


def apply_schema(session: Session, keyspace: str, replication: str, schema_dir: Path) -> list[str]:
    """Create the keyspace and apply every migration not yet recorded; return those applied.

    Every statement is ``IF NOT EXISTS``-safe, and each file is recorded with its
    checksum once all its statements ran, so a run cut short is simply re-run.
    """
    check_keyspace(keyspace, SchemaError)
    migrations = load_migrations(schema_dir)
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = {replication}")
    session.execute(
        f"CREATE TABLE IF NOT EXISTS {keyspace}.schema_migrations ("
        "number int PRIMARY KEY, name text, checksum text, applied_at timestamp)"
    )
    session.set_keyspace(keyspace)
    done = {
        r.number: r for r in session.execute("SELECT number, name, checksum FROM schema_migrations")
    }
    applied = []
    for m in migrations:
        previous = done.get(m.number)
        if previous is not None:
            if previous.checksum != m.checksum:
                raise SchemaError(
                    f"{m.name} changed after it was applied to keyspace {keyspace}; "
                    "add a new migration instead of editing an applied one"
                )
            continue
        for statement in m.statements:
            session.execute(statement, timeout=60.0)
        session.execute(
            "INSERT INTO schema_migrations (number, name, checksum, applied_at) "
            "VALUES (%s, %s, %s, toTimestamp(now()))",
            (m.number, m.name, m.checksum),
        )
        applied.append(m.name)
    _wait_for_schema_agreement(session)
    return applied


def drop_keyspace(session: Session, keyspace: str) -> None:
    check_keyspace(keyspace, SchemaError)
    session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=120)
    _wait_for_schema_agreement(session)


def _wait_for_schema_agreement(session: Session, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not session.cluster.control_connection.wait_for_schema_agreement(wait_time=timeout):
        if time.monotonic() > deadline:
            raise SchemaError("the cluster did not agree on the schema in time")


def default_schema_dir() -> Path:
    """schema/cassandra of the source tree, or $CASSIEQ_SCHEMA_DIR (set in the Docker image)."""
    env = os.environ.get("CASSIEQ_SCHEMA_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "schema" / "cassandra"


# --------------------------------------------------------------------------- the Store

# Reads and idempotent writes (never an LWT) are retried on these.
_RETRYABLE = (
    Unavailable,
    NoHostAvailable,
    ReadTimeout,
    WriteTimeout,
    OperationTimedOut,
    ConnectionException,
)
_MAX_TRIES = 6
MARKER_TTL_S = 7 * 24 * 3600  # markers of a dropped bucket outlive any writer


class CassandraStore:
    """The Store on Apache Cassandra: prepared statements, LWT for every change that
    must not race, execution bridged from the driver's threads to asyncio."""

    def __init__(
        self, session: Session, keyspace: str, *, serial_consistency: str = "LOCAL_SERIAL"
    ) -> None:
        self._session = session
        self._serial = _level(serial_consistency)
        # Partitions here are bounded (a bucket, an account's queues): no paging needed.
        session.default_fetch_size = None
        self.keyspace = keyspace
        self._q = _Statements(session, keyspace)

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

    async def _run(self, statement: Any, params: Sequence[Any] | None = None) -> list[Any]:
        for attempt in range(_MAX_TRIES):
            try:
                return await self._once(statement, params)
            except _RETRYABLE:
                if attempt == _MAX_TRIES - 1:
                    raise
                await asyncio.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
        raise AssertionError("unreachable")

    def _once(self, statement: Any, params: Sequence[Any] | None) -> asyncio.Future[list[Any]]:
        return execute_async(self._session, statement, params)

    async def _cas(
        self,
        statement: Any,
        params: Sequence[Any],
        resolve: Callable[[], Awaitable[bool]],
    ) -> tuple[bool, Any]:
        """Run an LWT once; if its answer does not arrive, ask ``resolve`` (a SERIAL read).

        Any failure after sending (a timeout, a lost connection, Unavailable raised after
        the proposal was accepted, CAS_WRITE_UNKNOWN, which this driver does not map) may
        hide an applied write. Re-sending could apply it twice or report "not applied" for
        our own write, so it is never re-sent: Cassandra is asked what happened.
        """
        try:
            rows = await self._once(statement, params)
        except RequestValidationException:
            raise  # refused before executing: a bug in the statement, not an outcome
        except Exception:
            return await resolve(), None
        row = rows[0]
        return bool(row.applied), row

    async def _read_serial(self, statement: Any, params: Sequence[Any]) -> list[Any]:
        bound = statement.bind(params)
        bound.consistency_level = self._serial
        return await self._run(bound)

    def _stored_change_is(
        self, read: Any, key: Sequence[Any], change: str
    ) -> Callable[[], Awaitable[bool]]:
        """Resolve an unknown LWT outcome: applied if the row now carries our change token."""

        async def resolve() -> bool:
            rows = await self._read_serial(read, key)
            return bool(rows) and rows[0].last_change == change

        return resolve

    # ----------------------------------------------------------------- accounts

    async def insert_account(self, account: Account) -> bool:
        async def resolve() -> bool:
            rows = await self._read_serial(self._q.account_read, (account.name,))
            # Keys are 64 random bytes each: equal keys mean this very insert.
            return bool(rows) and dict(rows[0].keys or {}) == account.keys

        applied, _ = await self._cas(
            self._q.account_insert, (account.name, account.keys, account.created_at), resolve
        )
        return applied

    async def read_account(self, name: str) -> Account | None:
        rows = await self._run(self._q.account_read, (name,))
        return _account(rows[0]) if rows else None

    async def list_accounts(self) -> list[Account]:
        rows = await self._run(self._q.account_list)
        return sorted((_account(r) for r in rows), key=lambda a: a.name)

    async def delete_account(self, name: str) -> None:
        await self._run(self._q.account_delete, (name,))

    async def add_key(self, account: str, key_name: str, key: str) -> bool:
        async def resolve() -> bool:
            rows = await self._read_serial(self._q.account_read, (account,))
            return bool(rows) and (rows[0].keys or {}).get(key_name) == key

        applied, _ = await self._cas(self._q.key_add, (key_name, key, account, key_name), resolve)
        return applied

    async def remove_key(self, account: str, key_name: str) -> None:
        await self._run(self._q.key_remove, (key_name, account))

    # ----------------------------------------------------------------- queues

    async def insert_queue(self, queue: QueueDefinition) -> QueueDefinition | None:
        resolve = self._stored_queue_is(queue)
        applied, row = await self._cas(self._q.queue_insert, _queue_params(queue), resolve)
        if applied:
            return None
        if row is not None and row.version is not None:
            return _queue(row)
        return await self.read_queue(queue.account, queue.name)

    async def replace_queue(self, queue: QueueDefinition, expected_version: int) -> bool:
        resolve = self._stored_queue_is(queue)
        p = _queue_params(queue)
        # UPDATE order: every column but the key, then the key, then the condition.
        params = (*p[2:], p[0], p[1], expected_version)
        applied, _ = await self._cas(self._q.queue_replace, params, resolve)
        return applied

    def _stored_queue_is(self, queue: QueueDefinition) -> Callable[[], Awaitable[bool]]:
        """Resolve an unknown LWT outcome on a queue row: applied if it is stored as ours."""

        async def resolve() -> bool:
            rows = await self._read_serial(self._q.queue_read, (queue.account, queue.name))
            return bool(rows) and _queue(rows[0]) == queue

        return resolve

    async def read_queue(self, account: str, name: str) -> QueueDefinition | None:
        rows = await self._run(self._q.queue_read, (account, name))
        return _queue(rows[0]) if rows else None

    async def list_queues(self, account: str) -> list[QueueDefinition]:
        rows = await self._run(self._q.queue_list, (account,))
        return [_queue(r) for r in rows]

    # ----------------------------------------------------------------- monotons

    async def read_monoton(self, queue: QueueId) -> int:
        rows = await self._run(self._q.monoton_read, (str(queue),))
        return int(rows[0].value) if rows and rows[0].value is not None else 0

    async def cas_monoton(self, queue: QueueId, expected: int, new: int) -> tuple[bool, int]:
        token = new_token()
        qid = str(queue)
        resolve = self._stored_change_is(self._q.monoton_read, (qid,), token)
        stmt, params = _first_or_cas(
            self._q.monoton_cas_first, self._q.monoton_cas, (new, token, qid), expected
        )
        applied, row = await self._cas(stmt, params, resolve)
        if applied:
            return True, new
        if row is not None:
            return False, int(row.value or 0)
        return False, await self.read_monoton(queue)

    # ----------------------------------------------------------------- buckets

    async def read_bucket(self, queue: QueueId, bucket: int) -> BucketState:
        rows = await self._run(self._q.bucket_read, (str(queue), bucket))
        return _bucket(bucket, rows)

    async def read_message(self, queue: QueueId, bucket: int, monoton: int) -> MessageRow | None:
        rows = await self._run(self._q.message_read, (str(queue), bucket, monoton))
        return _message(rows[0]) if rows and rows[0].version is not None else None

    async def insert_messages(
        self, queue: QueueId, bucket: int, rows: list[MessageRow], now: int
    ) -> bool:
        qid = str(queue)
        batch = BatchStatement(batch_type=BatchType.UNLOGGED)
        # The guard carries the bucket's condition: nothing is written into a finalized
        # bucket. IF NOT EXISTS on each row makes a second try of the same write a no-op.
        batch.add(self._q.bucket_guard, (now, qid, bucket))
        for r in rows:
            batch.add(self._q.message_insert, (qid, bucket, *_message_values(r)))

        async def written() -> bool:
            # Monotons are never handed out twice: a row at ours is our write.
            stored = await self._read_serial(self._q.message_read, (qid, bucket, rows[0].monoton))
            return bool(stored) and stored[0].version is not None

        applied, _ = await self._cas(batch, (), written)
        return applied or await written()

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
        resolve = self._stored_change_is(
            self._q.message_read, (qid, bucket, row.monoton), row.change
        )
        values = _message_values(row)[1:]  # all but the monoton (it is in the key)
        params = (*values, qid, bucket, row.monoton, expected_version)
        statement = self._q.message_cas_unsealed if unsealed else self._q.message_cas
        applied, _ = await self._cas(statement, params, resolve)
        return applied

    async def ack_message(
        self, queue: QueueId, bucket: int, monoton: int, version: int, tag: str, now: int
    ) -> bool:
        qid, token = str(queue), new_token()
        resolve = self._stored_change_is(self._q.message_read, (qid, bucket, monoton), token)
        params = (version + 1, now, now, token, qid, bucket, monoton, version, tag)
        applied, _ = await self._cas(self._q.message_ack, params, resolve)
        return applied

    async def seal_bucket(self, queue: QueueId, bucket: int, now: int) -> int:
        qid = str(queue)
        # Whoever sealed it, the answer is the stored time, read below.
        applied, row = await self._cas(self._q.bucket_seal, (now, qid, bucket), _settled)
        if applied and row is not None:
            return now
        if row is not None and row.sealed_at is not None:
            return int(row.sealed_at)  # a lost LWT answers with the winner's seal time
        # The answer was lost (unknown outcome): the stored time decides.
        state = await self._read_serial(self._q.bucket_markers, (qid, bucket))
        return int(state[0].sealed_at) if state and state[0].sealed_at is not None else now

    async def finalize_bucket(self, queue: QueueId, bucket: int, now: int) -> None:
        # Finalized by us or by someone else: finalized either way.
        await self._cas(self._q.bucket_finalize, (now, str(queue), bucket), _settled)

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

        async def resolve() -> bool:
            # A pointer only moves forward; anyone who moved it to `new` did our work.
            rows = await self._read_serial(self._q.pointer_read, (qid, kind))
            return bool(rows) and rows[0].value == new

        stmt, params = _first_or_cas(
            self._q.pointer_cas_first, self._q.pointer_cas, (new, qid, kind), expected
        )
        applied, _ = await self._cas(stmt, params, resolve)
        return applied

    async def read_invisibility(self, queue: QueueId) -> InvisibilityState:
        rows = await self._run(self._q.invisibility_read, (str(queue),))
        return _invisibility(rows[0]) if rows and rows[0].rev is not None else InvisibilityState()

    async def cas_invisibility(
        self, queue: QueueId, expected_rev: int, new: InvisibilityState
    ) -> bool:
        qid, token = str(queue), new_token()
        resolve = self._stored_change_is(self._q.invisibility_read, (qid,), token)
        s = new.summary
        values = (
            new.rev, new.bucket, new.stragglers, s.published, s.acked, s.dead_lettered,
            s.delivered, token, qid,
        )  # fmt: skip
        stmt, params = _first_or_cas(
            self._q.invisibility_cas_first, self._q.invisibility_cas, values, expected_rev
        )
        applied, _ = await self._cas(stmt, params, resolve)
        return applied

    # ----------------------------------------------------------------- leases

    async def acquire_lease(self, name: str, owner: str, now: int, ttl_ms: int) -> bool:
        # The TTL only clears rows of owners long gone; expiry is decided by expires_at,
        # on the engine's clock, so tests can move time.
        ttl_s = max(60, ttl_ms * 10 // 1000)
        expires = now + ttl_ms

        async def resolve() -> bool:
            rows = await self._read_serial(self._q.lease_read, (name,))
            return bool(rows) and rows[0].owner == owner and rows[0].expires_at == expires

        current = await self._read_serial(self._q.lease_read, (name,))
        if not current:
            applied, _ = await self._cas(
                self._q.lease_insert, (name, owner, expires, ttl_s), resolve
            )
            return applied
        held = current[0]
        if held.owner != owner and held.expires_at > now:
            return False
        applied, _ = await self._cas(
            self._q.lease_take, (ttl_s, owner, expires, name, held.owner, held.expires_at), resolve
        )
        return applied

    async def release_lease(self, name: str, owner: str) -> None:
        await self._cas(self._q.lease_release, (name, owner), _settled)

    # ----------------------------------------------------------------- deletion

    async def add_deletion_job(self, job: DeletionJob) -> None:
        q = job.queue
        await self._run(
            self._q.job_insert,
            (str(q), q.account, q.queue, q.version, job.bucket_size, job.created_at),
        )

    async def list_deletion_jobs(self) -> list[DeletionJob]:
        rows = await self._run(self._q.job_list)
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


async def _settled() -> bool:
    """For LWTs whose outcome does not matter once sent (the state is read afterwards)."""
    return True


def _first_or_cas(
    first: Any, cas: Any, params: tuple[Any, ...], expected: int
) -> tuple[Any, tuple[Any, ...]]:
    """The statement for moving a value from ``expected``: ``IF ... = null`` for the first
    write (0: none yet), else ``IF ... = expected`` with it as the last parameter."""
    return (first, params) if expected == 0 else (cas, (*params, expected))


def execute_async(
    session: Session, statement: Any, params: Sequence[Any] | None
) -> asyncio.Future[list[Any]]:
    """A request on the driver's threads, answered on this event loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[list[Any]] = loop.create_future()
    response = session.execute_async(statement, params)
    response.add_callbacks(
        lambda rows: loop.call_soon_threadsafe(_resolve, future, list(rows or ())),
        lambda exc: loop.call_soon_threadsafe(_reject, future, exc),
    )
    return future


def _resolve(future: asyncio.Future[list[Any]], rows: list[Any]) -> None:
    if not future.done():
        future.set_result(rows)


def _reject(future: asyncio.Future[list[Any]], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


_MESSAGE_COLUMNS = (
    "monoton, message, version, delivery_count, acked, dead_lettered, republished_to, "
    "next_visible_on, tag, created_at, updated_at, acked_at, last_change"
)
_QUEUE_COLUMNS = (
    "account_name, queue_name, version, status, bucket_size, max_delivery_count, "
    "repair_poll_seconds, finalize_seconds, delete_buckets_after_finalize, dlq_name, "
    "strict_fifo, created_at"
)


class _Statements:
    """Every CQL statement of the store, prepared once."""

    def __init__(self, s: Session, keyspace: str) -> None:
        check_keyspace(keyspace)

        def p(cql: str) -> Any:
            # Fully qualified tables: a session-wide keyspace with prepared statements is
            # ambiguous (Cassandra warns about it on every prepare).
            return s.prepare(_TABLE_RE.sub(rf"\1 {keyspace}.\2", cql))

        self.account_insert = p(
            "INSERT INTO accounts (account_name, keys, created_at) VALUES (?, ?, ?) IF NOT EXISTS"
        )
        self.account_read = p(
            "SELECT account_name, keys, created_at FROM accounts WHERE account_name = ?"
        )
        self.account_list = p("SELECT account_name, keys, created_at FROM accounts")
        self.account_delete = p("DELETE FROM accounts WHERE account_name = ?")
        self.key_add = p(
            "UPDATE accounts SET keys[?] = ? WHERE account_name = ? "
            "IF created_at != null AND keys[?] = null"
        )
        self.key_remove = p("DELETE keys[?] FROM accounts WHERE account_name = ?")

        self.queue_insert = p(
            f"INSERT INTO queues ({_QUEUE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "IF NOT EXISTS"
        )
        self.queue_replace = p(
            "UPDATE queues SET version = ?, status = ?, bucket_size = ?, max_delivery_count = ?, "
            "repair_poll_seconds = ?, finalize_seconds = ?, delete_buckets_after_finalize = ?, "
            "dlq_name = ?, strict_fifo = ?, created_at = ? "
            "WHERE account_name = ? AND queue_name = ? IF version = ?"
        )
        self.queue_read = p(
            f"SELECT {_QUEUE_COLUMNS} FROM queues WHERE account_name = ? AND queue_name = ?"
        )
        self.queue_list = p(f"SELECT {_QUEUE_COLUMNS} FROM queues WHERE account_name = ?")

        self.monoton_read = p("SELECT value, last_change FROM monotons WHERE queue_id = ?")
        self.monoton_cas = p(
            "UPDATE monotons SET value = ?, last_change = ? WHERE queue_id = ? IF value = ?"
        )
        self.monoton_cas_first = p(
            "UPDATE monotons SET value = ?, last_change = ? WHERE queue_id = ? IF value = null"
        )
        self.monoton_delete = p("DELETE FROM monotons WHERE queue_id = ?")

        self.bucket_read = p(
            f"SELECT {_MESSAGE_COLUMNS}, sealed_at, finalized_at FROM messages "
            "WHERE queue_id = ? AND bucket = ?"
        )
        self.bucket_markers = p(
            "SELECT sealed_at, finalized_at FROM messages WHERE queue_id = ? AND bucket = ? LIMIT 1"
        )
        self.message_read = p(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages "
            "WHERE queue_id = ? AND bucket = ? AND monoton = ?"
        )
        self.bucket_guard = p(
            "UPDATE messages SET last_write_at = ? WHERE queue_id = ? AND bucket = ? "
            "IF finalized_at = null"
        )
        self.message_insert = p(
            f"INSERT INTO messages (queue_id, bucket, {_MESSAGE_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS"
        )
        message_set = (
            "UPDATE messages SET message = ?, version = ?, delivery_count = ?, acked = ?, "
            "dead_lettered = ?, republished_to = ?, next_visible_on = ?, tag = ?, created_at = ?, "
            "updated_at = ?, acked_at = ?, last_change = ? "
            "WHERE queue_id = ? AND bucket = ? AND monoton = ? IF version = ?"
        )
        self.message_cas = p(message_set)
        # The reader's takes: only from a bucket it has not left (the static seal marker).
        self.message_cas_unsealed = p(message_set + " AND sealed_at = null")
        # An ack changes only what it must: no read of the row first.
        self.message_ack = p(
            "UPDATE messages SET version = ?, acked = true, acked_at = ?, updated_at = ?, "
            "last_change = ? WHERE queue_id = ? AND bucket = ? AND monoton = ? "
            "IF version = ? AND tag = ?"
        )
        self.bucket_seal = p(
            "UPDATE messages SET sealed_at = ? WHERE queue_id = ? AND bucket = ? "
            "IF sealed_at = null"
        )
        self.bucket_finalize = p(
            "UPDATE messages SET finalized_at = ? WHERE queue_id = ? AND bucket = ? "
            "IF finalized_at = null"
        )
        self.bucket_delete_rows = p(
            "DELETE FROM messages WHERE queue_id = ? AND bucket = ? AND monoton >= 0"
        )
        self.bucket_markers_ttl = p(
            "UPDATE messages USING TTL ? SET sealed_at = ?, finalized_at = ? "
            "WHERE queue_id = ? AND bucket = ?"
        )
        self.bucket_drop = p("DELETE FROM messages WHERE queue_id = ? AND bucket = ?")

        self.pointer_read = p("SELECT value FROM pointers WHERE queue_id = ? AND kind = ?")
        self.pointer_cas = p(
            "UPDATE pointers SET value = ? WHERE queue_id = ? AND kind = ? IF value = ?"
        )
        self.pointer_cas_first = p(
            "UPDATE pointers SET value = ? WHERE queue_id = ? AND kind = ? IF value = null"
        )
        self.pointer_delete = p("DELETE FROM pointers WHERE queue_id = ? AND kind = ?")

        invisibility_set = (
            "UPDATE invisibility SET rev = ?, bucket = ?, stragglers = ?, published = ?, "
            "acked = ?, dead_lettered = ?, delivered = ?, last_change = ? WHERE queue_id = ? "
        )
        self.invisibility_read = p(
            "SELECT rev, bucket, stragglers, published, acked, dead_lettered, delivered, "
            "last_change FROM invisibility WHERE queue_id = ?"
        )
        self.invisibility_cas = p(invisibility_set + "IF rev = ?")
        self.invisibility_cas_first = p(invisibility_set + "IF rev = null")
        self.invisibility_delete = p("DELETE FROM invisibility WHERE queue_id = ?")

        self.lease_read = p("SELECT owner, expires_at FROM leases WHERE name = ?")
        self.lease_insert = p(
            "INSERT INTO leases (name, owner, expires_at) VALUES (?, ?, ?) "
            "IF NOT EXISTS USING TTL ?"
        )
        self.lease_take = p(
            "UPDATE leases USING TTL ? SET owner = ?, expires_at = ? WHERE name = ? "
            "IF owner = ? AND expires_at = ?"
        )
        self.lease_release = p("DELETE FROM leases WHERE name = ? IF owner = ?")

        self.job_insert = p(
            "INSERT INTO deletion_jobs (shard, queue_id, account_name, queue_name, version, "
            "bucket_size, created_at) VALUES (0, ?, ?, ?, ?, ?, ?)"
        )
        self.job_list = p(
            "SELECT account_name, queue_name, version, bucket_size, created_at "
            "FROM deletion_jobs WHERE shard = 0"
        )
        self.job_delete = p("DELETE FROM deletion_jobs WHERE shard = 0 AND queue_id = ?")

        stats_columns = (
            "version, computed_at, published, acked, dead_lettered, in_flight, backlog, "
            "delivered, delivery_count_histogram, oldest_unacked_age_s, ack_latency_p50_ms, "
            "ack_latency_p95_ms, ack_latency_p99_ms, rows_scanned"
        )
        self.stats_write = p(
            f"UPDATE queue_stats SET {', '.join(c + ' = ?' for c in stats_columns.split(', '))} "
            "WHERE account_name = ? AND queue_name = ?"
        )
        self.stats_read = p(
            f"SELECT {stats_columns} FROM queue_stats WHERE account_name = ? AND queue_name = ?"
        )


# --------------------------------------------------------------------------- row mapping


def _account(r: Any) -> Account:
    # accounts.created_at is a CQL timestamp (0001): the driver reads it as a datetime.
    created = r.created_at
    created_ms = 0 if created is None else round(created.replace(tzinfo=UTC).timestamp() * 1000)
    return Account(name=r.account_name, keys=dict(r.keys or {}), created_at=created_ms)


def _queue(r: Any) -> QueueDefinition:
    return QueueDefinition(
        account=r.account_name,
        name=r.queue_name,
        version=int(r.version),
        status=r.status,
        options=QueueOptions(
            bucket_size=r.bucket_size,
            max_delivery_count=r.max_delivery_count,
            repair_poll_seconds=r.repair_poll_seconds,
            finalize_seconds=r.finalize_seconds,
            delete_buckets_after_finalize=bool(r.delete_buckets_after_finalize),
            dlq_name=r.dlq_name,
            strict_fifo=bool(r.strict_fifo),
        ),
        created_at=int(r.created_at),
    )


def _queue_params(q: QueueDefinition) -> tuple[Any, ...]:
    o = q.options
    return (
        q.account, q.name, q.version, q.status, o.bucket_size, o.max_delivery_count,
        o.repair_poll_seconds, o.finalize_seconds, o.delete_buckets_after_finalize,
        o.dlq_name, o.strict_fifo, q.created_at,
    )  # fmt: skip


def _message_values(m: MessageRow) -> tuple[Any, ...]:
    return (
        m.monoton, m.message, m.version, m.delivery_count, m.acked, m.dead_lettered,
        m.republished_to, m.next_visible_on, m.tag, m.created_at, m.updated_at, m.acked_at,
        m.change,
    )  # fmt: skip


def _message(r: Any) -> MessageRow:
    return MessageRow(
        monoton=int(r.monoton),
        message=r.message,
        version=int(r.version),
        delivery_count=int(r.delivery_count),
        acked=bool(r.acked),
        dead_lettered=bool(r.dead_lettered),
        republished_to=r.republished_to,
        next_visible_on=int(r.next_visible_on),
        tag=r.tag,
        created_at=int(r.created_at),
        updated_at=int(r.updated_at),
        acked_at=r.acked_at,
        change=r.last_change or "",
    )


def _bucket(bucket: int, rows: list[Any]) -> BucketState:
    first = rows[0] if rows else None
    return BucketState(
        bucket=bucket,
        sealed_at=first.sealed_at if first is not None else None,
        finalized_at=first.finalized_at if first is not None else None,
        # A partition holding only markers reads as one row without a monoton.
        messages=tuple(
            _message(r) for r in rows if r.monoton is not None and r.version is not None
        ),
    )


def _invisibility(r: Any) -> InvisibilityState:
    return InvisibilityState(
        bucket=int(r.bucket or 0),
        rev=int(r.rev),
        stragglers={int(k): int(v) for k, v in (r.stragglers or {}).items()},
        summary=Counts(
            published=int(r.published or 0),
            acked=int(r.acked or 0),
            dead_lettered=int(r.dead_lettered or 0),
            delivered=int(r.delivered or 0),
        ),
    )
