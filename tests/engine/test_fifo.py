"""FIFO queues (issue 37), on each store: a group's messages in send order, several in one
answer, none while an earlier one is in flight from another answer, groups independent;
deduplication for 5 minutes, finishing a first send that died half way; the rules a FIFO
queue keeps (groups required, no per-message delay, fixed kind and partitions, a FIFO
dead-letter queue); receive attempts answered again."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any, cast

import pytest

from cassieq.engine import CallCounter, FakeClock, QueueEngine
from cassieq.engine.context import Tuning
from cassieq.engine.errors import FifoCannotChange, InvalidArgument
from cassieq.engine.life.fifo import HOLE_MS, dedup_key, sequence_number
from cassieq.engine.life.fifo_dedup import DEDUP_INTERVAL_MS, DEDUP_TTL_S
from cassieq.model import OutgoingMessage, QueueDefinition
from cassieq.store.base import DedupClaim, Store
from tests.engine.conftest import make_queue

LEASE_S = 30


@pytest.fixture(autouse=True)
def _time_moves(engine: QueueEngine, clock: FakeClock) -> None:
    """Each send takes a millisecond: a row written in the very millisecond of its bucket's
    seal counts as a late write (repair's to move), which a frozen clock would make of
    every message the reader passes by (a group's held ones)."""
    send = engine.send

    async def timed(*args: object, **kwargs: object) -> object:
        sent = await send(*args, **kwargs)  # type: ignore[arg-type]
        clock.advance(0.001)
        return sent

    engine.send = timed  # type: ignore[method-assign,assignment]


def _msg(group: str, body: str, dedup: str | None = None) -> OutgoingMessage:
    return OutgoingMessage(body=body, group=group, dedup_id=dedup)


async def _fifo(
    engine: QueueEngine, account: str, name: str = "q", **options: object
) -> QueueDefinition:
    return await make_queue(engine, account, name, **{"fifo": True, "bucket_size": 4, **options})


async def test_a_group_is_delivered_in_order_and_waits_while_it_is_in_flight(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await _fifo(engine, account)
    await engine.send(account, "q", [_msg("g1", "a"), _msg("g1", "b")])
    [a] = await engine.receive(account, "q", 1, LEASE_S)
    assert (a.message, a.group) == ("a", "g1")
    # b waits while a is in flight (delivered by another answer).
    assert await engine.receive(account, "q", 10, LEASE_S) == []
    await engine.send(account, "q", [_msg("g2", "x"), _msg("g1", "c"), _msg("g2", "y")])
    # g2 comes, as many of it as the answer holds, in order (as SQS answers); g1 waits.
    assert [d.message for d in await engine.receive(account, "q", 10, LEASE_S)] == ["x", "y"]
    assert await engine.receive(account, "q", 10, LEASE_S) == []
    await engine.ack(account, "q", a.receipt)
    run = await engine.receive(account, "q", 10, LEASE_S)
    assert [d.message for d in run] == ["b", "c"]
    # The leases run out unacked: each group again from its first unacked message, in order.
    clock.advance(LEASE_S + 1)
    again = await engine.receive(account, "q", 10, LEASE_S)
    assert [d.message for d in again if d.group == "g1"] == ["b", "c"]
    assert [d.message for d in again if d.group == "g2"] == ["x", "y"]
    await engine.ack_batch(account, "q", [d.receipt for d in again])
    assert await engine.receive(account, "q", 10, LEASE_S) == []
    seqs = [d.sequence_number or "" for d in (a, *run)]
    assert all(len(s) == 20 for s in seqs) and seqs == sorted(seqs)


class _SlowTakes:
    """The store, with each conditional batch of takes answering ``seconds`` of the fake
    clock late: a loaded cluster, where a receive's LWT takes longer than half its lease."""

    def __init__(self, store: Store, clock: FakeClock, seconds: float) -> None:
        self._store, self._clock, self._seconds = store, clock, seconds
        self.slow = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def cas_messages(self, *args: Any, **kwargs: Any) -> Any:
        applied = await self._store.cas_messages(*args, **kwargs)
        if self.slow:
            self._clock.advance(self._seconds)
        return applied


async def test_a_receive_slower_than_half_its_lease_takes_nothing_of_a_later_bucket(
    store: Store, clock: FakeClock, tuning: Tuning
) -> None:
    slow = _SlowTakes(store, clock, 6)
    engine = QueueEngine(cast(Store, slow), clock, tuning=tuning)
    account = f"t-{uuid.uuid4().hex[:12]}"
    await engine.accounts.create(account)
    await _fifo(engine, account, bucket_size=1)  # each message a bucket of its own
    await engine.send(account, "q", [_msg("g", "a"), _msg("g", "b"), _msg("g", "c")])
    slow.slow = True
    # The head's take answers after 6 s of its 10 s lease: the message after it, of the
    # next bucket (its own conditional batch, sent after the head's), is not taken (another
    # consumer could have the head again before this answer arrives).
    [a] = await engine.receive(account, "q", 10, 10)
    assert a.message == "a"
    slow.slow = False
    assert await engine.receive(account, "q", 10, 10) == []  # b waits for a, in flight
    await engine.ack(account, "q", a.receipt)
    assert [d.message for d in await engine.receive(account, "q", 10, 10)] == ["b", "c"]


async def test_a_slow_take_still_answers_the_run_of_the_heads_bucket(
    store: Store, clock: FakeClock, tuning: Tuning
) -> None:
    """The messages right after a head in its bucket are taken with it, in one conditional
    batch whose leases all start at that take: however slow, none can outlive the head's."""
    slow = _SlowTakes(store, clock, 6)
    engine = QueueEngine(cast(Store, slow), clock, tuning=tuning)
    account = f"t-{uuid.uuid4().hex[:12]}"
    await engine.accounts.create(account)
    await _fifo(engine, account, bucket_size=8)
    await engine.send(account, "q", [_msg("g", "a"), _msg("g", "b"), _msg("g", "c")])
    slow.slow = True
    run = await engine.receive(account, "q", 10, 10)
    assert [d.message for d in run] == ["a", "b", "c"]
    assert len({d.receipt.monoton // 8 for d in run}) == 1  # one bucket: one batch


class _BeforeTheTake:
    """The store, running ``hook`` once when a receive asks whether its buckets are in the
    invisibility window (after the look read the run, before the run's take)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.hook: Callable[[], Awaitable[None]] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def read_invisibility(self, *args: Any) -> Any:
        hook, self.hook = self.hook, None
        if hook is not None:
            await hook()
        return await self._store.read_invisibility(*args)


async def test_a_run_lost_on_its_head_leaves_the_rest_to_this_server(
    store: Store, clock: FakeClock, tuning: Tuning
) -> None:
    """A run's take lost on its head alone (a late consumer acked it between the look and
    the take): the messages after it were refused unchanged, and the server takes them next
    time (it took them as taken by someone, and passed them by for good)."""
    hooked = _BeforeTheTake(store)
    engine = QueueEngine(cast(Store, hooked), clock, tuning=tuning)
    account = f"t-{uuid.uuid4().hex[:12]}"
    await engine.accounts.create(account)
    await _fifo(engine, account, bucket_size=8)
    for body in "abc":
        await engine.send(account, "q", [_msg("g", body)])
        clock.advance(0.001)
    [a] = await engine.receive(account, "q", 1, LEASE_S)
    clock.advance(LEASE_S + 1)  # a's lease ran out; its consumer is late

    async def late_ack() -> None:
        await engine.ack(account, "q", a.receipt)

    hooked.hook = late_ack
    assert await engine.receive(account, "q", 10, LEASE_S) == []  # the run [a, b, c] lost on a
    assert [d.message for d in await engine.receive(account, "q", 10, LEASE_S)] == ["b", "c"]


async def test_a_head_expiring_at_its_take_leases_nothing_after_it(
    store: Store, clock: FakeClock, tuning: Tuning
) -> None:
    """The head outlives the retention between the look and the take: retired as expired
    in the run's batch, it answers nothing, and the messages after it are not leased (they
    would be, unanswered, and their group held for a lease)."""
    hooked = _BeforeTheTake(store)
    engine = QueueEngine(cast(Store, hooked), clock, tuning=tuning)
    account = f"t-{uuid.uuid4().hex[:12]}"
    await engine.accounts.create(account)
    queue = await _fifo(engine, account, bucket_size=8, message_retention_seconds=60)
    await engine.send(account, "q", [_msg("g", "a")])
    clock.advance(1)
    await engine.send(account, "q", [_msg("g", "b"), _msg("g", "c")])
    clock.advance(59 - 0.001)  # a's retention ends within the receive

    async def a_moment() -> None:
        clock.advance(0.002)

    hooked.hook = a_moment
    assert await engine.receive(account, "q", 10, LEASE_S) == []
    rows = {r.message: r for r in (await store.read_bucket(queue.id, 0)).messages}
    assert rows["a"].acked and rows["a"].expired
    assert rows["b"].delivery_count == rows["c"].delivery_count == 0  # not leased
    assert [d.message for d in await engine.receive(account, "q", 10, LEASE_S)] == ["b", "c"]


async def test_a_receive_looks_at_groups_another_server_freed_without_a_scan(
    engine: QueueEngine, other: QueueEngine, account: str, clock: FakeClock
) -> None:
    """The groups' list (schema 0016): a server finds the next message of a group whose
    head another server delivered and acked, by the group's records, with the scans
    behind the reader not due (FIFO_SCAN_MS) and nothing of this server's own acks."""
    await _fifo(engine, account)
    await engine.send(account, "q", [_msg("g", "one"), _msg("g", "two")])
    [one] = await engine.receive(account, "q", 1, LEASE_S)
    assert one.message == "one"
    # The other server scans now (its first receive), and finds the group held.
    assert await other.receive(account, "q", 10, LEASE_S) == []
    await engine.ack(account, "q", one.receipt)
    # A moment later (past the hold, before another scan is due), by the group's records.
    clock.advance(0.2)
    [two] = await other.receive(account, "q", 10, LEASE_S)
    assert two.message == "two"


async def test_many_groups_keep_their_order_across_two_servers(
    engine: QueueEngine, other: QueueEngine, account: str, clock: FakeClock
) -> None:
    await _fifo(engine, account, partitions=3)
    groups = [f"g{i}" for i in range(12)]
    sent: dict[str, list[str]] = {g: [] for g in groups}
    for n in range(6):
        outgoing = [_msg(g, f"{g}/{n}") for g in random.sample(groups, len(groups))]
        for m in outgoing:
            sent[m.group or ""].append(m.body)
        await engine.send(account, "q", outgoing)
    got: dict[str, list[str]] = defaultdict(list)
    seq: dict[str, list[str]] = defaultdict(list)
    servers = [engine, other]
    idle = 0
    while idle < 3:
        server = servers[idle % 2] if idle else random.choice(servers)
        batch = await server.receive(account, "q", 5, LEASE_S)
        if not batch:
            idle += 1
            await engine.settle()
            await other.settle()
            # What a server learnt of the other's acks (held groups, quiet buckets) is
            # trusted for a second at most.
            clock.advance(1.1)
            continue
        idle = 0
        # (A batch may hold several messages of a group, in a row: the order is checked
        # at the end; each batch is acked before the next receive.)
        for d in batch:
            got[d.group or ""].append(d.message)
            seq[d.group or ""].append(d.sequence_number or "")
        ackers = random.choice(servers)
        assert await ackers.ack_batch(account, "q", [d.receipt for d in batch]) == [None] * len(
            batch
        )
    assert dict(got) == sent
    assert all(s == sorted(s) for s in seq.values())


async def test_a_duplicate_send_is_answered_with_the_first_message(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await _fifo(engine, account)
    [first] = await engine.send(account, "q", [_msg("g", "one", "d1")])
    [again] = await engine.send(account, "q", [_msg("g", "one, retried", "d1")])
    assert not first.duplicate and again.duplicate
    assert (again.monoton, again.partition, again.sequence_number) == (
        first.monoton,
        first.partition,
        first.sequence_number,
    )
    # Within one batch too, and a new id is a new message.
    both = await engine.send(account, "q", [_msg("g", "two", "d2"), _msg("g", "two?", "d2")])
    assert [s.duplicate for s in both] == [False, True]
    assert both[0].monoton == both[1].monoton
    bodies = []
    while got := await engine.receive(account, "q", 10, LEASE_S):
        bodies += [d.message for d in got]
        await engine.ack_batch(account, "q", [d.receipt for d in got])
    assert bodies == ["one", "two"]
    # After the interval the id is free again.
    clock.advance(DEDUP_INTERVAL_MS / 1000 + 1)
    [later] = await engine.send(account, "q", [_msg("g", "one", "d1")])
    assert not later.duplicate and later.monoton > both[0].monoton


async def test_content_based_deduplication_and_the_group_scope(
    engine: QueueEngine, account: str
) -> None:
    await _fifo(engine, account, content_based_deduplication=True)
    a, b = await engine.send(account, "q", [_msg("g1", "same"), _msg("g2", "same")])
    assert b.duplicate and b.monoton == a.monoton  # scope: the queue
    await _fifo(
        engine, account, "q2", content_based_deduplication=True, deduplication_scope="messageGroup"
    )
    c, d, e = await engine.send(
        account, "q2", [_msg("g1", "same"), _msg("g2", "same"), _msg("g1", "same")]
    )
    assert not c.duplicate and not d.duplicate and e.duplicate and e.monoton == c.monoton
    # Without a key and without content-based deduplication: not deduplicated.
    await _fifo(engine, account, "q3")
    x, y = await engine.send(account, "q3", [_msg("g", "same"), _msg("g", "same")])
    assert not x.duplicate and not y.duplicate and x.monoton != y.monoton


async def test_a_group_scoped_queue_claims_a_groups_keys_together(
    engine: QueueEngine, account: str, clock: FakeClock, calls: CallCounter
) -> None:
    """Scope messageGroup: the keys a send has for a group are read in one read, claimed
    in one compare-and-set and marked written in one write (scope queue: one each per key);
    a key is the group's, and every rule of deduplication holds as with scope queue."""
    # Buckets of 16: the batch is one bucket's write (the marks are per bucket written).
    await _fifo(engine, account, deduplication_scope="messageGroup", bucket_size=16)
    batch = [_msg("g", f"g{i}", f"d{i}") for i in range(7)] + [
        _msg("h", f"h{i}", f"d{i}") for i in range(3)
    ]
    calls.reset()
    first = await engine.send(account, "q", batch)
    assert not any(s.duplicate for s in first)
    assert len({s.monoton for s in first}) == 10  # d0 of g and d0 of h: two messages
    # Two groups: two of each, whatever the number of keys.
    assert calls.calls["read_group_dedup"] == 2
    assert calls.calls["claim_group_dedup"] == 2
    assert calls.calls["mark_group_dedup_written"] == 2
    assert calls.calls["read_dedup"] == calls.calls["claim_dedup"] == 0
    # A retry of the whole batch, and of a part of it with a new key among them.
    again = await engine.send(account, "q", batch)
    assert all(s.duplicate for s in again)
    assert [s.monoton for s in again] == [s.monoton for s in first]
    mixed = await engine.send(account, "q", [_msg("g", "g7", "d7"), _msg("g", "g1?", "d1")])
    assert [s.duplicate for s in mixed] == [False, True]
    assert mixed[1].monoton == first[1].monoton
    bodies: dict[str, list[str]] = {}
    while got := await engine.receive(account, "q", 10, LEASE_S):
        for d in got:
            bodies.setdefault(d.group or "", []).append(d.message)
        await engine.ack_batch(account, "q", [d.receipt for d in got])
    assert bodies == {"g": [f"g{i}" for i in range(8)], "h": ["h0", "h1", "h2"]}
    # After the interval the keys are free again (the kept claims are replaced).
    clock.advance(DEDUP_INTERVAL_MS / 1000 + 1)
    later = await engine.send(account, "q", batch[:2])
    assert not any(s.duplicate for s in later)
    assert min(s.monoton for s in later) > max(s.monoton for s in mixed)
    [retried] = await engine.send(account, "q", batch[1:2])
    assert retried.duplicate and retried.monoton == later[1].monoton


@pytest.mark.parametrize("scope", ["queue", "messageGroup"])
async def test_a_claims_written_mark_lives_no_longer_than_the_claim(
    engine: QueueEngine, account: str, clock: FakeClock, scope: str, monkeypatch: Any
) -> None:
    """A `written` cell outliving its claim's other columns would be a row no new claim of
    the key could take (IF NOT EXISTS) and no read would call a claim: the mark's TTL is
    what is left of the claim's, less a second."""
    queue = await _fifo(engine, account, deduplication_scope=scope)
    store = engine.ctx.store
    ttls: list[int] = []
    name = "mark_group_dedup_written" if scope == "messageGroup" else "mark_dedup_written"
    mark = getattr(store, name)

    async def recorded(*args: Any) -> None:
        ttls.append(args[-1])
        await mark(*args)

    monkeypatch.setattr(store, name, recorded)
    await engine.send(account, "q", [_msg("g", "now", "d1")])
    assert ttls == [DEDUP_TTL_S - 1]
    # A first send that died before writing, answered by a retry 200 s later.
    from cassieq.engine.life.put import new_message

    monoton = await engine.publisher.take_monotons(queue.id, 1)
    row = new_message(monoton, "late", engine.now(), group="g")
    key = dedup_key(queue.options, _msg("g", "late", "d2"))  # its group's, by scope
    assert key is not None
    claim = DedupClaim(
        key=key, monoton=monoton, partition=0, tag="t0", created_at=engine.now(), row=row
    )
    if scope == "messageGroup":
        assert await store.claim_group_dedup(queue.id, "g", [claim], DEDUP_TTL_S) == {}
    else:
        assert await store.claim_dedup(claim, queue.id, DEDUP_TTL_S) is None
    clock.advance(200)
    [retry] = await engine.send(account, "q", [_msg("g", "late", "d2")])
    assert retry.duplicate and retry.monoton == monoton
    assert ttls[-1] == DEDUP_TTL_S - 200 - 1


@pytest.mark.parametrize("scope", ["queue", "messageGroup"])
async def test_one_key_sent_twice_at_once_is_stored_once(
    engine: QueueEngine, account: str, scope: str
) -> None:
    """Two sends of one key at once (two calls whose puts are written together): one
    message, both answered with it."""
    await _fifo(engine, account, deduplication_scope=scope)
    sends = [engine.send(account, "q", [_msg("g", f"try {i}", "k")]) for i in range(4)]
    answers = [a for [a] in await asyncio.gather(*sends)]
    assert len({(a.partition, a.monoton) for a in answers}) == 1
    [stored] = [i for i, a in enumerate(answers) if not a.duplicate]
    got = await engine.receive(account, "q", 10, LEASE_S)
    assert [d.message for d in got] == [f"try {stored}"]
    await engine.ack_batch(account, "q", [d.receipt for d in got])
    assert await engine.receive(account, "q", 10, LEASE_S) == []


async def test_a_retry_finishes_a_first_send_that_died_before_writing(
    engine: QueueEngine, account: str
) -> None:
    queue = await _fifo(engine, account)
    # A first send that claimed its id and a monoton, then died: nothing written.
    monoton = await engine.publisher.take_monotons(queue.id, 1)
    from cassieq.engine.life.put import new_message

    row = new_message(monoton, "lost?", engine.now(), group="g")
    claim = DedupClaim(
        key="d", monoton=monoton, partition=0, tag="t0", created_at=engine.now(), row=row
    )
    assert await engine.ctx.store.claim_dedup(claim, queue.id, 60) is None
    [retry] = await engine.send(account, "q", [_msg("g", "lost?", "d")])
    assert retry.duplicate and retry.monoton == monoton
    [d] = await engine.receive(account, "q", 10, LEASE_S)
    assert (d.message, d.receipt.monoton) == ("lost?", monoton)


async def test_a_retry_stores_a_first_send_whose_bucket_was_finished_without_it(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    queue = await _fifo(engine, account, finalize_seconds=1)
    monoton = await engine.publisher.take_monotons(queue.id, 1)
    from cassieq.engine.life.put import new_message

    row = new_message(monoton, "hole", engine.now(), group="g")
    claim = DedupClaim(
        key="d", monoton=monoton, partition=0, tag="t0", created_at=engine.now(), row=row
    )
    assert await engine.ctx.store.claim_dedup(claim, queue.id, 60) is None
    await engine.ctx.store.add_group_messages(queue.id, "g", [monoton], engine.now(), 60)
    # The bucket is finished without the row: the first send's monoton is a hole.
    await engine.ctx.store.finalize_bucket(queue.id, queue.bucket_of(monoton), engine.now())
    [retry] = await engine.send(account, "q", [_msg("g", "hole", "d")])
    assert retry.duplicate and retry.monoton != monoton
    # The stored copy is its group's head (the first send's entry is retired with its
    # finished bucket): a look at the group's records finds it at once. The reader's grace
    # for writes in flight holds only the walk over the holes, not the group.
    [d] = await engine.receive(account, "q", 10, LEASE_S)
    assert d.message == "hole" and d.receipt.monoton == retry.monoton
    # And a second retry finds the claim pointing at the stored copy.
    [third] = await engine.send(account, "q", [_msg("g", "hole", "d")])
    assert third.duplicate and third.monoton == retry.monoton


async def test_a_group_whose_head_went_to_the_dead_letter_queue_goes_on(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await _fifo(engine, account, "dlq")
    await _fifo(engine, account, dlq_name="dlq", max_delivery_count=2)
    await engine.send(account, "q", [_msg("g", "poison"), _msg("g", "next")])
    for _ in range(2):
        [d] = await engine.receive(account, "q", 1, LEASE_S)
        assert d.message == "poison"
        clock.advance(LEASE_S + 1)
    [d] = await engine.receive(account, "q", 10, LEASE_S)
    assert d.message == "next"
    [dead] = await engine.receive(account, "dlq", 10, LEASE_S)
    assert (dead.message, dead.group) == ("poison", "g")


async def test_what_a_fifo_queue_refuses(engine: QueueEngine, account: str) -> None:
    await _fifo(engine, account)
    with pytest.raises(InvalidArgument, match="group"):
        await engine.send(account, "q", [OutgoingMessage(body="no group")])
    with pytest.raises(InvalidArgument, match="delay"):
        await engine.send(account, "q", [OutgoingMessage(body="x", group="g", delay_ms=5000)])
    with pytest.raises(InvalidArgument):
        await engine.put(account, "q", "v1 put: no group")
    with pytest.raises(FifoCannotChange):
        await engine.update_queue(account, "q", {"fifo": False})
    with pytest.raises(FifoCannotChange):
        await engine.update_queue(account, "q", {"partitions": 2})
    await make_queue(engine, account, "standard")
    with pytest.raises(InvalidArgument, match="FIFO"):
        await engine.update_queue(account, "q", {"dlq_name": "standard"})
    with pytest.raises(InvalidArgument, match="FIFO"):
        await _fifo(engine, account, "q2", dlq_name="standard")
    with pytest.raises(FifoCannotChange):
        await engine.update_queue(account, "standard", {"fifo": True})


async def test_a_retried_receive_gets_the_same_messages(engine: QueueEngine, account: str) -> None:
    await _fifo(engine, account)
    await engine.send(account, "q", [_msg("g1", "a"), _msg("g2", "b")])
    first = await engine.receive(account, "q", 10, LEASE_S, attempt_id="r1")
    again = await engine.receive(account, "q", 10, LEASE_S, attempt_id="r1")
    assert [d.receipt for d in again] == [d.receipt for d in first] and len(first) == 2
    assert await engine.receive(account, "q", 10, LEASE_S, attempt_id="r2") == []


async def test_acked_entries_leave_no_group_rows(engine: QueueEngine, account: str) -> None:
    queue = await _fifo(engine, account)
    await engine.send(account, "q", [_msg("g", str(i)) for i in range(6)])
    while got := await engine.receive(account, "q", 10, LEASE_S):
        await engine.ack_batch(account, "q", [d.receipt for d in got])
    assert await engine.ctx.store.read_group_messages(queue.id, "g", 100) == []


async def test_a_standard_queue_keeps_a_group_without_ordering(
    engine: QueueEngine, account: str
) -> None:
    await make_queue(engine, account)
    await engine.send(account, "q", [_msg("g", "a"), _msg("g", "b")])
    got = await engine.receive(account, "q", 10, LEASE_S)
    assert sorted(d.message for d in got) == ["a", "b"]  # both at once: no FIFO gate
    assert {d.group for d in got} == {"g"} and {d.sequence_number for d in got} == {None}


def test_sequence_numbers_grow_with_the_monoton() -> None:
    assert sequence_number(0, 9) < sequence_number(0, 10) < sequence_number(0, 10**12)
    assert len(sequence_number(255, 10**15)) == 20
    assert HOLE_MS > 0
