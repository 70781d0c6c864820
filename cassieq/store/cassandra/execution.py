"""What every part of the Cassandra store runs on: statements executed and retried off the
driver's threads, LWTs sent until their outcome is known (``lwt.py``), and the store's schema
status."""

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
from cassandra.cluster import NoHostAvailable, Session
from cassandra.connection import ConnectionBusy, ConnectionException
from cassandra.protocol import IsBootstrappingErrorMessage, OverloadedErrorMessage, ServerError
from cassandra.query import BatchStatement, BatchType

from cassieq.store.base import (
    SchemaStatus,
    StoreUnavailable,
)
from cassieq.store.cassandra.batch_lwt import run_batch_lwt
from cassieq.store.cassandra.lwt import (
    LwtRetry,
    Outcome,
    Resolver,
    run_lwt,
)
from cassieq.store.cassandra.schema import schema_status
from cassieq.store.cassandra.session import (
    consistency_level,
    execute_async,
)
from cassieq.store.cassandra.statements import Statements
from cassieq.store.observer import LwtObserver, LwtObservers

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


class CassandraBase:
    """The session, the prepared statements and the execution the store's parts share."""

    def __init__(
        self,
        session: Session,
        keyspace: str,
        *,
        serial_consistency: str = "LOCAL_SERIAL",
        lwt_retry: LwtRetry | None = None,
    ) -> None:
        self._session = session
        self._serial = consistency_level(serial_consistency)
        # Reads are of one row or a bounded slice and come whole; bucket partitions (up to
        # 10,000 messages) and listings are read in pages (read_bucket, list_*).
        session.default_fetch_size = None
        self.keyspace = keyspace
        self._q = Statements(session, keyspace)
        self._lwt_retry = lwt_retry or LwtRetry()
        # Every LWT outcome goes to each observer added (add_lwt_observer).
        self.observer = LwtObservers()

    def add_lwt_observer(self, observer: LwtObserver) -> None:
        """Tell ``observer`` every LWT outcome from now on, while it lives (held weakly)."""
        self.observer.add(observer)

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

    async def _batch_rounds(
        self,
        primitive: str,
        monotons: list[int],
        add: Callable[[BatchStatement, int], None],
        read_some: tuple[Any, Sequence[Any]],
        holds: Callable[[int, Any], bool],
        ours: Callable[[int, Any], bool],
        *,
        absent_holds: bool = False,
        units: list[int] | None = None,
    ) -> list[bool]:
        """One conditional batch on one partition per round (``batch_lwt``): ``add`` puts
        entry i's statement in a batch; ``read_some`` is the statement reading the rows of
        some monotons at SERIAL and its key (the monotons are bound after it)."""
        statement, key = read_some

        async def send(indexes: list[int]) -> list[Any]:
            batch = BatchStatement(batch_type=BatchType.UNLOGGED)
            for i in indexes:
                add(batch, i)
            return await self._once(batch, ())

        async def read(indexes: list[int]) -> list[Any]:
            return await self._read_serial(statement, (*key, [monotons[i] for i in indexes]))

        return await run_batch_lwt(
            primitive, monotons, send, read, holds, ours, retry=self._lwt_retry,
            observer=self.observer, absent_holds=absent_holds, units=units,
        )  # fmt: skip

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


def counter_value(row: Any) -> int:
    """A counter-like row's value (monoton, pointer); an absent row or value is 0."""
    return 0 if row is None or row.value is None else int(row.value)


def first_or_cas(
    first: Any, cas: Any, params: tuple[Any, ...], expected: int
) -> tuple[Any, tuple[Any, ...]]:
    """The statement for moving a value from ``expected``: ``IF ... = null`` for the first
    write (0: none yet), else ``IF ... = expected`` with it as the last parameter."""
    return (first, params) if expected == 0 else (cas, (*params, expected))
