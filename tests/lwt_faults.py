"""Timeouts injected into the real Cassandra store's lightweight transactions.

Not a stand-in for the database: every statement still runs on Cassandra. A chosen LWT
primitive raises the driver's WriteTimeout (write type CAS, as a coordinator answers
when Paxos contention outlasts ``cas_contention_timeout``) either *before* it runs (the
proposal never applied) or *after* it ran (applied, the answer lost). The primitive is
told by the statement's CQL, so the same helper runs against any version of the store
(it showed the seal case failing on the code before the fix).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cassandra import ConsistencyLevel, WriteTimeout
from cassandra.policies import WriteType
from cassandra.query import BatchStatement

from cassieq.store.cassandra import CassandraStore
from cassieq.store.counting import LWT_PRIMITIVES as STORE_LWTS

Mode = Literal["before", "after"]

# Every LWT primitive of the store, told by a fragment of its CQL (first match wins).
_BY_CQL: tuple[tuple[str, str], ...] = (
    (".monotons SET", "cas_monoton"),
    ("SET sealed_at = ? WHERE", "seal_bucket"),
    ("SET finalized_at = ? WHERE", "finalize_bucket"),
    ("acked = true", "ack_message"),
    (".messages SET message", "cas_message"),
    (".pointers SET", "cas_pointer"),
    (".invisibility SET", "cas_invisibility"),
    ("DELETE FROM {ks}.accounts", "delete_account"),
    ("DELETE FROM", "release_lease"),  # the only other conditional delete
    (".leases", "acquire_lease"),
    ("INTO {ks}.accounts", "insert_account"),
    ("IF keys[?] = ?", "replace_key"),  # before add_key: both set keys[?]
    (".accounts SET keys", "add_key"),
    ("INTO {ks}.secrets", "insert_secret"),
    (".secrets SET", "replace_secret"),
    ("INTO {ks}.queues", "insert_queue"),
    (".queues SET", "replace_queue"),
)
# Every LWT primitive, in a stable order (parametrized test ids).
LWT_PRIMITIVES = tuple(sorted(STORE_LWTS))


def primitive_of(statement: Any, keyspace: str) -> str | None:
    """The LWT primitive a statement belongs to; None for anything that is not an LWT."""
    if isinstance(statement, BatchStatement):
        return "insert_messages"  # the store's only batch: the guarded message insert
    prepared = getattr(statement, "prepared_statement", statement)
    text: str = getattr(prepared, "query_string", "") or ""
    if " IF " not in text:
        return None
    for fragment, name in _BY_CQL:
        if fragment.format(ks=keyspace) in text:
            return name
    raise AssertionError(f"an LWT this helper does not know: {text}")


def cas_timeout() -> WriteTimeout:
    return WriteTimeout(
        "CAS operation timed out: proposal did not reach quorum (injected)",
        consistency=ConsistencyLevel.SERIAL,
        required_responses=2,
        received_responses=0,
        write_type=WriteType.CAS,
    )


@dataclass
class _Plan:
    primitive: str
    mode: Mode
    every: int
    times: int | None
    meanwhile: Callable[[], Awaitable[None]] | None


class TimeoutInjectingStore(CassandraStore):
    """The real store, with WriteTimeouts injected into one primitive's LWTs."""

    def __init__(self, session: Any, keyspace: str, **kwargs: Any) -> None:
        super().__init__(session, keyspace, **kwargs)
        self._plan: _Plan | None = None
        self.seen: Counter[str] = Counter()  # LWTs sent, by primitive
        self.injected: Counter[str] = Counter()  # timeouts raised, by primitive

    @classmethod
    def beside(cls, store: CassandraStore, **kwargs: Any) -> TimeoutInjectingStore:
        """One on the same session and keyspace as ``store``."""
        return cls(store._session, store.keyspace, **kwargs)

    def inject(
        self,
        primitive: str,
        mode: Mode,
        *,
        every: int = 1,
        times: int | None = None,
        meanwhile: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Time out the 1st, then every ``every``-th LWT of ``primitive`` (``times`` at
        most), ``before`` it runs or ``after`` it ran (then ``meanwhile`` runs before the
        timeout is raised)."""
        self._plan = _Plan(primitive, mode, every, times, meanwhile)

    def stop(self) -> None:
        self._plan = None

    def _once(self, statement: Any, params: Sequence[Any] | None) -> Any:
        name = primitive_of(statement, self.keyspace)
        plan = self._plan
        if name is None or plan is None or name != plan.primitive:
            return super()._once(statement, params)
        self.seen[name] += 1
        if (self.seen[name] - 1) % plan.every != 0 or (
            plan.times is not None and self.injected[name] >= plan.times
        ):
            return super()._once(statement, params)
        self.injected[name] += 1
        return self._time_out(plan, statement, params)

    async def _time_out(self, plan: _Plan, statement: Any, params: Sequence[Any] | None) -> Any:
        if plan.mode == "after":
            await super()._once(statement, params)
            if plan.meanwhile is not None:
                await plan.meanwhile()
        raise cas_timeout()
