"""Holes, late writes, repair ownership, queue deletion (acceptance 5, 6, 7)."""

from __future__ import annotations

import asyncio

import pytest

from cassieq.engine import CallCounter, FakeClock, QueueEngine
from cassieq.engine.errors import QueueNotFound
from cassieq.model import MessageRow, QueueDefinition
from cassieq.store.base import Store
from tests.engine.conftest import make_queue
from tests.engine.jobs import pending_jobs


async def drain(engine: QueueEngine, account: str, queue: str) -> list[str]:
    """Get and ack until the queue answers empty; the payloads in delivery order."""
    seen = []
    while (got := await engine.get_next(account, queue, 30)) is not None:
        seen.append(got.message)
        await engine.ack(account, queue, got.receipt)
    return seen


async def write_late(
    engine: QueueEngine,
    queue: QueueDefinition,
    monoton: int,
    payload: str,
    *,
    stamped: int | None = None,
) -> bool:
    """What a writer that took ``monoton`` long ago and stalled finally writes (its row
    stamped ``stamped``, by default when it lands)."""
    now = engine.ctx.clock.now()
    stamp = now if stamped is None else stamped
    row = MessageRow(
        monoton=monoton,
        message=payload,
        version=1,
        delivery_count=0,
        acked=False,
        next_visible_on=stamp,
        tag=f"tag-{monoton}",
        created_at=stamp,
        updated_at=stamp,
        change=f"change-{monoton}",
    )
    return await engine.ctx.store.insert_messages(queue.id, queue.bucket_of(monoton), [row], now)


async def test_a_hole_does_not_block_later_messages(engine: QueueEngine, account: str) -> None:
    queue = await make_queue(engine, account, bucket_size=2)
    # Two writers take monotons 0 and 1 and die before writing: bucket 0 is all holes.
    await engine.publisher.take_monotons(queue.id)
    await engine.publisher.take_monotons(queue.id)
    await engine.put(account, "q", "after the holes")
    assert await drain(engine, account, "q") == []  # the writers may still be on their way
    engine.ctx.clock.advance(engine.ctx.tuning.hole_grace_ms / 1000)  # type: ignore[attr-defined]
    assert await drain(engine, account, "q") == ["after the holes"]


async def sealed_bucket_with_late_write(
    engine: QueueEngine, account: str, clock: FakeClock, finalize_seconds: int = 15
) -> QueueDefinition:
    """Queue q: a, then a slow writer's monoton, then b; the reader passes both buckets, and
    the slow writer's message finally lands in the sealed bucket 0."""
    queue = await make_queue(engine, account, bucket_size=2, finalize_seconds=finalize_seconds)
    await engine.put(account, "q", "a")  # monoton 0
    slow = await engine.publisher.take_monotons(queue.id)  # monoton 1: a slow writer
    await engine.put(account, "q", "b")  # monoton 2, bucket 1
    assert await drain(engine, account, "q") == ["a"]  # waits for monoton 1 a while
    clock.advance(engine.ctx.tuning.hole_grace_ms / 1000)
    assert await drain(engine, account, "q") == ["b"]  # then calls it a hole and moves on
    await engine.settle()  # bucket 0's seal is written...
    assert await drain(engine, account, "q") == []  # ...and the invisibility side passes it
    clock.advance(1)
    assert await write_late(engine, queue, slow, "late")
    return queue


async def test_late_write_is_delivered_once_via_repair_after_finalize_timeout(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    queue = await sealed_bucket_with_late_write(engine, account, clock)
    assert await engine.get_next(account, "q", 30) is None  # the reader has moved on
    assert await engine.repair(account, "q") == 0  # too early: the finalize wait
    assert await engine.get_next(account, "q", 30) is None
    clock.advance(15)
    assert await engine.repair(account, "q") == 1
    assert await drain(engine, account, "q") == ["late"]
    clock.advance(60)
    await engine.repair(account, "q")
    assert await drain(engine, account, "q") == []
    # Bucket 0 is finalized now: a writer later still cannot slip a message into it.
    assert not await write_late(engine, queue, 1, "too late")
    stats = await engine.statistics(account, "q")
    assert (stats.published, stats.acked, stats.size) == (3, 3, 0)


async def test_two_instances_republish_a_late_write_once(
    store: Store,
    clock: FakeClock,
    account: str,
    engine: QueueEngine,
    other: QueueEngine,
) -> None:
    await sealed_bucket_with_late_write(engine, account, clock)
    clock.advance(16)
    results = await asyncio.gather(engine.repair(account, "q"), other.repair(account, "q"))
    # One held the lease and repaired the bucket; the other found the lease held (None),
    # or, coming after, nothing left to do (0: the repair pointer reached the reader's).
    assert sorted(results, key=str) in ([1, None], [0, 1])
    await asyncio.gather(engine.repair(account, "q"), other.repair(account, "q"))
    delivered = await drain(engine, account, "q") + await drain(other, account, "q")
    assert delivered == ["late"]


async def test_a_dead_lease_owner_hands_repair_over_within_the_ttl(
    store: Store,
    clock: FakeClock,
    account: str,
    engine: QueueEngine,
    other: QueueEngine,
) -> None:
    await sealed_bucket_with_late_write(engine, account, clock, finalize_seconds=300)
    assert await engine.repair(account, "q") == 0  # `engine` owns the lease now...
    # ...and is killed: it never renews. The other instance waits out the TTL only.
    assert await other.repair(account, "q") is None
    clock.advance(engine.ctx.tuning.lease_ttl_ms / 1000 - 1)
    assert await other.repair(account, "q") is None
    clock.advance(1)
    assert await other.repair(account, "q") == 0


async def test_an_idle_queues_repair_is_three_pointer_reads_until_the_reader_moves(
    calls: CallCounter, clock: FakeClock, account: str, engine: QueueEngine
) -> None:
    await make_queue(engine, account, bucket_size=2, finalize_seconds=1)
    for payload in ("a", "b"):
        await engine.put(account, "q", payload)
    calls.reset()
    assert await engine.repair(account, "q") == 0  # the reader is still in bucket 0
    assert (calls.calls["read_pointer"], calls.calls["acquire_lease"]) == (3, 0)
    assert calls.calls["read_bucket"] == 0
    await engine.put(account, "q", "c")
    assert await drain(engine, account, "q") == ["a", "b", "c"]  # the reader left bucket 0
    await engine.settle()  # bucket 0's seal is written...
    assert await drain(engine, account, "q") == []  # ...and the invisibility side passes it
    clock.advance(2)  # past bucket 0's finalize wait
    calls.reset()
    assert await engine.repair(account, "q") == 1  # leased, and bucket 0 finished
    assert calls.calls["acquire_lease"] == 1
    calls.reset()
    assert await engine.repair(account, "q") == 0  # at the reader's bucket again: idle
    assert (calls.calls["read_pointer"], calls.calls["acquire_lease"]) == (3, 0)


async def test_the_owner_renews_its_lease_once_half_of_it_is_left(
    calls: CallCounter, clock: FakeClock, account: str, engine: QueueEngine, other: QueueEngine
) -> None:
    """A renewal is two Paxos rounds: the owner trusts the expiry it wrote for half the
    lease, and the lease still changes hands only once it expired. (A bucket waits out its
    finalize wait throughout: a queue with nothing to repair asks for no lease.)"""
    await sealed_bucket_with_late_write(engine, account, clock, finalize_seconds=300)
    half_s = engine.ctx.tuning.lease_ttl_ms / 2000
    calls.reset()
    assert await engine.repair(account, "q") == 0  # taken: expires at 2 halves
    clock.advance(half_s - 1)
    assert await engine.repair(account, "q") == 0
    assert calls.calls["acquire_lease"] == 1  # trusted, not asked again
    clock.advance(1)
    assert await engine.repair(account, "q") == 0  # half left: renewed, until 3 halves
    assert calls.calls["acquire_lease"] == 2
    clock.advance(half_s)  # past the first expiry, before the renewed one
    assert await other.repair(account, "q") is None
    clock.advance(half_s)  # the owner stopped: expired at 3 halves
    assert await other.repair(account, "q") == 0
    # The former owner's trust ended with the half it renewed for: it asks, and has lost it.
    assert await engine.repair(account, "q") is None


async def test_delete_and_recreate_gives_an_empty_queue_and_old_rows_go(
    engine: QueueEngine, account: str
) -> None:
    old = await make_queue(engine, account, bucket_size=3)
    for i in range(7):
        await engine.put(account, "q", f"old-{i}")
    await engine.queues.delete(account, "q")
    new = await make_queue(engine, account, bucket_size=3)
    assert new.version == old.version + 1
    assert await engine.get_next(account, "q", 30) is None
    assert (await engine.statistics(account, "q")).size == 0

    store = engine.ctx.store
    assert len((await store.read_bucket(old.id, 0)).messages) == 3
    assert old.id in {job.queue for job in await pending_jobs(engine)}
    await engine.deleter.run_once()  # too young: other servers may still cache the old version
    assert len((await store.read_bucket(old.id, 0)).messages) == 3
    engine.ctx.clock.advance(engine.ctx.tuning.deletion_grace_ms / 1000)  # type: ignore[attr-defined]
    assert await engine.deleter.run_once() >= 1
    for bucket in range(4):
        assert (await store.read_bucket(old.id, bucket)).messages == ()
    assert await store.read_monoton(old.id) == 0
    assert all(job.queue != old.id for job in await pending_jobs(engine))
    await engine.put(account, "q", "new")
    assert await drain(engine, account, "q") == ["new"]


async def test_a_write_in_the_millisecond_of_the_seal_is_counted_and_delivered_once(
    store: Store,
    clock: FakeClock,
    account: str,
    engine: QueueEngine,
    other: QueueEngine,
) -> None:
    """Found by the state machine: the reader seals a bucket of holes, the invisibility
    pointer passes it, and then a stalled write lands stamped with the seal's very
    millisecond. It must still count as a late write (repair's), not be lost behind the
    pointer nor delivered by a server whose view of the pointer is stale."""
    queue = await make_queue(engine, account, "q", bucket_size=3, finalize_seconds=5)
    taken = await engine.publisher.take_monotons(queue.id, 3)  # bucket 0, all holes
    assert await other.get_next(account, "q", 30) is None  # starts the hole grace
    clock.advance(engine.ctx.tuning.hole_grace_ms / 1000)
    assert await other.get_next(account, "q", 30) is None  # seals bucket 0, moves on
    assert await engine.get_next(account, "q", 30) is None  # passes the invisibility pointer
    assert (await store.read_invisibility(queue.id)).bucket == 1
    assert await write_late(engine, queue, taken, "same-ms")  # stamped at the seal's time
    assert await other.get_next(account, "q", 30) is None  # repair's, not this side's
    await _delivered_once_by_repair(engine, other, clock, account, queue, "same-ms")


async def test_a_server_with_a_stale_pointer_leaves_a_passed_bucket_to_repair(
    store: Store,
    clock: FakeClock,
    account: str,
    engine: QueueEngine,
    other: QueueEngine,
) -> None:
    """Found in review: a row stamped before the seal that lands after another server's
    invisibility pointer passed the bucket is repair's. A server whose cached reader
    pointer still names that bucket must not deliver it (its stats would never count it)."""
    queue = await make_queue(engine, account, "q", bucket_size=3, finalize_seconds=5)
    taken = await engine.publisher.take_monotons(queue.id, 3)
    stamp = clock.now()  # the slow writer stamps its row now, before the seal
    assert await other.get_next(account, "q", 30) is None  # starts the hole grace
    clock.advance(engine.ctx.tuning.hole_grace_ms / 1000 + 1)
    assert await engine.get_next(account, "q", 30) is None  # caches reader pointer 0
    assert await other.get_next(account, "q", 30) is None  # seals bucket 0, moves on
    # The seal, the pointer move and the read after the seal run beside the get: until they
    # are over, the bucket is still being left and no get passes it.
    await other.settle()
    assert await other.get_next(account, "q", 30) is None  # passes the invisibility pointer
    assert (await store.read_invisibility(queue.id)).bucket == 1
    assert await write_late(engine, queue, taken, "slow", stamped=stamp)  # into bucket 0
    assert await engine.get_next(account, "q", 30) is None  # not from the passed bucket
    await _delivered_once_by_repair(engine, other, clock, account, queue, "slow")


async def _delivered_once_by_repair(
    engine: QueueEngine,
    other: QueueEngine,
    clock: FakeClock,
    account: str,
    queue: QueueDefinition,
    payload: str,
) -> None:
    """Past the finalize wait, repair moves the late row, and one of the two servers
    delivers it once; the statistics count it once."""
    clock.advance(queue.options.finalize_seconds + 1)
    while await engine.repair(account, queue.name):
        pass
    assert await drain(engine, account, queue.name) + await drain(other, account, queue.name) == [
        payload
    ]
    stats = await engine.statistics(account, queue.name)
    assert (stats.published, stats.acked, stats.size) == (1, 1, 0)


async def test_a_dead_lettered_message_in_a_snapshot_is_not_tried_again(
    calls: CallCounter, store: Store, clock: FakeClock, account: str, engine: QueueEngine
) -> None:
    """Found in review: after a get dead-lettered a message, the server's snapshot of the
    bucket still showed it visible, and gets kept trying it instead of going on."""
    await make_queue(engine, account, "q", bucket_size=2, max_delivery_count=1)
    for payload in ("m0", "m1", "m2"):
        await engine.put(account, "q", payload)
    assert await engine.get_next(account, "q", 1) is not None  # m0, lease of 1 s
    m1 = await engine.get_next(account, "q", 30)
    assert m1 is not None
    await engine.ack(account, "q", m1.receipt)
    clock.advance(1.5)  # m0 has used its one delivery: the next get dead-letters it
    calls.reset()
    got = await engine.get_next(account, "q", 30)
    assert got is not None and got.message == "m2"
    assert calls.calls["cas_message"] <= 4
    stats = await engine.statistics(account, "q")
    assert (stats.dead_lettered, stats.acked, stats.in_flight) == (1, 1, 1)


async def test_a_put_into_a_deleted_queue_version_is_refused_and_writes_nothing(
    engine: QueueEngine, account: str
) -> None:
    # A server whose queue cache outlived the deletion's grace puts into the old version
    # after its rows went: its monoton counter is gone too.
    queue = await make_queue(engine, account, bucket_size=3)
    for i in range(4):
        await engine.put(account, "q", f"m{i}")
    await engine.ctx.store.delete_queue_state(queue.id, 3)
    for _ in range(2):  # and the next put from the same cache too
        with pytest.raises(QueueNotFound):
            await engine.put(account, "q", "too late")
    assert await engine.ctx.store.read_monoton(queue.id) == 0  # not taken again from 0
    assert not (await engine.ctx.store.read_bucket(queue.id, 0)).messages
