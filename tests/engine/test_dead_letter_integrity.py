"""Dead letters are never dropped: a missing dead-letter queue keeps them, a move is exactly once.

Both stores (the engine suite's fixtures). Time is the FakeClock's: a lease, a hold and a
claim end when the test moves the clock past them.
"""

from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.errors import InvalidArgument
from cassieq.model import QueueDefinition, QueueId, QueueOptions
from cassieq.store.base import Store
from tests.engine.conftest import make_queue
from tests.engine.faults import FaultyStore, InjectedFault, TargetGoneAtItsMonoton
from tests.engine.test_holes_and_repair import drain

LEASE_S = 10
PAYLOADS = ["p0", "p1", "p2"]


async def _poisoned(
    engine: QueueEngine, account: str, clock: FakeClock, deliveries: int = 1
) -> QueueDefinition:
    """A queue whose messages have used their ``deliveries`` (the last leases in force),
    and its dead-letter queue "dead"."""
    await make_queue(engine, account, "dead")
    work = await make_queue(
        engine, account, "work", max_delivery_count=deliveries, dlq_name="dead", bucket_size=2,
        finalize_seconds=1,
    )  # fmt: skip
    for payload in PAYLOADS:
        await engine.put(account, "work", payload)
    for round in range(deliveries):
        if round:
            await engine.settle()  # the left buckets are the invisibility side's once sealed
            clock.advance(LEASE_S + 1)
        for _ in PAYLOADS:
            assert await engine.get_next(account, "work", LEASE_S) is not None
    return work


async def _housekeeping(engine: QueueEngine, account: str, queue: str = "work") -> None:
    await engine.settle()
    await engine.repair(account, queue)


async def _moved(engine: QueueEngine, account: str, clock: FakeClock, count: int) -> None:
    """Gets (and repair) until ``count`` messages of "work" are dead-lettered."""
    for _ in range(20):
        assert await engine.get_next(account, "work", LEASE_S) is None  # never delivered
        await _housekeeping(engine, account)
        if (await engine.statistics(account, "work")).dead_lettered == count:
            return
        clock.advance(engine.ctx.tuning.dead_letter_hold_ms / 1000 + 1)
    pytest.fail("the held messages were not moved")


async def test_a_dead_letter_queue_must_exist(engine: QueueEngine, account: str) -> None:
    with pytest.raises(InvalidArgument, match="dlqName 'nope' must name an existing queue"):
        await engine.create_queue(account, "work", QueueOptions(dlq_name="nope"))
    assert await engine.queues.list(account) == []
    await make_queue(engine, account, "nope")
    await make_queue(engine, account, "work", dlq_name="nope")


async def test_a_deleted_dead_letter_queue_keeps_messages_until_it_exists_again(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await _poisoned(engine, account, clock)
    await engine.queues.delete(account, "dead")
    clock.advance(LEASE_S + 1)  # every lease ends: each message is due for its DLQ
    assert await engine.get_next(account, "work", LEASE_S) is None
    stats = await engine.statistics(account, "work")
    # Kept and counted, not delivered, not dropped.
    assert (stats.size, stats.dead_letter_pending, stats.dead_lettered, stats.in_flight) == (
        3, 3, 0, 0,
    )  # fmt: skip
    for _ in range(4):  # several holds come and go: still kept, never delivered
        clock.advance(engine.ctx.tuning.dead_letter_hold_ms / 1000 + 1)
        assert await engine.get_next(account, "work", LEASE_S) is None
        await _housekeeping(engine, account)
    stats = await engine.statistics(account, "work")
    assert (stats.size, stats.dead_letter_pending, stats.dead_lettered) == (3, 3, 0)

    await make_queue(engine, account, "dead")  # a new incarnation of the name
    clock.advance(engine.ctx.tuning.dead_letter_hold_ms / 1000 + 1)
    await _moved(engine, account, clock, 3)
    stats = await engine.statistics(account, "work")
    assert (stats.size, stats.dead_letter_pending, stats.dead_lettered) == (0, 0, 3)
    assert sorted(await drain(engine, account, "dead")) == PAYLOADS  # each exactly once
    for _ in range(3):  # nothing moves twice, however long it runs on
        clock.advance(engine.ctx.tuning.claim_ms / 1000 + 1)
        assert await engine.get_next(account, "work", LEASE_S) is None
        await _housekeeping(engine, account)
        await _housekeeping(engine, account, "dead")
    assert await drain(engine, account, "dead") == []


async def test_held_messages_do_not_stall_the_queue(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    """A held message keeps its bucket (not dropped, not deleted), yet the reader, the
    invisibility side and repair go on past it: later messages are delivered, their
    expired leases delivered again, repair finishes its buckets."""
    work = await _poisoned(engine, account, clock, deliveries=2)
    await engine.queues.delete(account, "dead")
    clock.advance(LEASE_S + 1)
    assert await engine.get_next(account, "work", LEASE_S) is None  # p0..p2 held
    later = [f"later{i}" for i in range(6)]
    for payload in later:
        await engine.put(account, "work", payload)
    first_round = []
    for _ in later:  # delivered, and left unacked: their leases will end
        got = await engine.get_next(account, "work", LEASE_S)
        assert got is not None
        first_round.append(got.message)
    assert sorted(first_round) == later
    for _ in range(3):
        clock.advance(LEASE_S + 1)
        await _housekeeping(engine, account)
    redelivered = []
    while (got := await engine.get_next(account, "work", LEASE_S)) is not None:
        redelivered.append(got.message)
        await engine.ack(account, "work", got.receipt)
    assert sorted(redelivered) == later  # again after their leases, past the held bucket
    for _ in range(4):  # buckets finalized, then passed, one step of each at a time
        clock.advance(2)
        await _housekeeping(engine, account)
        assert await engine.get_next(account, "work", LEASE_S) is None
    store = engine.ctx.store
    reader = await store.read_pointer(work.id, "reader")
    state = await store.read_invisibility(work.id)
    # Both pointers caught up with the reader; the held buckets set aside as stragglers.
    assert reader == 4 and state.bucket == reader and set(state.stragglers) == {0, 1}
    assert await store.read_pointer(work.id, "repair") == reader
    held = [
        m.message
        for b in (0, 1)
        for m in (await store.read_bucket(work.id, b)).messages
        if not m.acked
    ]
    assert held == PAYLOADS  # the buckets holding them are kept, not dropped
    stats = await engine.statistics(account, "work")
    assert (stats.size, stats.dead_letter_pending, stats.acked) == (3, 3, 6)


async def test_a_move_cut_short_after_the_copy_is_finished_without_a_second_copy(
    store: Store, clock: FakeClock, account: str
) -> None:
    faulty = FaultyStore(store)
    engine = QueueEngine(faulty, clock)
    await make_queue(engine, account, "dead")
    await make_queue(engine, account, "work", max_delivery_count=1, dlq_name="dead")
    await engine.put(account, "work", "poison")
    assert await engine.get_next(account, "work", LEASE_S) is not None
    clock.advance(LEASE_S + 1)
    # The copy is written; the source's retirement fails (a crash between the two).
    faulty.fail_once("cas_message", when=lambda *a: a[3].dead_lettered)
    with pytest.raises(InjectedFault):
        await engine.get_next(account, "work", LEASE_S)
    assert not faulty.armed("cas_message")
    # Meanwhile: the copy is in the DLQ, the source is hidden by its claim, never delivered.
    assert (await engine.statistics(account, "work")).dead_letter_pending == 1
    assert await engine.get_next(account, "work", LEASE_S) is None
    clock.advance(engine.ctx.tuning.claim_ms / 1000 + 1)  # the claim ends: redone
    assert await engine.get_next(account, "work", LEASE_S) is None
    stats = await engine.statistics(account, "work")
    assert (stats.size, stats.dead_letter_pending, stats.dead_lettered) == (0, 0, 1)
    assert await drain(engine, account, "dead") == ["poison"]  # one copy, not two


class _DeletesTheDlqAfterTheCopy:
    """The store, where the DLQ is deleted right after a copy is written into it."""

    def __init__(self, inner: Any, engine: QueueEngine | None = None) -> None:
        self.inner = inner
        self.engine = engine
        self.dlq: QueueId | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def delete_after_a_copy_into(self, dlq: QueueId) -> None:
        self.dlq = dlq

    async def insert_messages(self, queue: QueueId, *args: Any) -> bool:
        written: bool = await self.inner.insert_messages(queue, *args)
        if queue == self.dlq and self.engine is not None:
            self.dlq = None
            await self.engine.queues.delete(queue.account, queue.queue)
        return written


async def test_a_dlq_deleted_during_a_move_keeps_the_message(
    store: Store, clock: FakeClock, account: str
) -> None:
    racing = _DeletesTheDlqAfterTheCopy(store)
    engine = racing.engine = QueueEngine(racing, clock)
    dead = await make_queue(engine, account, "dead")
    await make_queue(engine, account, "work", max_delivery_count=1, dlq_name="dead")
    await engine.put(account, "work", "poison")
    assert await engine.get_next(account, "work", LEASE_S) is not None
    clock.advance(LEASE_S + 1)
    racing.delete_after_a_copy_into(dead.id)
    assert await engine.get_next(account, "work", LEASE_S) is None
    assert racing.dlq is None, "the copy was not written"
    stats = await engine.statistics(account, "work")
    # Its copy went into a deleted version: the message is kept, not counted as moved.
    assert (stats.size, stats.dead_letter_pending, stats.dead_lettered) == (1, 1, 0)
    await make_queue(engine, account, "dead")
    clock.advance(engine.ctx.tuning.dead_letter_hold_ms / 1000 + 1)
    await _moved(engine, account, clock, 1)
    assert await drain(engine, account, "dead") == ["poison"]


@pytest.mark.parametrize("where", ["claim", "copy", "targets"])
async def test_a_dlq_gone_at_its_monoton_keeps_the_messages_and_the_receive_goes_on(
    store: Store, clock: FakeClock, account: str, where: str
) -> None:
    """Its state deleted between the look-up and the monoton taken there (for the claim,
    for a copy whose first bucket was finalized, for a range of moves at once): the
    messages are held, as for a missing dead-letter queue, and the receive they came in
    answers without them (it failed with the dead-letter queue's not-found)."""
    racing = TargetGoneAtItsMonoton(store)
    engine = racing.engine = QueueEngine(racing, clock)
    dead = await make_queue(engine, account, "dead")
    await engine.put(account, "dead", "known")  # this server knows its monoton (1)
    work = await make_queue(engine, account, "work", max_delivery_count=1, dlq_name="dead")
    count = 3 if where == "targets" else 1
    for payload in PAYLOADS[:count]:
        await engine.put(account, "work", payload)
    assert len(await engine.receive(account, "work", count, LEASE_S)) == count
    clock.advance(LEASE_S + 1)
    racing.target, racing.finalize_first = dead, where == "copy"
    assert await engine.receive(account, "work", count, LEASE_S) == []
    # Gone as monotons were taken there: one range for the three moves, else one.
    assert racing.asked == (count if where == "targets" else 1)
    rows = (await store.read_bucket(work.id, 0)).messages
    assert [m.dlq_held for m in rows] == [True] * count  # held, not left claimed
    stats = await engine.statistics(account, "work")
    assert (stats.size, stats.dead_letter_pending, stats.dead_lettered) == (count, count, 0)
    await make_queue(engine, account, "dead")
    clock.advance(engine.ctx.tuning.dead_letter_hold_ms / 1000 + 1)
    await _moved(engine, account, clock, count)
    assert sorted(await drain(engine, account, "dead")) == PAYLOADS[:count]


async def test_a_missing_dlq_is_logged_once_a_minute_per_queue(
    store: Store, clock: FakeClock, account: str
) -> None:
    with capture_logs() as logs:
        engine = QueueEngine(store, clock)  # logs into the capture
        await _poisoned(engine, account, clock)
        await engine.queues.delete(account, "dead")
        clock.advance(LEASE_S + 1)
        assert await engine.get_next(account, "work", LEASE_S) is None  # three held
        clock.advance(engine.ctx.tuning.dead_letter_hold_ms / 1000 + 1)  # held again: < 1 min
        await _housekeeping(engine, account)
        assert await engine.get_next(account, "work", LEASE_S) is None
        warned = [e for e in logs if e["event"] == "dead_letter_queue_missing"]
        assert len(warned) == 1 and warned[0]["dlq"] == "dead"
        clock.advance(61)
        assert await engine.get_next(account, "work", LEASE_S) is None
        await _housekeeping(engine, account)
        assert await engine.get_next(account, "work", LEASE_S) is None
    assert len([e for e in logs if e["event"] == "dead_letter_queue_missing"]) == 2
    assert (await engine.statistics(account, "work")).dead_letter_pending == 3


async def test_without_a_dlq_set_a_spent_message_is_dropped_and_counted(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    """No dlqName: the owner chose to drop such messages (CassieQ's behaviour)."""
    await make_queue(engine, account, max_delivery_count=1)
    await engine.put(account, "q", "poison")
    assert await engine.get_next(account, "q", LEASE_S) is not None
    clock.advance(LEASE_S + 1)
    assert (await engine.statistics(account, "q")).dead_letter_pending == 1  # due
    assert await engine.get_next(account, "q", LEASE_S) is None
    stats = await engine.statistics(account, "q")
    assert (stats.size, stats.dead_letter_pending, stats.dead_lettered) == (0, 0, 1)


async def test_a_dead_letter_refused_by_a_seal_is_left_to_the_invisibility_side(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    """The reader's dead-letter of a spent message lost to the bucket's seal changed
    nothing: this server must not take the message for done (its invisibility side would
    skip it, and hold its pointer back until the server forgot it)."""
    queue = await make_queue(engine, account, max_delivery_count=1)
    await engine.put(account, "q", "poison")
    assert await engine.get_next(account, "q", LEASE_S) is not None
    clock.advance(LEASE_S + 1)
    store = engine.ctx.store
    snap = await store.read_bucket(queue.id, 0)
    await store.seal_bucket(queue.id, 0, clock.now())  # the chain sealed it meanwhile
    deliverer = engine.reader._deliverer
    await deliverer.dead_letters.dead_letter_all(queue, 0, list(snap.messages), unsealed=True)
    assert (await store.read_bucket(queue.id, 0)).messages == snap.messages  # refused
    assert not deliverer.busy(queue, snap.messages[0])
    assert await engine.get_next(account, "q", LEASE_S) is None  # the reader leaves bucket 0
    await engine.settle()
    assert await engine.get_next(account, "q", LEASE_S) is None  # the invisibility side's turn
    stats = await engine.statistics(account, "q")
    assert (stats.size, stats.dead_letter_pending, stats.dead_lettered) == (0, 0, 1)
