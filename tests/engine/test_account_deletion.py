"""Deleting an account deletes what it owns: a new account of the same name starts empty.

Both stores (the engine suite's fixtures), with a second server where it matters.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.errors import AccountExists, AccountNotFound, QueueLimitReached
from cassieq.model import QueueDefinition, QueueOptions, StatsSnapshot
from cassieq.store.base import Store
from tests.engine.conftest import make_queue
from tests.engine.faults import FaultyStore, InjectedFault
from tests.engine.jobs import own_jobs_queue


def _snapshot(queue: QueueDefinition, now: int) -> StatsSnapshot:
    return StatsSnapshot(
        queue=queue.id, computed_at=now, published=2, acked=0, dead_lettered=0, in_flight=1,
        backlog=1, delivered=1, delivery_count_histogram={0: 1, 1: 1},
        oldest_unacked_age_s=1.0, ack_latency_p50_ms=None, ack_latency_p95_ms=None,
        ack_latency_p99_ms=None, rows_scanned=2,
    )  # fmt: skip


async def _tenant(engine: QueueEngine, account: str, clock: FakeClock) -> QueueDefinition:
    """The old tenant: two queues with messages (one in flight) and a stats snapshot."""
    await make_queue(engine, account, "dead")
    queue = await make_queue(engine, account, "salaries", dlq_name="dead", bucket_size=2)
    await engine.put(account, "salaries", "carol-salary-data")
    await engine.put(account, "salaries", "dave-salary-data")
    await engine.put(account, "dead", "old-dead-letter")
    assert await engine.get_next(account, "salaries", 60) is not None
    await engine.ctx.store.write_stats_snapshot(_snapshot(queue, clock.now()))
    return queue


async def _assert_starts_empty(engine: QueueEngine, account: str) -> None:
    assert await engine.queues.list(account) == []
    await make_queue(engine, account, "dead")
    await make_queue(engine, account, "salaries", dlq_name="dead", bucket_size=2)
    for name in ("salaries", "dead"):
        assert await engine.get_next(account, name, 0) is None
        stats = await engine.statistics(account, name)
        assert (stats.size, stats.published, stats.in_flight, stats.delivered) == (0, 0, 0, 0)
        assert await engine.statistics_snapshot(account, name) is None


async def test_a_re_created_account_starts_empty(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    old = await engine.accounts.get(account)
    queue = await _tenant(engine, account, clock)
    await engine.accounts.delete(account)
    with pytest.raises(AccountNotFound):
        await engine.accounts.get(account)
    clock.advance(engine.accounts.recreate_after_ms / 1000)
    new = await engine.accounts.create(account)
    assert not set(new.keys.values()) & set(old.keys.values())  # the old keys are gone
    await _assert_starts_empty(engine, account)

    # The deletion jobs remove the old versions' rows and their statistics snapshots.
    clock.advance(engine.ctx.tuning.deletion_grace_ms / 1000 + 1)
    assert await engine.deleter.run_once() >= 2  # (others of the shared keyspace too)
    store = engine.ctx.store
    assert (await store.read_bucket(queue.id, 0)).messages == ()
    assert await store.read_stats_snapshot(account, "salaries") is None


async def test_another_server_stops_serving_the_old_queues_within_its_cache_time(
    engine: QueueEngine, other: QueueEngine, account: str, clock: FakeClock
) -> None:
    await _tenant(engine, account, clock)
    # The other server has the old definitions cached.
    got = await other.get_next(account, "salaries", 60)
    assert got is not None and got.message == "dave-salary-data"
    await engine.accounts.delete(account)
    clock.advance(engine.accounts.recreate_after_ms / 1000)
    await engine.accounts.create(account)
    await make_queue(engine, account, "salaries")
    clock.advance(other.ctx.tuning.queue_cache_ms / 1000)
    assert await other.get_next(account, "salaries", 0) is None
    assert (await other.statistics(account, "salaries")).published == 0


async def test_a_deletion_cut_short_is_finished_by_deleting_again(
    store: Store, clock: FakeClock, account: str
) -> None:
    faulty = FaultyStore(store)
    engine = QueueEngine(faulty, clock)
    await _tenant(engine, account, clock)
    faulty.fail_once("delete_account")  # a crash after the queues, before the account row
    with pytest.raises(InjectedFault):
        await engine.accounts.delete(account)
    # Half way: the queues are gone, the account is still there, so its name cannot be
    # taken by a new account, and a queue the old tenant creates now deletes itself.
    assert await engine.queues.list(account) == []
    with pytest.raises(AccountExists):
        await engine.accounts.create(account)
    with pytest.raises(AccountNotFound, match="being deleted"):
        await engine.create_queue(account, "sneaky", QueueOptions())
    assert await engine.queues.list(account) == []

    await engine.accounts.delete(account)  # again: finished
    assert await store.read_account(account) is None
    # Its closing mark holds the name only for the cache window.
    mark = await store.read_account_deletion(account)
    assert mark is not None and mark[1] == clock.now()
    clock.advance(engine.accounts.recreate_after_ms / 1000)
    await engine.accounts.create(account)
    await _assert_starts_empty(engine, account)


async def test_a_deletion_cut_short_after_the_account_row_leaves_nothing_behind(
    store: Store, clock: FakeClock, account: str
) -> None:
    faulty = FaultyStore(store)
    engine = QueueEngine(faulty, clock)
    await _tenant(engine, account, clock)
    marks = iter([False, True])  # the first mark goes through; the closing one fails
    faulty.fail_once("mark_account_deleting", when=lambda *_: next(marks))
    with pytest.raises(InjectedFault):
        await engine.accounts.delete(account)
    assert await store.read_account(account) is None
    # The mark left behind is the one from the start of the deletion: its window counts
    # from then, and the name is free once it has passed.
    clock.advance(engine.accounts.recreate_after_ms / 1000)
    new = await engine.accounts.create(account)
    await _assert_starts_empty(engine, account)
    assert await store.read_account_deletion(account) is None  # cleared by the create
    assert (await engine.accounts.get(account)).created_at == new.created_at


class _DeletesTheAccountBeforeTheInsert:
    """The store, where the account is deleted and re-created while a queue is being
    created in it: after the create read the account, before its insert lands."""

    def __init__(self, inner: Any, clock: FakeClock) -> None:
        self.inner = inner
        self.clock = clock
        self.engine: QueueEngine | None = None
        self.armed = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def insert_queue(self, queue: QueueDefinition) -> QueueDefinition | None:
        if self.armed and self.engine is not None:
            self.armed = False
            await self.engine.accounts.delete(queue.account)  # its sweep sees no queue yet
            self.clock.advance(self.engine.accounts.recreate_after_ms / 1000)
            await self.engine.accounts.create(queue.account)
        result: QueueDefinition | None = await self.inner.insert_queue(queue)
        return result


async def test_a_queue_created_during_the_deletion_does_not_survive_it(
    store: Store, clock: FakeClock
) -> None:
    racing = _DeletesTheAccountBeforeTheInsert(store, clock)
    engine = racing.engine = QueueEngine(racing, clock)
    account = f"t-{uuid.uuid4().hex[:12]}"
    await engine.accounts.create(account)
    with pytest.raises(AccountNotFound):
        await engine.create_queue(account, "sneaky", QueueOptions())
    assert not racing.armed
    assert await engine.queues.list(account) == []  # the new account does not get it


async def test_an_account_has_a_queue_limit(store: Store, clock: FakeClock) -> None:
    engine = QueueEngine(store, clock, tuning=own_jobs_queue(max_queues_per_account=3))
    account = f"t-{uuid.uuid4().hex[:12]}"
    await engine.accounts.create(account)
    for name in ("a", "b", "c"):
        await make_queue(engine, account, name)
    with pytest.raises(QueueLimitReached, match="has 3 queues, the most allowed"):
        await engine.create_queue(account, "d", QueueOptions())
    again, created = await engine.create_queue(account, "a", QueueOptions())  # exists: fine
    assert again.name == "a" and not created
    await engine.queues.delete(account, "b")
    await make_queue(engine, account, "d")  # deleted queues do not count
    assert [q.name for q in await engine.queues.list(account)] == ["a", "c", "d"]


async def test_a_deleted_name_is_refused_until_no_server_can_hold_the_old_account(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await engine.accounts.delete(account)
    with pytest.raises(AccountExists, match="moments ago"):
        await engine.accounts.create(account)
    clock.advance(engine.accounts.recreate_after_ms / 1000 - 0.5)
    with pytest.raises(AccountExists, match="can be created again in 1 s"):
        await engine.accounts.create(account)
    # Past every server's account cache: the name is free, and its mark goes.
    clock.advance(1)
    await engine.accounts.create(account)
    assert await engine.ctx.store.read_account_deletion(account) is None
