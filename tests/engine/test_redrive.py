"""Redrive: a dead-letter queue's messages go back exactly once, as a task with progress.

Both stores (the engine suite's fixtures); time is the FakeClock's, and the task's rate
limiter waits through a sleep the tests replace (it moves the clock instead).
"""

from __future__ import annotations

from collections import Counter

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.errors import Conflict, InvalidArgument, QueueNotFound
from cassieq.engine.life.redrive import STALE_MS, RateLimiter, TaskNotFound, TaskNotRunning
from cassieq.model import MessageRow, OutgoingMessage, QueueDefinition, RedriveTask
from cassieq.store.base import Store
from tests.engine.conftest import hold_redrives, make_queue
from tests.engine.faults import TargetGoneAtItsMonoton

LEASE_S = 10
FAST = 10_000


async def _dead_letters(
    engine: QueueEngine, account: str, clock: FakeClock, sources: dict[str, list[str]]
) -> None:
    """Queues ``sources`` (name -> bodies) sharing the dead-letter queue "dead", each body
    delivered once (its only delivery) and moved to "dead"."""
    await make_queue(engine, account, "dead", bucket_size=3)
    for name, bodies in sources.items():
        await make_queue(engine, account, name, max_delivery_count=1, dlq_name="dead")
        await engine.send(
            account, name, [OutgoingMessage(body=b, attributes={"from": name}) for b in bodies]
        )
        for _ in bodies:
            assert await engine.get_next(account, name, LEASE_S) is not None
    clock.advance(LEASE_S + 1)
    for name in sources:
        assert await engine.get_next(account, name, LEASE_S) is None  # dead-lettered now
    total = sum(len(b) for b in sources.values())
    assert (await engine.statistics(account, "dead")).size == total


async def _drain(engine: QueueEngine, account: str, queue: str) -> list[tuple[str, int, str]]:
    """(body, deliveries before, attribute "from") of everything in the queue, acked."""
    seen = []
    while got := await engine.receive(account, queue, 10, LEASE_S):
        for d in got:
            seen.append((d.message, d.delivery_count, d.attributes.get("from", "")))
        await engine.ack_batch(account, queue, [d.receipt for d in got])
    return seen


async def test_each_message_goes_back_to_the_queue_it_came_from(
    engine: QueueEngine, other: QueueEngine, account: str, clock: FakeClock
) -> None:
    bodies = {"a": [f"a{i}" for i in range(5)], "b": [f"b{i}" for i in range(4)]}
    await _dead_letters(engine, account, clock, bodies)
    task = await engine.start_redrive(account, "dead", None, FAST)
    assert (task.status, task.total) == ("running", 9)
    await engine.redriver.join()
    done = await other.redrive_status(account, "dead", task.id)  # any server answers
    assert (done.status, done.moved, done.total, done.failed) == ("completed", 9, 9, 0)
    for name, sent in bodies.items():
        got = await _drain(engine, account, name)
        # Exactly once each, as fresh messages (first delivery), attributes kept.
        assert sorted(got) == sorted((b, 0, name) for b in sent)
    dead = await engine.statistics(account, "dead")
    assert (dead.size, dead.acked) == (0, 9)
    assert await engine.get_next(account, "dead", LEASE_S) is None


async def test_redrive_to_a_given_queue(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await _dead_letters(engine, account, clock, {"a": ["x", "y"], "b": ["z"]})
    await make_queue(engine, account, "c")
    task = await engine.start_redrive(account, "dead", "c", FAST)
    await engine.redriver.join()
    assert (await engine.redrive_status(account, "dead", task.id)).moved == 3
    assert sorted(b for b, _, _ in await _drain(engine, account, "c")) == ["x", "y", "z"]
    assert await _drain(engine, account, "a") == []


async def _first_row(engine: QueueEngine, dlq: QueueDefinition) -> tuple[int, MessageRow]:
    snap = await engine.ctx.store.read_bucket(dlq.id, 0)
    return 0, snap.messages[0]


@pytest.mark.parametrize("redo_by", ["task", "get"])
async def test_a_move_cut_between_copy_and_retire_is_redone_to_the_same_row(
    engine: QueueEngine, account: str, clock: FakeClock, redo_by: str
) -> None:
    await _dead_letters(engine, account, clock, {"a": ["m0", "m1", "m2"]})
    dlq = await engine.queues.get(account, "dead")
    target = await engine.queues.get(account, "a")
    bucket, row = await _first_row(engine, dlq)
    # What a server that died after writing the copy left: the claim and the copy.
    dead_letters = engine.redriver._dead_letters
    claim = await dead_letters._claim(dlq, bucket, row, target, unsealed=False, redrive=True)
    assert claim is not None and claim.redrive_to == "a"
    assert await dead_letters.copy_to(dlq, bucket, claim, target, source=None) is not None
    clock.advance(engine.ctx.tuning.claim_ms / 1000 + 1)  # the claim ran out
    if redo_by == "get":  # a consumer of the dead-letter queue finds the claim
        d = await engine.get_next(account, "dead", LEASE_S)
        assert d is not None
        assert d.message != row.message  # the claimed one is finished, not delivered
        await engine.ack(account, "dead", d.receipt)
        expected = [row.message]
    else:
        task = await engine.start_redrive(account, "dead", None, FAST)
        await engine.redriver.join()
        assert (await engine.redrive_status(account, "dead", task.id)).moved == 3
        expected = ["m0", "m1", "m2"]
    got = Counter(b for b, _, _ in await _drain(engine, account, "a"))
    assert got == Counter(expected)  # one copy of the cut move, not two


async def test_progress_under_the_rate_limit(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await _dead_letters(engine, account, clock, {"a": [f"m{i}" for i in range(4)]})
    seen: list[tuple[int, float]] = []
    task_id = ""

    async def sleep(seconds: float) -> None:  # the limiter's wait: time moves, no wall time
        status = await engine.redrive_status(account, "dead", task_id)
        seen.append((status.moved, seconds))
        clock.advance(seconds)

    engine.redriver.sleep = sleep
    start = clock.now()
    task_id = (await engine.start_redrive(account, "dead", None, 2)).id
    await engine.redriver.join()
    # 2 a second: after the first, each move waits for its half second.
    assert seen == [(1, 0.5), (2, 0.5), (3, 0.5)]
    assert clock.now() - start == 1500
    assert (await engine.redrive_status(account, "dead", task_id)).moved == 4


async def _started_and_held(engine: QueueEngine, account: str) -> RedriveTask:
    """A redrive of "dead", 1 a second, that has moved one message and waits (until it is
    cancelled) for its turn to move the next."""
    waiting = hold_redrives(engine)
    task = await engine.start_redrive(account, "dead", None, 1)
    await waiting.wait()
    return task


async def test_a_task_stopped_by_shutdown_says_interrupted_and_a_new_one_moves_the_rest(
    engine: QueueEngine, other: QueueEngine, account: str, clock: FakeClock
) -> None:
    bodies = [f"m{i}" for i in range(4)]
    await _dead_letters(engine, account, clock, {"a": bodies})
    task = await _started_and_held(engine, account)
    await engine.redriver.close()  # what the server's shutdown does
    stopped = await other.redrive_status(account, "dead", task.id)
    assert (stopped.status, stopped.moved, stopped.total) == ("interrupted", 1, 4)
    with pytest.raises(TaskNotRunning):
        await other.cancel_redrive(account, "dead", task.id)
    again = await other.start_redrive(account, "dead", None, FAST)
    await other.redriver.join()
    done = await other.redrive_status(account, "dead", again.id)
    assert (done.status, done.moved, done.total) == ("completed", 3, 3)
    got = await _drain(engine, account, "a")
    assert sorted(got) == sorted((b, 0, "a") for b in bodies)  # each exactly once


async def test_a_running_task_whose_server_died_says_interrupted_once_stale(
    engine: QueueEngine, other: QueueEngine, account: str, clock: FakeClock
) -> None:
    """A server that dies writes nothing more: its last row says running, and goes stale."""
    await make_queue(engine, account, "dead")
    dlq = await engine.queues.get(account, "dead")
    row = RedriveTask(
        id="left-by-a-dead-server",
        status="running",
        moved=2,
        total=5,
        updated_at=clock.now(),
        started_at=clock.now(),
    )
    await engine.ctx.store.write_redrive_task(dlq.id, row)
    clock.advance(STALE_MS / 1000)
    assert (await other.redrive_status(account, "dead", row.id)).status == "running"
    clock.advance(1)
    seen = await other.redrive_status(account, "dead", row.id)
    assert (seen.status, seen.moved, seen.total) == ("interrupted", 2, 5)
    assert [t.status for t in await other.list_redrives(account, "dead")] == ["interrupted"]
    with pytest.raises(TaskNotRunning):
        await other.cancel_redrive(account, "dead", row.id)


@pytest.mark.parametrize("stop", ["shutdown", "death"])
async def test_a_task_asked_to_cancel_that_stops_before_its_next_message_says_cancelled(
    engine: QueueEngine, other: QueueEngine, account: str, clock: FakeClock, stop: str
) -> None:
    await _dead_letters(engine, account, clock, {"a": ["m0", "m1", "m2"]})
    task = await _started_and_held(engine, account)
    await other.cancel_redrive(account, "dead", task.id)  # seen at its next message: never
    if stop == "shutdown":
        await engine.redriver.close()
    else:  # as if the runner died: its last progress row says running, and goes stale
        clock.advance(STALE_MS / 1000 + 1)
    seen = await other.redrive_status(account, "dead", task.id)
    assert (seen.status, seen.moved) == ("cancelled", 1)
    assert [t.status for t in await other.list_redrives(account, "dead")] == ["cancelled"]
    await engine.redriver.close()


async def test_rate_limiter_spaces_takes_by_the_clock() -> None:
    clock, waits = FakeClock(), []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    limiter = RateLimiter(clock, 4, sleep)
    for _ in range(3):
        await limiter.take()  # the clock does not move: each waits one more interval
    assert waits == [0.25, 0.5]
    clock.advance(10)
    await limiter.take()  # idle long enough: at once
    assert waits == [0.25, 0.5]


async def test_copies_without_a_recorded_source(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    """Messages in a dead-letter queue from before schema 0008 (or put there directly) go to
    the only queue that names it; with two such queues and no ``to`` they stay, counted."""
    await make_queue(engine, account, "dead")
    await make_queue(engine, account, "a", dlq_name="dead")
    await engine.put(account, "dead", "legacy")
    task = await engine.start_redrive(account, "dead", None, FAST)
    await engine.redriver.join()
    assert (await engine.redrive_status(account, "dead", task.id)).status == "completed"
    assert [b for b, _, _ in await _drain(engine, account, "a")] == ["legacy"]

    await make_queue(engine, account, "b", dlq_name="dead")
    await engine.put(account, "dead", "legacy-2")
    task = await engine.start_redrive(account, "dead", None, FAST)
    await engine.redriver.join()
    status = await engine.redrive_status(account, "dead", task.id)
    assert (status.status, status.moved, status.failed) == ("failed", 0, 1)
    assert (await engine.statistics(account, "dead")).size == 1  # kept, not dropped


async def test_unknown_task_missing_queues_and_bad_rates(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account, "dead")
    with pytest.raises(TaskNotFound):
        await engine.redrive_status(account, "dead", "no-such-task")
    with pytest.raises(QueueNotFound):
        await engine.start_redrive(account, "dead", "nope", None)
    with pytest.raises(QueueNotFound):
        await engine.start_redrive(account, "nope", None, None)
    with pytest.raises(InvalidArgument):
        await engine.start_redrive(account, "dead", None, 0)
    with pytest.raises(InvalidArgument):
        await engine.start_redrive(account, "dead", "dead", None)


async def test_a_move_cut_short_whose_target_was_deleted_stays_deliverable(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await _dead_letters(engine, account, clock, {"a": ["m0"]})
    dlq = await engine.queues.get(account, "dead")
    target = await engine.queues.get(account, "a")
    bucket, row = await _first_row(engine, dlq)
    dead_letters = engine.redriver._dead_letters
    claim = await dead_letters._claim(dlq, bucket, row, target, unsealed=False, redrive=True)
    assert claim is not None
    assert await dead_letters.copy_to(dlq, bucket, claim, target, source=None) is not None
    await engine.queues.delete(account, "a")  # the copy is in a deleted version now
    clock.advance(max(engine.ctx.tuning.claim_ms, engine.ctx.tuning.queue_cache_ms) / 1000 + 1)
    got = await engine.get_next(account, "dead", LEASE_S)
    assert got is not None and got.message == "m0"  # kept in the dead-letter queue


@pytest.mark.parametrize("where", ["claim", "copy"])
async def test_a_target_gone_at_its_monoton_fails_the_move_and_keeps_the_message(
    store: Store, clock: FakeClock, account: str, where: str
) -> None:
    """The target queue deleted, its state too, as the move takes a monoton there (for its
    claim, or for a copy whose first bucket was finalized): that message fails, the task
    ends, and the message stays in the dead-letter queue, deliverable (once a claim was
    made, when it ends)."""
    racing = TargetGoneAtItsMonoton(store)
    engine = racing.engine = QueueEngine(racing, clock)
    await _dead_letters(engine, account, clock, {"a": ["m0"]})  # this server knows a's monoton
    racing.target = await engine.queues.get(account, "a")
    racing.finalize_first = where == "copy"
    task = await engine.start_redrive(account, "dead", None, FAST)
    await engine.redriver.join()
    assert racing.asked == 1, "no monoton was taken in the target"
    done = await engine.redrive_status(account, "dead", task.id)
    assert (done.status, done.moved, done.failed) == ("failed", 0, 1)
    if where == "copy":
        assert await engine.get_next(account, "dead", LEASE_S) is None  # claimed
        clock.advance(engine.ctx.tuning.claim_ms / 1000 + 1)
    assert await _drain(engine, account, "dead") == [("m0", 0, "a")]


async def test_a_queue_that_is_no_dead_letter_queue_is_refused_up_front(
    engine: QueueEngine, account: str
) -> None:
    """Before: accepted, and the task then failed message after message with no reason."""
    await make_queue(engine, account, "plain")
    await make_queue(engine, account, "elsewhere")
    await engine.put(account, "plain", "x")
    with pytest.raises(InvalidArgument, match="'plain' is no dead-letter queue"):
        await engine.start_redrive(account, "plain", None, FAST)
    assert await engine.list_redrives(account, "plain") == []  # no task was stored
    # With a destination named, there is somewhere for its messages to go.
    task = await engine.start_redrive(account, "plain", "elsewhere", FAST)
    await engine.redriver.join()
    done = await engine.redrive_status(account, "plain", task.id)
    assert (done.status, done.moved, done.failed) == ("completed", 1, 0)


async def test_a_second_task_on_a_queue_with_one_running_is_refused(
    engine: QueueEngine, other: QueueEngine, account: str, clock: FakeClock
) -> None:
    await _dead_letters(engine, account, clock, {"a": [f"m{i}" for i in range(3)]})
    first = await _started_and_held(engine, account)
    with pytest.raises(Conflict, match=f"{first.id} is already running"):
        await other.start_redrive(account, "dead", None, FAST)  # another server too
    await engine.redriver.close()  # the first ends (its server stops)
    again = await other.start_redrive(account, "dead", None, FAST)  # once it has ended
    await other.redriver.join()
    done = await other.redrive_status(account, "dead", again.id)
    assert (done.status, done.moved + 1) == ("completed", 3)
