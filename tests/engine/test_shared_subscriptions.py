"""Shared subscriptions (issue 36), on each store: a subscription consumed like a queue of
its own over the queue's rows — leases, redelivery, acks and new leases per subscription,
maxDeliveryCount and the dead-letter queue, delays, seek (a new generation), partitions,
and the delivery rows dropped with the subscription, the queue or the bucket."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.errors import InvalidArgument, StaleReceipt
from cassieq.engine.observe import Observer
from cassieq.model import OutgoingMessage, QueueDefinition, VisibilityChange
from cassieq.model_subscriptions import SeekTarget
from cassieq.store.base import Store
from tests.engine.conftest import consume_all_and_repair, make_queue


async def _drain(engine: QueueEngine, account: str, name: str, *, ack: bool = True) -> list[str]:
    """Receive (and ack) until nothing is left; the bodies delivered."""
    subs, bodies = engine.subscriptions, list[str]()
    for _ in range(500):  # bounds a test that would loop
        got = await subs.receive(account, "q", name, 7, 30)
        if not got:
            return bodies
        bodies += [d.message for d in got]
        if ack:
            outcomes = await subs.ack_batch(account, "q", name, [d.receipt for d in got])
            assert outcomes == [None] * len(got)
    raise AssertionError("never drained")


async def _delivery_rows(store: Store, queue: QueueDefinition, name: str, generation: int) -> int:
    """The delivery rows of the subscription's generation in the first buckets (the test's)."""
    count = 0
    for view in queue.partition_views():
        for bucket in range(8):
            count += len(await store.read_sub_deliveries(view.id, name, bucket, generation))
    return count


async def test_each_subscription_and_the_queue_get_every_message_once(
    engine: QueueEngine, account: str
) -> None:
    await make_queue(engine, account, bucket_size=4, partitions=2)
    subs = engine.subscriptions
    _, created = await subs.create(account, "q", "a", "shared", "earliest")
    assert created
    await subs.create(account, "q", "b", "shared", "earliest")
    sent = [f"m{i}" for i in range(23)]
    for body in sent:
        await engine.put(account, "q", body)
    assert sorted(await _drain(engine, account, "a")) == sorted(sent)
    # b is untouched by a's acks: all of it is still there; then the queue's own.
    assert sorted(await _drain(engine, account, "b")) == sorted(sent)
    own = []
    while batch := await engine.receive(account, "q", 10, 30):
        own += [d.message for d in batch]
        await engine.ack_batch(account, "q", [d.receipt for d in batch])
    assert sorted(own) == sorted(sent)
    for name in ("a", "b"):
        info = await subs.get(account, "q", name)
        assert info.lag == 0 and info.oldest_unread_at is None


async def test_a_lease_that_runs_out_delivers_again_and_old_receipts_are_stale(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, bucket_size=4)
    subs = engine.subscriptions
    await subs.create(account, "q", "a", "shared", "earliest")
    await engine.put(account, "q", "m0")
    first = await subs.receive(account, "q", "a", 1, 10)
    assert [d.message for d in first] == ["m0"] and first[0].delivery_count == 0
    assert await subs.receive(account, "q", "a", 1, 10) == []  # leased
    clock.advance(11)
    again = await subs.receive(account, "q", "a", 1, 10)
    assert [d.message for d in again] == ["m0"] and again[0].delivery_count == 1
    [stale] = await subs.ack_batch(account, "q", "a", [first[0].receipt])
    assert isinstance(stale, StaleReceipt)
    assert await subs.ack_batch(account, "q", "a", [again[0].receipt]) == [None]
    clock.advance(60)
    assert await subs.receive(account, "q", "a", 1, 10) == []  # acked: never again
    assert (await subs.get(account, "q", "a")).lag == 0


async def test_a_new_lease_and_its_refusals(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account)
    subs = engine.subscriptions
    await subs.create(account, "q", "a", "shared", "earliest")
    await engine.put(account, "q", "m0")
    [d] = await subs.receive(account, "q", "a", 1, 10)
    body, lease, negative, renewed = await subs.change_visibility(
        account, "q", "a",
        [
            VisibilityChange(receipt=d.receipt, invisibility_ms=100_000, body="new"),
            VisibilityChange(receipt=d.receipt, invisibility_ms=None),
            VisibilityChange(receipt=d.receipt, invisibility_ms=-1),
            VisibilityChange(receipt=d.receipt, invisibility_ms=100_000),
        ],
    )  # fmt: skip
    assert isinstance(body, InvalidArgument) and "body" in str(body)
    assert isinstance(lease, InvalidArgument) and isinstance(negative, InvalidArgument)
    assert not isinstance(renewed, Exception) and renewed.version == d.receipt.version + 1
    clock.advance(60)  # past the first lease, within the new one
    assert await subs.receive(account, "q", "a", 1, 10) == []
    [old] = await subs.ack_batch(account, "q", "a", [d.receipt])
    assert isinstance(old, StaleReceipt)
    assert await subs.ack_batch(account, "q", "a", [renewed]) == [None]
    clock.advance(200)
    assert await subs.receive(account, "q", "a", 1, 10) == []  # acked


async def test_concurrent_receivers_of_two_servers_never_share_a_lease(
    engine: QueueEngine, other: QueueEngine, account: str
) -> None:
    await make_queue(engine, account, bucket_size=5, partitions=2)
    await engine.subscriptions.create(account, "q", "a", "shared", "earliest")
    sent = [f"m{i}" for i in range(60)]
    await engine.send(account, "q", [OutgoingMessage(body=b) for b in sent])
    got: Counter[str] = Counter()

    async def consumer(server: QueueEngine) -> None:
        for _ in range(200):
            batch = await server.subscriptions.receive(account, "q", "a", 3, 300)
            if not batch:
                return
            got.update(d.message for d in batch)
            await server.subscriptions.ack_batch(account, "q", "a", [d.receipt for d in batch])

    await asyncio.gather(*(consumer(s) for s in (engine, other, engine, other)))
    assert await _drain(engine, account, "a") == []
    assert sorted(got) == sorted(sent)  # every one delivered
    assert set(got.values()) == {1}  # none twice (one lease of 300 s, never run out)


async def test_used_up_deliveries_go_to_the_dead_letter_queue(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, "dlq")
    await make_queue(engine, account, max_delivery_count=2, dlq_name="dlq")
    subs = engine.subscriptions
    await subs.create(account, "q", "a", "shared", "earliest")
    await engine.put(account, "q", "poison")
    for _ in range(2):
        assert [d.message for d in await subs.receive(account, "q", "a", 1, 5)] == ["poison"]
        clock.advance(6)
    assert await subs.receive(account, "q", "a", 1, 5) == []  # moved, not delivered
    moved = await engine.receive(account, "dlq", 10, 30)
    assert [d.message for d in moved] == ["poison"]
    clock.advance(600)
    assert await subs.receive(account, "q", "a", 1, 5) == []
    assert (await subs.get(account, "q", "a")).lag == 0
    # The queue's own consumers still have it: a subscription's deliveries are its own.
    assert [d.message for d in await engine.receive(account, "q", 1, 30)] == ["poison"]


async def test_a_delayed_message_waits_for_its_delay(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account)
    subs = engine.subscriptions
    await subs.create(account, "q", "a", "shared", "earliest")
    await engine.put(account, "q", "later", 20)
    await engine.put(account, "q", "now")
    assert [d.message for d in await subs.receive(account, "q", "a", 5, 30)] == ["now"]
    clock.advance(21)
    assert [d.message for d in await subs.receive(account, "q", "a", 5, 30)] == ["later"]


async def test_seek_replays_in_a_new_generation(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, bucket_size=3, partitions=2)
    subs = engine.subscriptions
    await subs.create(account, "q", "a", "shared", "earliest")
    sent = [f"m{i}" for i in range(10)]
    for body in sent[:5]:
        await engine.put(account, "q", body)
    clock.advance(1)
    middle = clock.now()
    for body in sent[5:]:
        await engine.put(account, "q", body)
    held = await subs.receive(account, "q", "a", 1, 30)
    assert sorted(await _drain(engine, account, "a") + [held[0].message]) == sorted(sent)
    await subs.seek(account, "q", "a", SeekTarget(to="earliest"))
    [stale] = await subs.ack_batch(account, "q", "a", [held[0].receipt])
    assert isinstance(stale, StaleReceipt) and "seek" in str(stale)
    assert sorted(await _drain(engine, account, "a")) == sorted(sent)  # replayed, all
    # Seek to a time: exactly the messages sent at or after it.
    await subs.seek(account, "q", "a", SeekTarget(time=middle))
    assert sorted(await _drain(engine, account, "a")) == sorted(sent[5:])
    await subs.seek(account, "q", "a", SeekTarget(to="latest"))
    assert await _drain(engine, account, "a") == []


async def test_each_mode_refuses_the_other_ones_calls(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account)
    subs = engine.subscriptions
    await subs.create(account, "q", "s", "shared", "earliest")
    await subs.create(account, "q", "o", "ordered", "earliest")
    with pytest.raises(InvalidArgument, match="shared"):
        await subs.read(account, "q", "s", 5)
    with pytest.raises(InvalidArgument, match="shared"):
        await subs.commit(
            account, "q", "s", (await subs.get(account, "q", "s")).definition.position, None
        )
    with pytest.raises(InvalidArgument, match="ordered"):
        await subs.receive(account, "q", "o", 1, 30)
    with pytest.raises(InvalidArgument, match="ordered"):
        await subs.ack_batch(account, "q", "o", [])
    with pytest.raises(InvalidArgument, match="maxMessages"):
        await subs.receive(account, "q", "s", 0, 30)
    with pytest.raises(InvalidArgument, match="visibilityTimeoutSeconds"):
        await subs.receive(account, "q", "s", 1, -1)


async def test_deleting_the_subscription_or_the_queue_leaves_no_delivery_rows(
    engine: QueueEngine, account: str, store: Store, clock: FakeClock
) -> None:
    queue = await make_queue(engine, account, bucket_size=4, partitions=2)
    subs = engine.subscriptions
    generations = {}
    for name in ("a", "b"):
        sub, _ = await subs.create(account, "q", name, "shared", "earliest")
        generations[name] = sub.generation
    for i in range(12):
        await engine.put(account, "q", f"m{i}")
    for name in ("a", "b"):
        got = await subs.receive(account, "q", name, 10, 30)
        await subs.ack_batch(account, "q", name, [d.receipt for d in got[:4]])
    assert await _delivery_rows(store, queue, "a", generations["a"]) == 10
    await subs.delete(account, "q", "a")
    assert await _delivery_rows(store, queue, "a", generations["a"]) == 0
    assert await _delivery_rows(store, queue, "b", generations["b"]) == 10
    await engine.delete_queue(account, "q")
    clock.advance(engine.ctx.tuning.deletion_grace_ms / 1000 + 1)
    await engine.deleter.run_once()
    assert await _delivery_rows(store, queue, "b", generations["b"]) == 0
    assert await store.read_subscriptions(queue.id) == []


async def test_retention_drops_the_buckets_delivery_rows_and_expired_ones_are_retired(
    engine: QueueEngine, account: str, store: Store, clock: FakeClock
) -> None:
    queue = await make_queue(
        engine, account, bucket_size=2, finalize_seconds=1, message_retention_seconds=3600
    )
    sub, _ = await engine.subscriptions.create(account, "q", "a", "shared", "earliest")
    for i in range(6):
        await engine.put(account, "q", f"m{i}")
    assert sorted(await _drain(engine, account, "a")) == [f"m{i}" for i in range(6)]
    held = await engine.subscriptions.receive(account, "q", "a", 1, 30) or None
    assert held is None
    await consume_all_and_repair(engine, account, clock)
    assert await _delivery_rows(store, queue, "a", sub.generation) == 6
    clock.advance(3600)
    await engine.repair(account, "q")
    assert not (await store.read_bucket(queue.id, 0)).messages
    assert await _delivery_rows(store, queue, "a", sub.generation) == 0


async def test_an_unacked_message_past_retention_is_retired_not_delivered(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, message_retention_seconds=60)
    subs = engine.subscriptions
    await subs.create(account, "q", "a", "shared", "earliest")
    await engine.put(account, "q", "old")
    assert [d.message for d in await subs.receive(account, "q", "a", 1, 30)] == ["old"]
    clock.advance(61)
    assert await subs.receive(account, "q", "a", 1, 30) == []  # expired: retired
    assert (await subs.get(account, "q", "a")).lag == 0


async def test_a_long_lease_at_the_start_does_not_hold_back_later_redeliveries(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    # Buckets of one message: the scan behind reads 4 from the done position and one more at
    # random among the rest (here 4 or 5, so a few receives find message 5 again).
    await make_queue(engine, account, bucket_size=1)
    subs = engine.subscriptions
    await subs.create(account, "q", "a", "shared", "earliest")
    for i in range(6):
        await engine.put(account, "q", f"m{i}")
    [long] = await subs.receive(account, "q", "a", 1, 3600)
    rest = await subs.receive(account, "q", "a", 5, 10)
    assert long.message == "m0" and len(rest) == 5
    await subs.ack_batch(account, "q", "a", [d.receipt for d in rest if d.message != "m5"])
    clock.advance(11)
    again: list[str] = []
    for _ in range(40):  # each receive finds it with probability 1/2
        again = [d.message for d in await subs.receive(account, "q", "a", 1, 10)]
        if again:
            break
    assert again == ["m5"]


class _Expiries(Observer):
    def __init__(self) -> None:
        self.expired: list[tuple[str, int]] = []

    def subscription_expired(self, queue: QueueDefinition, name: str, count: int) -> None:
        self.expired.append((name, count))


async def test_a_message_past_retention_before_any_delivery_is_counted_once(
    store: Store, clock: FakeClock, account: str
) -> None:
    seen = _Expiries()
    engines = [QueueEngine(store, clock, instance_id=f"e{n}", observers=[seen]) for n in range(2)]
    await make_queue(engines[0], account, message_retention_seconds=60)
    await engines[0].subscriptions.create(account, "q", "a", "shared", "earliest")
    for i in range(3):
        await engines[0].put(account, "q", f"old{i}")
    clock.advance(61)
    await engines[0].put(account, "q", "new")
    got = await asyncio.gather(
        *(e.subscriptions.receive(account, "q", "a", 5, 30) for e in engines)
    )
    assert sorted(d.message for part in got for d in part) == ["new"]
    assert sum(count for _, count in seen.expired) == 3  # once each, whoever retired it
    assert (await engines[0].subscriptions.get(account, "q", "a")).lag == 1  # "new", leased
