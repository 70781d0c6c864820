"""Connecting to Cassandra, and running a request on the driver's threads for asyncio."""

from __future__ import annotations

import asyncio
import collections
import functools
import re
import socket
from collections.abc import Sequence
from typing import Any

from cassandra import ConsistencyLevel
from cassandra.cluster import (
    EXEC_PROFILE_DEFAULT,
    Cluster,
    ExecutionProfile,
    NoHostAvailable,
    Session,
)
from cassandra.policies import DCAwareRoundRobinPolicy, FallthroughRetryPolicy

_KEYSPACE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,47}$")
_TABLE_RE = re.compile(r"\b(FROM|INTO|UPDATE)\s+(\w+)")


def check_keyspace(keyspace: str, error: type[Exception] = ValueError) -> None:
    # Keyspace names are put into CQL text: only names of the plain form get there.
    if not _KEYSPACE_RE.match(keyspace):
        raise error(f"invalid keyspace name {keyspace!r}")


class CassandraUnavailable(RuntimeError):
    """No Cassandra node answered at the configured address."""


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
        consistency_level=consistency_level(consistency),
        serial_consistency_level=consistency_level(serial_consistency),
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
        # The driver leaves Nagle's algorithm on. A request it writes in more than one
        # piece (a conditional batch of 20 message rows, here) then waits for the
        # coordinator's delayed ACK: 43.5 ms for such a batch, 1.5 ms with this (one
        # node, one client, one batch at a time). The Java driver sets it by default.
        sockopts=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
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


def consistency_level(name: str) -> int:
    try:
        return int(getattr(ConsistencyLevel, name.upper()))
    except AttributeError:
        raise ValueError(f"unknown consistency level {name!r}") from None


def server_version(session: Session) -> str:
    row = session.execute("SELECT release_version FROM system.local").one()
    return str(row.release_version)


def execute_async(
    session: Session,
    statement: Any,
    params: Sequence[Any] | None,
    *,
    page_rows: int | None = None,
) -> asyncio.Future[list[Any]]:
    """A request on the driver's threads, answered on this event loop with every row.

    With ``page_rows`` the rows are fetched that many at a time (the driver's paging), so
    no single response of the coordinator has to hold a whole large partition; the answer
    comes once the last page is in."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[list[Any]] = loop.create_future()
    if page_rows is None:
        response = session.execute_async(statement, params)
    else:
        bound = statement.bind(params) if params is not None else statement
        bound.fetch_size = page_rows
        response = session.execute_async(bound)
    rows: list[Any] = []

    def page(result: Any) -> None:
        # On the driver's thread: the callback runs again for each page it is asked for
        # (unpaged requests have one: the store sets no default fetch size).
        rows.extend(result or ())
        if response.has_more_pages:
            response.start_fetching_next_page()
        else:
            loop.call_soon_threadsafe(_resolve, future, rows)

    response.add_callbacks(page, lambda exc: loop.call_soon_threadsafe(_reject, future, exc))
    return future


def _resolve(future: asyncio.Future[list[Any]], rows: list[Any]) -> None:
    if not future.done():
        future.set_result(rows)


def _reject(future: asyncio.Future[list[Any]], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)
