"""Timeouts injected into the real Cassandra store's lightweight transactions.

Not a stand-in for the database: every statement still runs on Cassandra. A chosen LWT
primitive raises the driver's WriteTimeout (write type CAS, as a coordinator answers
when Paxos contention outlasts ``cas_contention_timeout``) either *before* it runs (the
proposal never applied) or *after* it ran (applied, the answer lost). The primitive is
told by the statement's CQL, so the same helper runs against any version of the store
(it showed the seal case failing on the code before the fix); a batch by the CQL of the
statements in it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Self

from cassandra import ConsistencyLevel, WriteTimeout
from cassandra.policies import WriteType
from cassandra.query import BatchStatement

from cassieq.store.cassandra import CassandraStore
from cassieq.store.observer import LWT_PRIMITIVES as STORE_LWTS
from cassieq.store.observer import LwtTally

Mode = Literal["before", "after"]

# Every LWT primitive of the store, told by a fragment of its CQL (first match wins).
_BY_CQL: tuple[tuple[str, str], ...] = (
    (".monotons SET", "cas_monoton"),
    # The guard and the row inserts, sent only together in the insert's batch.
    ("SET last_write_at", "insert_messages"),
    ("INTO {ks}.messages", "insert_messages"),
    ("SET sealed_at = ? WHERE", "seal_bucket"),
    ("SET finalized_at = ? WHERE", "finalize_bucket"),
    ("acked = true, acked_at", "ack_message"),
    (".messages SET message", "cas_message"),
    # A take's and a retirement's updates are sent only in cas_messages's batches (with
    # keep_body); alone, they would be the same change of one row as cas_message.
    (".messages SET version = ?, delivery_count", "cas_message"),
    ("acked = true, dead_lettered", "cas_message"),
    (".pointers SET", "cas_pointer"),
    (".invisibility SET", "cas_invisibility"),
    ("DELETE FROM {ks}.accounts", "delete_account"),
    (".leases", "acquire_lease"),
    ("INTO {ks}.accounts", "insert_account"),
    ("IF keys[?] = ?", "replace_key"),  # before add_key: both set keys[?]
    (".accounts SET keys", "add_key"),
    ("INTO {ks}.secrets", "insert_secret"),
    (".secrets SET", "replace_secret"),
    ("INTO {ks}.queues", "insert_queue"),
    (".queues SET", "replace_queue"),
    ("INTO {ks}.fifo_dedup", "claim_dedup"),
    (".fifo_dedup USING TTL ? SET monoton", "replace_dedup"),
    ("INTO {ks}.fifo_group_dedup", "claim_group_dedup"),
    (".fifo_group_dedup USING TTL ? SET monoton", "replace_group_dedup"),
    ("INTO {ks}.subscriptions", "insert_subscription"),
    # Sent only in their batches (insert_sub_deliveries, cas_sub_deliveries); named here too
    # as every prepared LWT must be.
    ("INTO {ks}.subscription_deliveries", "insert_sub_deliveries"),
    (".subscription_deliveries SET", "cas_sub_deliveries"),
    ("SET position = ?, done = ?", "cas_subscription"),  # before the position's own
    (".subscriptions SET position", "cas_subscription_position"),
)
# A conditional batch, told by the CQL of a statement in it (first match wins).
_BATCH_BY_CQL: tuple[tuple[str, str], ...] = (
    ("SET last_write_at", "insert_messages"),  # the guard of the message insert
    ("acked = true, acked_at", "ack_messages"),
    (".messages SET message", "cas_messages"),
    # cas_messages with keep_body: a take's update and a retirement's.
    (".messages SET version = ?, delivery_count", "cas_messages"),
    ("acked = true, dead_lettered", "cas_messages"),
    ("subscription_deliveries (queue_id", "insert_sub_deliveries"),
    (".subscription_deliveries SET", "cas_sub_deliveries"),
    ("fifo_group_dedup (queue_id", "claim_group_dedup"),
)
# Every LWT primitive the engine sends, in a stable order (parametrized test ids): all of
# the store's (the v2 batch ones by its receive of N, batch ack and visibility change).
# The FIFO queues' own (deduplication claims) are covered by tests/engine/test_fifo_lwt_timeouts.py,
# on a FIFO workload; the matrix's workload is a standard queue's.
FIFO_LWTS = frozenset({"claim_dedup", "replace_dedup", "claim_group_dedup", "replace_group_dedup"})
# Likewise the subscriptions' (tests/engine/test_subscriptions_lwt_timeouts.py).
SUBSCRIPTION_LWTS = frozenset(
    {
        "insert_subscription",
        "cas_subscription_position",
        "cas_subscription",
        "insert_sub_deliveries",
        "cas_sub_deliveries",
    }
)
LWT_PRIMITIVES = tuple(sorted(STORE_LWTS - FIFO_LWTS - SUBSCRIPTION_LWTS))


def primitive_of(
    statement: Any, keyspace: str, queries: dict[bytes, str] | None = None
) -> str | None:
    """The LWT primitive a statement belongs to; None for anything that is not an LWT.

    A batch holds its prepared statements by id only: ``queries`` maps ids to CQL.
    """
    if isinstance(statement, BatchStatement):
        texts = [queries.get(entry[1], "") if queries else "" for entry in _entries(statement)]
        for fragment, name in _BATCH_BY_CQL:
            if any(fragment in text for text in texts):
                return name
        raise AssertionError(f"a batch this helper does not know: {texts}")
    prepared = getattr(statement, "prepared_statement", statement)
    text: str = getattr(prepared, "query_string", "") or ""
    if " IF " not in text:
        return None
    for fragment, name in _BY_CQL:
        if fragment.format(ks=keyspace) in text:
            return name
    raise AssertionError(f"an LWT this helper does not know: {text}")


def _entries(batch: BatchStatement) -> list[tuple[Any, ...]]:
    # (is_prepared, query id or CQL text, values) for each statement, as the driver keeps them
    return list(batch._statements_and_parameters)


def prepared_queries(store: CassandraStore) -> dict[bytes, str]:
    """The CQL of every statement the store prepared, by prepared id."""
    return {
        stmt.query_id: stmt.query_string
        for stmt in vars(store._q).values()
        if hasattr(stmt, "query_id")
    }


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
        # Its LWT outcomes (the store holds its observers weakly: this attribute keeps it).
        self.lwt_tally = LwtTally()
        self.add_lwt_observer(self.lwt_tally)
        self._plan: _Plan | None = None
        self.seen: Counter[str] = Counter()  # LWTs sent, by primitive
        self.injected: Counter[str] = Counter()  # timeouts raised, by primitive
        self._queries = prepared_queries(self)

    @classmethod
    def beside(cls, store: CassandraStore, **kwargs: Any) -> Self:
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
        most), ``before`` it runs or ``after`` it ran; ``meanwhile`` runs before the
        timeout is raised (another client acting while the answer is on its way).

        The counts of ``primitive`` start again from 0: a second plan for it injects its
        own timeouts (``times`` is per plan, not since the store was made)."""
        self.seen[primitive] = self.injected[primitive] = 0
        self._plan = _Plan(primitive, mode, every, times, meanwhile)

    def stop(self) -> None:
        self._plan = None

    def _once(self, statement: Any, params: Sequence[Any] | None) -> Any:
        name = primitive_of(statement, self.keyspace, self._queries)
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
