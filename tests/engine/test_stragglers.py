"""Long and renewed leases behind the reader (found in review): they never pin redelivery."""

from __future__ import annotations

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.errors import EngineError
from cassieq.model import VisibilityChange
from tests.engine.conftest import make_queue


async def test_a_heartbeating_message_does_not_pin_redelivery(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, bucket_size=1, finalize_seconds=1)
    for i in range(20):
        await engine.put(account, "q", f"m{i}")
    held = await engine.get_next(account, "q", 30)  # a long job that renews its lease
    assert held is not None and held.message == "m0"
    receipt = held.receipt
    for _ in range(1, 20):
        assert await engine.get_next(account, "q", 30) is not None  # consumers that die
    redelivered: set[str] = set()
    for _ in range(12):  # four minutes of heartbeats, every 20 s
        clock.advance(20)
        receipt = await engine.update(account, "q", receipt, None, 30)
        await engine.repair(account, "q")
        while (got := await engine.get_next(account, "q", 30)) is not None:
            redelivered.add(got.message)
            await engine.ack(account, "q", got.receipt)
    assert redelivered == {f"m{i}" for i in range(1, 20)}
    await engine.ack(account, "q", receipt)
    assert (await engine.statistics(account, "q")).size == 0


async def test_releasing_a_long_lease_behind_the_pointer_redelivers_at_once(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    queue = await make_queue(engine, account, bucket_size=1, finalize_seconds=1)
    await engine.put(account, "q", "job")
    await engine.put(account, "q", "next")
    job = await engine.get_next(account, "q", 3600)
    assert job is not None and job.message == "job"
    nxt = await engine.get_next(account, "q", 30)
    assert nxt is not None
    await engine.settle()  # the reader left bucket 0: its seal is written (finalize counts from it)
    await engine.ack(account, "q", nxt.receipt)
    clock.advance(2)
    await engine.repair(account, "q")
    assert await engine.get_next(account, "q", 30) is None
    assert 0 in (await engine.ctx.store.read_invisibility(queue.id)).stragglers
    await engine.update(account, "q", job.receipt, None, 0)  # give it back now
    again = await engine.get_next(account, "q", 30)
    assert again is not None and again.message == "job" and again.delivery_count == 1


async def test_two_servers_settling_the_same_stragglers(
    engine: QueueEngine, other: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, bucket_size=1, finalize_seconds=1)
    for m in ("m0", "m1", "m2"):
        await engine.put(account, "q", m)
    r0 = await engine.get_next(account, "q", 600)
    r1 = await engine.get_next(account, "q", 600)
    r2 = await engine.get_next(account, "q", 30)
    assert r0 and r1 and r2
    await engine.ack(account, "q", r2.receipt)
    clock.advance(2)
    await engine.repair(account, "q")
    assert await engine.get_next(account, "q", 30) is None  # buckets 0 and 1 kept aside
    await engine.ack(account, "q", r0.receipt)
    await engine.ack(account, "q", r1.receipt)
    clock.advance(601)
    # Both servers settle the same two stragglers, one after the other and interleaved.
    assert await other.get_next(account, "q", 30) is None
    assert await engine.get_next(account, "q", 30) is None
    stats = await engine.statistics(account, "q")
    assert (stats.published, stats.acked, stats.size) == (3, 3, 0)


async def test_receipts_of_a_bucket_deleted_once_finished_are_refused_not_failed(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    # A late duplicate ack, or a redelivery from a stale snapshot, meets a bucket that was
    # finished and deleted: on Cassandra a batch there is answered with [applied] alone.
    queue = await make_queue(
        engine, account, bucket_size=2, finalize_seconds=1, delete_buckets_after_finalize=True
    )
    for m in ("m0", "m1", "m2", "m3", "m4"):
        await engine.put(account, "q", m)
    got = await engine.receive(account, "q", 10, 30)
    assert sorted(d.message for d in got) == ["m0", "m1", "m2", "m3", "m4"]
    receipts = [d.receipt for d in got]
    assert await engine.ack_batch(account, "q", receipts) == [None] * 5
    await engine.settle()
    clock.advance(2)
    await engine.repair(account, "q")
    assert await engine.receive(account, "q", 10, 30) == []  # the invisibility side passes
    await engine.settle()
    assert not (await engine.ctx.store.read_bucket(queue.id, 0)).messages  # deleted
    again = await engine.ack_batch(account, "q", receipts[:2])
    assert all(isinstance(e, EngineError) for e in again), again
    changes = [VisibilityChange(receipt=r, invisibility_ms=0, body="x") for r in receipts[:2]]
    changed = await engine.change_visibility(account, "q", changes)
    assert all(isinstance(e, EngineError) for e in changed), changed
    with pytest.raises(EngineError):  # v1: one row, a single conditional update
        await engine.ack(account, "q", receipts[0])
    with pytest.raises(EngineError):
        await engine.update(account, "q", receipts[1], "x", 0)
    assert not (await engine.ctx.store.read_bucket(queue.id, 0)).messages  # nothing made up
    stats = await engine.statistics(account, "q")
    assert (stats.published, stats.acked, stats.size) == (5, 5, 0)
