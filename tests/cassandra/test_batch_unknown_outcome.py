"""The v2 conditional batches through lost answers, on the real Cassandra store.

A batch round times out before it ran (not applied: every entry whose condition holds
is sent again) or after it ran (applied, answer lost: read back as applied, not applied
twice). The read back decides each entry from its own row: an entry gone stale meanwhile
is reported False and the others are still applied; contention that outlasts every try
is undecided, never a guess.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from cassieq.model import MessageRow, QueueId
from cassieq.store.base import LwtUndecided
from cassieq.store.cassandra import CassandraStore, LwtRetry
from cassieq.store.observer import LWT_PRIMITIVES as STORE_LWTS
from tests.lwt_faults import Mode, TimeoutInjectingStore, prepared_queries, primitive_of
from tests.store.rows import message, taken

MODES: list[Mode] = ["before", "after"]


def _queue() -> QueueId:
    return QueueId(f"b-{uuid.uuid4().hex[:10]}", "q", 1)


@pytest.fixture
def lossy(cassandra_store: CassandraStore) -> TimeoutInjectingStore:
    return TimeoutInjectingStore.beside(cassandra_store, lwt_retry=LwtRetry(base_s=0.001))


async def _bucket(store: CassandraStore, queue: QueueId, count: int) -> list[MessageRow]:
    rows = [message(i) for i in range(count)]
    assert await store.insert_messages(queue, 0, rows, 1000)
    return rows


async def _stored(store: CassandraStore, queue: QueueId) -> dict[int, MessageRow]:
    return {m.monoton: m for m in (await store.read_bucket(queue, 0)).messages}


def _events(store: TimeoutInjectingStore, primitive: str) -> dict[str, int]:
    return {e: n for (p, e), n in store.lwt_tally.counts.items() if p == primitive}


@pytest.mark.parametrize("mode", MODES)
async def test_cas_messages_through_a_timeout(lossy: TimeoutInjectingStore, mode: Mode) -> None:
    queue = _queue()
    rows = await _bucket(lossy, queue, 3)
    changed = [taken(r) for r in rows]
    lossy.inject("cas_messages", mode, times=1)
    assert await lossy.cas_messages(queue, 0, [(1, c) for c in changed], unsealed=True) == [
        True,
        True,
        True,
    ]
    assert lossy.injected["cas_messages"] == 1
    stored = await _stored(lossy, queue)
    assert [stored[c.monoton].change for c in changed] == [c.change for c in changed]
    assert all(m.version == 2 and m.delivery_count == 1 for m in stored.values())
    # before: read back as contended, sent again; after: read back as applied, not re-sent.
    expected = "timeout_contended" if mode == "before" else "timeout_applied"
    assert _events(lossy, "cas_messages") == {
        expected: 1,
        **({"applied": 1} if mode == "before" else {}),
    }


@pytest.mark.parametrize("mode", MODES)
async def test_cas_messages_in_units_through_a_timeout(
    lossy: TimeoutInjectingStore, mode: Mode
) -> None:
    """A FIFO run's take (``units``): the round times out before or after it ran, with an
    entry of one unit gone stale; read back, that unit is out whole and the other is sent
    again (before) or read back as applied (after: Cassandra refused the batch, nothing of
    it is applied, so it is sent again too)."""
    queue = _queue()
    rows = await _bucket(lossy, queue, 4)
    other = taken(rows[1], now=2500)
    assert await lossy.cas_message(queue, 0, 1, other)
    mine = [taken(r, now=3000) for r in rows]
    lossy.inject("cas_messages", mode, times=1)
    result = await lossy.cas_messages(
        queue, 0, [(1, c) for c in mine], keep_body=True, units=[0, 0, 1, 1]
    )
    assert result == [False, False, True, True]
    assert lossy.injected["cas_messages"] == 1
    stored = await _stored(lossy, queue)
    assert stored[0].change == rows[0].change and stored[0].version == 1
    assert stored[1].change == other.change
    assert [stored[i].change for i in (2, 3)] == [mine[i].change for i in (2, 3)]
    # The timed-out round is settled by its read back (one entry stale), the next round
    # (unit 1 alone) applied.
    assert _events(lossy, "cas_messages") == {"timeout_rejected": 1, "applied": 1}


@pytest.mark.parametrize("mode", MODES)
async def test_a_unit_applied_before_its_answer_was_lost_is_not_sent_again(
    lossy: TimeoutInjectingStore, mode: Mode
) -> None:
    queue = _queue()
    rows = await _bucket(lossy, queue, 3)
    mine = [taken(r) for r in rows]
    lossy.inject("cas_messages", mode, times=1)
    result = await lossy.cas_messages(queue, 0, [(1, c) for c in mine], units=[0, 0, 0])
    assert result == [True, True, True]
    stored = await _stored(lossy, queue)
    assert [stored[c.monoton].change for c in mine] == [c.change for c in mine]
    expected = "timeout_contended" if mode == "before" else "timeout_applied"
    assert _events(lossy, "cas_messages") == {
        expected: 1,
        **({"applied": 1} if mode == "before" else {}),
    }


@pytest.mark.parametrize("mode", MODES)
async def test_ack_messages_through_a_timeout(lossy: TimeoutInjectingStore, mode: Mode) -> None:
    queue = _queue()
    rows = await _bucket(lossy, queue, 3)
    entries = [(r.monoton, 1, r.tag) for r in rows]
    lossy.inject("ack_messages", mode, times=1)
    assert await lossy.ack_messages(queue, 0, entries, 5000) == [True, True, True]
    assert lossy.injected["ack_messages"] == 1
    stored = await _stored(lossy, queue)
    assert all(m.acked and m.version == 2 and m.acked_at == 5000 for m in stored.values())
    # The same receipts again, through a timeout too: stale, not acked a second time.
    lossy.inject("ack_messages", mode, times=1)
    assert await lossy.ack_messages(queue, 0, entries, 6000) == [False, False, False]
    assert lossy.injected["ack_messages"] == 1
    assert all(
        m.version == 2 and m.acked_at == 5000 for m in (await _stored(lossy, queue)).values()
    )


@pytest.mark.parametrize("primitive", ["cas_messages", "ack_messages"])
@pytest.mark.parametrize("mode", MODES)
async def test_an_entry_gone_stale_while_the_answer_was_lost(
    cassandra_store: CassandraStore, primitive: str, mode: Mode
) -> None:
    """Another consumer takes message 1 while our round's answer is on its way.

    before: our round did not run; the read back finds 0 and 2 still holding and 1 stale,
    so a second round applies 0 and 2. after: our round applied (all three carry our
    change) and the other consumer's change of 1 came later (it expected our version):
    0 and 2 are read back as ours; 1 no longer carries our change, so it is reported not
    applied (the read back cannot tell "ours, then overwritten" from "never ours"); the
    other consumer's state of 1 is kept either way.
    """
    plain = cassandra_store
    lossy = TimeoutInjectingStore.beside(plain, lwt_retry=LwtRetry(base_s=0.001))
    queue = _queue()
    rows = await _bucket(plain, queue, 3)
    after = mode == "after"
    mine = [taken(r) for r in rows]
    other = taken(mine[1] if after else rows[1], now=9000)

    async def another_consumer_takes_1() -> None:
        assert await plain.cas_message(queue, 0, other.version - 1, other)

    lossy.inject(primitive, mode, times=1, meanwhile=another_consumer_takes_1)
    if primitive == "cas_messages":
        result = await lossy.cas_messages(queue, 0, [(1, m) for m in mine])
    else:
        result = await lossy.ack_messages(queue, 0, [(r.monoton, 1, r.tag) for r in rows], 5000)
    assert result == [True, False, True]
    assert lossy.injected[primitive] == 1
    stored = await _stored(plain, queue)
    assert stored[1].change == other.change and not stored[1].acked
    if primitive == "cas_messages":
        assert [stored[i].change for i in (0, 2)] == [mine[0].change, mine[2].change]
    else:
        assert stored[0].acked and stored[2].acked and stored[0].version == 2


class _TakenAfterReadBack(TimeoutInjectingStore):
    """Runs ``race`` once, right after a SERIAL read back returned its rows."""

    race: Callable[[], Awaitable[None]] | None = None

    async def _read_serial(self, statement: Any, params: Sequence[Any]) -> list[Any]:
        rows = await super()._read_serial(statement, params)
        race, self.race = self.race, None
        if race is not None:
            await race()
        return rows


@pytest.mark.parametrize("primitive", ["cas_messages", "ack_messages"])
async def test_a_retry_answered_not_applied_after_a_timeout_is_read_back(
    cassandra_store: CassandraStore, primitive: str
) -> None:
    """The first try timed out unapplied with every entry holding (contention: sent
    again); then entry 0 went stale, so the second try is answered "not applied". Only a
    read back tells that from our own first try having applied: it finds 0 stale, 1 and 2
    holding, and a second round applies them."""
    plain = cassandra_store
    lossy = _TakenAfterReadBack.beside(plain, lwt_retry=LwtRetry(base_s=0.001))
    queue = _queue()
    rows = await _bucket(plain, queue, 3)
    other = taken(rows[0], now=9000)

    raced: list[int] = []

    async def another_consumer_takes_0() -> None:
        assert await plain.cas_message(queue, 0, 1, other)
        raced.append(0)

    lossy.race = another_consumer_takes_0
    lossy.inject(primitive, "before", times=1)
    if primitive == "cas_messages":
        mine = [taken(r) for r in rows]
        result = await lossy.cas_messages(queue, 0, [(1, m) for m in mine])
    else:
        result = await lossy.ack_messages(queue, 0, [(r.monoton, 1, r.tag) for r in rows], 5000)
    assert result == [False, True, True]
    assert raced == [0] and lossy.injected[primitive] == 1
    # contended (read back), "not applied" read back as rejected, then the second round.
    assert _events(lossy, primitive) == {"timeout_contended": 1, "lost": 1, "applied": 1}
    stored = await _stored(plain, queue)
    assert stored[0].change == other.change
    assert all(stored[i].version == 2 for i in (1, 2))


async def test_contention_that_outlasts_every_try_is_undecided(
    cassandra_store: CassandraStore,
) -> None:
    lossy = TimeoutInjectingStore.beside(
        cassandra_store, lwt_retry=LwtRetry(attempts=3, base_s=0.001)
    )
    queue = _queue()
    rows = await _bucket(cassandra_store, queue, 2)
    for primitive in ("cas_messages", "ack_messages"):
        lossy.inject(primitive, "before")  # every try times out unapplied
        with pytest.raises(LwtUndecided):
            if primitive == "cas_messages":
                await lossy.cas_messages(queue, 0, [(1, taken(r)) for r in rows])
            else:
                await lossy.ack_messages(queue, 0, [(r.monoton, 1, r.tag) for r in rows], 5)
        assert lossy.injected[primitive] == 3
        assert _events(lossy, primitive) == {"timeout_contended": 3, "undecided": 1}
    lossy.stop()
    # Nothing was assumed applied, and nothing was.
    assert all(m.version == 1 for m in (await _stored(lossy, queue)).values())


class _Recording(TimeoutInjectingStore):
    """Records the primitive the fault helper tells for every statement sent."""

    told: set[str | None]

    def _once(self, statement: Any, params: Sequence[Any] | None) -> Any:
        self.told.add(primitive_of(statement, self.keyspace, self._queries))
        return super()._once(statement, params)


async def test_every_lwt_primitive_is_known_to_the_fault_helper(
    cassandra_store: CassandraStore,
) -> None:
    """The helper tells each LWT the store prepares, and each batch it sends, by its CQL."""
    q, ks = cassandra_store._q, cassandra_store.keyspace
    queries = prepared_queries(cassandra_store)
    singles = {primitive_of(s, ks, queries) for s in vars(q).values() if hasattr(s, "query_id")}
    batches = {"insert_messages", "cas_messages", "ack_messages"}
    assert singles - {None} == STORE_LWTS - batches | {"insert_messages"}

    recording = _Recording.beside(cassandra_store)
    recording.told = set()
    queue = _queue()
    rows = await _bucket(recording, queue, 4)
    assert await recording.cas_messages(queue, 0, [(1, taken(rows[0]))], unsealed=True) == [True]
    assert await recording.cas_messages(queue, 0, [(1, taken(rows[1]))]) == [True]
    assert await recording.ack_messages(queue, 0, [(0, 2, "stale")], 5) == [False]
    assert recording.told - {None} == batches
    recording.told = set()
    # A take's and a retirement's shorter updates (keep_body), apart and together.
    assert await recording.cas_messages(queue, 0, [(1, taken(rows[2]))], keep_body=True) == [True]
    retire = rows[3].retired(5, expired=True)
    assert await recording.cas_messages(queue, 0, [(1, retire)], keep_body=True) == [True]
    both = [(2, taken(taken(rows[2]))), (2, retire.retired(6))]
    assert await recording.cas_messages(queue, 0, both, keep_body=True) == [True, True]
    assert recording.told - {None} == {"cas_messages"}
