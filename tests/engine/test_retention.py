"""Retention (messageRetentionSeconds): an expired message is never delivered, is counted as
expired, goes with its bucket, and never goes to the dead-letter queue."""

from __future__ import annotations

from cassieq.engine import FakeClock, QueueEngine
from cassieq.store.base import Store
from tests.engine.conftest import make_queue

RETENTION = 60


async def test_an_expired_message_is_never_delivered_and_is_counted(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, message_retention_seconds=RETENTION)
    await engine.put(account, "q", "old")
    clock.advance(RETENTION - 1)
    await engine.put(account, "q", "young")
    before = await engine.statistics(account, "q")
    assert (before.size, before.visible, before.expired) == (2, 2, 0)
    assert before.oldest_message_age_s == RETENTION - 1
    clock.advance(1)  # "old" is exactly RETENTION old now
    stats = await engine.statistics(account, "q")
    # Counted as expired before any reader met it.
    assert (stats.size, stats.visible, stats.expired, stats.published) == (1, 1, 1, 2)
    assert stats.oldest_message_age_s == 1
    got = await engine.get_next(account, "q", 30)
    assert got is not None and got.message == "young"
    assert await engine.get_next(account, "q", 30) is None
    await engine.ack(account, "q", got.receipt)
    after = await engine.statistics(account, "q")
    assert (after.size, after.acked, after.expired, after.dead_lettered) == (0, 1, 1, 0)
    assert after.oldest_message_age_s is None


async def test_an_expired_message_is_not_redelivered_by_the_invisibility_side(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, bucket_size=2, message_retention_seconds=RETENTION)
    await engine.put(account, "q", "a")
    await engine.put(account, "q", "b")
    taken = await engine.get_next(account, "q", 30)
    assert taken is not None and taken.message == "a"
    clock.advance(RETENTION)  # its lease ended long ago; so did its retention
    assert await engine.get_next(account, "q", 30) is None
    assert await engine.receive(account, "q", max_messages=10) == []
    stats = await engine.statistics(account, "q")
    assert (stats.size, stats.expired, stats.delivered, stats.in_flight) == (0, 2, 1, 0)


async def test_expiry_does_not_dead_letter(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, "dlq")
    await make_queue(
        engine,
        account,
        max_delivery_count=1,
        dlq_name="dlq",
        message_retention_seconds=RETENTION,
    )
    await engine.put(account, "q", "m")
    got = await engine.get_next(account, "q", 30)
    assert got is not None  # its one delivery: the next would dead-letter it
    clock.advance(RETENTION)
    assert await engine.get_next(account, "q", 30) is None
    stats = await engine.statistics(account, "q")
    assert (stats.expired, stats.dead_lettered, stats.dead_letter_pending) == (1, 0, 0)
    dlq = await engine.statistics(account, "dlq")
    assert dlq.published == 0
    assert await engine.get_next(account, "dlq", 30) is None


async def test_an_expired_bucket_is_dropped_and_its_count_kept(
    engine: QueueEngine, account: str, clock: FakeClock, store: Store
) -> None:
    queue = await make_queue(
        engine,
        account,
        bucket_size=2,
        finalize_seconds=1,
        message_retention_seconds=RETENTION,
    )
    for m in ("a", "b", "c", "d", "e"):
        await engine.put(account, "q", m)
    delivered = await engine.get_next(account, "q", 30)  # "a": in flight when it expires
    assert delivered is not None
    clock.advance(RETENTION)
    await engine.put(account, "q", "fresh")
    got = await engine.get_next(account, "q", 30)
    assert got is not None and got.message == "fresh"
    await engine.ack(account, "q", got.receipt)
    await engine.settle()
    clock.advance(2)  # past the finalize wait of the sealed buckets
    await engine.repair(account, "q")
    assert await engine.get_next(account, "q", 30) is None  # the invisibility side passes them
    await engine.repair(account, "q")
    state = await store.read_invisibility(queue.id)
    assert state.bucket == 2 and not state.stragglers
    for bucket in (0, 1):
        assert (await store.read_bucket(queue.id, bucket)).messages == ()
    stats = await engine.statistics(account, "q")
    assert (stats.published, stats.expired, stats.acked, stats.size) == (6, 5, 1, 0)
    # Buckets 0 and 1 are gone: their four expired messages are kept in the summary.
    assert (state.summary.published, state.summary.expired, state.summary.acked) == (4, 4, 0)


async def test_a_patch_of_the_retention_applies_to_messages_already_in_the_queue(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account)
    await engine.put(account, "q", "m")
    clock.advance(RETENTION)
    await engine.update_queue(account, "q", {"message_retention_seconds": RETENTION})
    assert await engine.get_next(account, "q", 30) is None
    assert (await engine.statistics(account, "q")).expired == 1
