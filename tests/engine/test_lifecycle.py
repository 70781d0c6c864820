"""A message's life: put, get, update, ack, expiry, dead letters (acceptance 2, 3, 4)."""

from __future__ import annotations

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.errors import AccountNotFound, InvalidArgument, QueueExists, StaleReceipt
from cassieq.model import QueueOptions
from tests.engine.conftest import make_queue


async def test_put_get_ack_then_empty(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account)
    await engine.put(account, "q", '"hi"')
    got = await engine.get_next(account, "q", 30)
    assert got is not None and got.message == '"hi"' and got.delivery_count == 0
    await engine.ack(account, "q", got.receipt)
    assert await engine.get_next(account, "q", 30) is None
    stats = await engine.statistics(account, "q")
    assert (stats.size, stats.published, stats.acked, stats.delivered) == (0, 1, 1, 1)


async def test_create_twice_returns_existing_or_conflicts(
    engine: QueueEngine, account: str
) -> None:
    await make_queue(engine, account, bucket_size=7)
    again, created = await engine.create_queue(account, "q", QueueOptions())
    assert not created and again.options.bucket_size == 7
    with pytest.raises(QueueExists):
        await engine.create_queue(account, "q", QueueOptions(), error_if_exists=True)


async def test_queue_needs_an_account_and_a_valid_name(engine: QueueEngine, account: str) -> None:
    with pytest.raises(AccountNotFound):
        await engine.create_queue("no-such-account", "q", QueueOptions())
    with pytest.raises(InvalidArgument, match="queueName must match"):
        await engine.create_queue(account, "bad:name", QueueOptions())
    with pytest.raises(InvalidArgument, match="bucketSize"):
        await engine.create_queue(account, "q", QueueOptions(bucket_size=0))


async def test_invisibility_expiry_redelivers_and_old_receipt_is_stale(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account)
    await engine.put(account, "q", "m")
    first = await engine.get_next(account, "q", 30)
    assert first is not None
    clock.advance(29)
    assert await engine.get_next(account, "q", 30) is None  # still within the lease
    clock.advance(2)
    second = await engine.get_next(account, "q", 30)
    assert second is not None and second.message == "m"
    assert second.delivery_count == first.delivery_count + 1
    with pytest.raises(StaleReceipt):
        await engine.ack(account, "q", first.receipt)
    await engine.ack(account, "q", second.receipt)
    with pytest.raises(StaleReceipt):
        await engine.ack(account, "q", second.receipt)


async def test_max_delivery_count_moves_message_to_dlq(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, "dlq")
    await make_queue(engine, account, "work", max_delivery_count=2, dlq_name="dlq")
    await engine.put(account, "work", '{"order": 7}')
    for expected_count in (0, 1):  # deliveries before this one; the third attempt is a DLQ move
        got = await engine.get_next(account, "work", 10)
        assert got is not None and got.delivery_count == expected_count
        clock.advance(11)
    assert await engine.get_next(account, "work", 10) is None
    dead = await engine.get_next(account, "dlq", 10)
    assert dead is not None and dead.message == '{"order": 7}' and dead.delivery_count == 0
    stats = await engine.statistics(account, "work")
    assert (stats.size, stats.dead_lettered, stats.acked, stats.delivered) == (0, 1, 0, 2)


async def test_max_delivery_without_dlq_drops_and_counts(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, max_delivery_count=1)
    await engine.put(account, "q", "poison")
    assert await engine.get_next(account, "q", 10) is not None
    clock.advance(11)
    assert await engine.get_next(account, "q", 10) is None
    stats = await engine.statistics(account, "q")
    assert (stats.size, stats.dead_lettered, stats.published) == (0, 1, 1)


async def test_initial_invisibility_delays_first_delivery(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account)
    await engine.put(account, "q", "later", initial_invisibility_s=10)
    assert await engine.get_next(account, "q", 30) is None
    clock.advance(10)
    got = await engine.get_next(account, "q", 30)
    assert got is not None and got.message == "later" and got.delivery_count == 0


async def test_update_to_zero_invisibility_makes_message_visible_at_once(
    engine: QueueEngine, account: str
) -> None:
    await make_queue(engine, account)
    await engine.put(account, "q", "m")
    got = await engine.get_next(account, "q", 300)
    assert got is not None
    receipt = await engine.update(account, "q", got.receipt, None, 0)
    with pytest.raises(StaleReceipt):
        await engine.ack(account, "q", got.receipt)
    again = await engine.get_next(account, "q", 300)
    assert again is not None and again.message == "m" and again.delivery_count == 1
    with pytest.raises(StaleReceipt):
        await engine.ack(account, "q", receipt)  # the redelivery made it stale too
    await engine.ack(account, "q", again.receipt)


async def test_update_with_new_payload_is_what_the_next_reader_gets(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account)
    await engine.put(account, "q", "v1")
    got = await engine.get_next(account, "q", 30)
    assert got is not None
    receipt = await engine.update(account, "q", got.receipt, "v2", 60)
    clock.advance(30)
    assert await engine.get_next(account, "q", 30) is None  # the update extended the lease
    await engine.update(account, "q", receipt, None, 0)
    again = await engine.get_next(account, "q", 30)
    assert again is not None and again.message == "v2"


async def test_negative_times_are_rejected(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account)
    with pytest.raises(InvalidArgument):
        await engine.put(account, "q", "m", initial_invisibility_s=-1)
    with pytest.raises(InvalidArgument):
        await engine.get_next(account, "q", -1)


async def test_random_pick_queue_delivers_everything_once(
    engine: QueueEngine, account: str
) -> None:
    await make_queue(engine, account, strict_fifo=False, bucket_size=3)
    for i in range(10):
        await engine.put(account, "q", f"m{i}")
    seen = []
    while (got := await engine.get_next(account, "q", 30)) is not None:
        seen.append(got.message)
        await engine.ack(account, "q", got.receipt)
    assert sorted(seen) == sorted(f"m{i}" for i in range(10))


async def test_strict_fifo_delivers_in_put_order(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account, bucket_size=3)
    for i in range(7):
        await engine.put(account, "q", f"m{i}")
    order = []
    while (got := await engine.get_next(account, "q", 30)) is not None:
        order.append(got.message)
        await engine.ack(account, "q", got.receipt)
    assert order == [f"m{i}" for i in range(7)]
