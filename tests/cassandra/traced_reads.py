"""What Cassandra read for each request of a session: live rows and tombstone cells, as its
query tracing tells them ("Read N live rows and M tombstone cells"), and the warnings it
sent back (tombstone_warn_threshold). Not a stand-in for anything: the requests run as
they would, with Cassandra's tracing on.

Point reads (the whole primary key given: at most the rows named) are not traced: they
cannot grow with what tenants do, and tracing the several a deletion job makes would
multiply the test's time. Everything else is: listings, bucket reads, the invisibility
state, the old deletion_jobs table.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from cassandra.cluster import ResponseFuture, Session

_READ = re.compile(r"Read (\d+) live rows and (\d+) tombstone cells")
# table -> the WHERE clause that names its whole primary key
_POINT = {
    "accounts": "WHERE account_name = ?",
    "secrets": "WHERE name = ?",
    "queues": "WHERE account_name = ? AND queue_name = ?",
    "queue_stats": "WHERE account_name = ? AND queue_name = ?",
    "monotons": "WHERE queue_id = ?",
    "pointers": "WHERE queue_id = ? AND kind = ?",
    "leases": "WHERE name = ?",
    "account_deletions": "WHERE account_name = ?",
    "messages": "AND monoton ",  # = ? or IN ?: the rows named
}
_TABLE = re.compile(r"\bFROM\s+(?:\w+\.)?(\w+)\s*(.*)", re.IGNORECASE | re.DOTALL)
TRACE_WAIT_S = 10.0
TRACE_TRIES = 20


@dataclass(frozen=True)
class ReadCost:
    cql: str
    live_rows: int
    tombstones: int


def cql_of(query: Any) -> str:
    prepared = getattr(query, "prepared_statement", None)
    text = getattr(prepared if prepared is not None else query, "query_string", query)
    return str(text)


def is_point_read(cql: str) -> bool:
    found = _TABLE.search(cql)
    if found is None:
        return False
    table, rest = found.group(1), found.group(2)
    key = _POINT.get(table)
    return key is not None and key in rest and " LIMIT " not in f" {rest} "


class TracedReads:
    """Every SELECT a session runs from now on (but point reads), traced."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._lock = threading.Lock()
        self._pending: list[tuple[str, ResponseFuture]] = []
        self.warnings: list[str] = []
        original = session.execute_async

        def execute_async(query: Any, parameters: Any = None, trace: bool = False, *args: Any,
                          **kwargs: Any) -> ResponseFuture:  # fmt: skip
            cql = cql_of(query)
            traced = cql.lstrip().upper().startswith("SELECT") and not is_point_read(cql)
            future: ResponseFuture = original(query, parameters, trace or traced, *args, **kwargs)
            future.add_callback(self._warned, future)
            if traced:
                with self._lock:
                    self._pending.append((cql, future))
            return future

        session.execute_async = execute_async

    def _warned(self, _rows: Any, future: ResponseFuture) -> None:
        if future.warnings:
            with self._lock:
                self.warnings += future.warnings

    def costs(self) -> list[ReadCost]:
        """The cost of each request traced since the last call (waits for the traces
        Cassandra writes after answering; a paged read is a request a page)."""
        with self._lock:
            pending, self._pending = self._pending, []
        costs: list[ReadCost] = []
        for cql, future in pending:
            for trace in future.get_all_query_traces(max_wait_per=TRACE_WAIT_S):
                live, tombstones = self._read_of(trace)
                costs.append(ReadCost(cql, live, tombstones))
        return costs

    @staticmethod
    def _read_of(trace: Any) -> tuple[int, int]:
        """Sum of the trace's read events (a range read has one per token range); its
        events are written apart from its session row: asked again until they are in."""
        for _ in range(TRACE_TRIES):
            found = [_READ.search(e.description) for e in trace.events or ()]
            reads = [m for m in found if m is not None]
            if reads:
                return sum(int(m.group(1)) for m in reads), sum(int(m.group(2)) for m in reads)
            trace.populate(max_wait=TRACE_WAIT_S)
        raise AssertionError(f"no read event in the trace of {trace.request_type}")
