"""Concurrency (1), cost that does not grow with history (8), long invisibility (9)."""

from __future__ import annotations

import asyncio
from collections import Counter

from cassieq.engine import FakeClock, QueueEngine
from cassieq.store.counting import CountingStore
from tests.engine.conftest import make_queue
from tests.engine.test_holes_and_repair import drain

PUBLISHERS, CONSUMERS, MESSAGES = 4, 8, 2_000


async def test_concurrent_publishers_and_consumers_deliver_each_message_once(
    engine: QueueEngine, account: str
) -> None:
    await make_queue(engine, account, bucket_size=20)
    per_publisher = MESSAGES // PUBLISHERS
    delivered: Counter[str] = Counter()
    publishing = PUBLISHERS

    async def publish(p: int) -> None:
        nonlocal publishing
        for i in range(per_publisher):
            await engine.put(account, "q", f"p{p}-m{i}")
        publishing -= 1

    async def consume() -> None:
        empty_after_publishing = 0
        while sum(delivered.values()) < MESSAGES:
            got = await engine.get_next(account, "q", 30)
            if got is None:
                if publishing == 0:
                    empty_after_publishing += 1
                    assert empty_after_publishing < 1_000, "messages were lost"
                await asyncio.sleep(0)  # let the publishers run
                continue
            delivered[got.message] += 1
            await engine.ack(account, "q", got.receipt)

    await asyncio.gather(
        *(publish(p) for p in range(PUBLISHERS)), *(consume() for _ in range(CONSUMERS))
    )

    expected = {f"p{p}-m{i}" for p in range(PUBLISHERS) for i in range(per_publisher)}
    assert set(delivered) == expected
    assert [m for m, n in delivered.items() if n > 1] == []
    stats = await engine.statistics(account, "q")
    assert (stats.size, stats.published, stats.acked) == (0, MESSAGES, MESSAGES)


async def test_one_long_invisible_message_does_not_delay_expired_ones(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, bucket_size=2, finalize_seconds=15)
    await engine.put(account, "q", "held for an hour")
    for i in range(5):
        await engine.put(account, "q", f"short-{i}")
    held = await engine.get_next(account, "q", 3600)
    assert held is not None and held.message == "held for an hour"
    shorts = [await engine.get_next(account, "q", 30) for _ in range(5)]
    assert sorted(d.message for d in shorts if d) == [f"short-{i}" for i in range(5)]
    await engine.put(account, "q", "tail")  # moves the monoton past the last bucket
    tail = await engine.get_next(account, "q", 30)
    assert tail is not None and tail.message == "tail"
    await engine.ack(account, "q", tail.receipt)

    clock.advance(31)  # every short lease expired; the hour-long one has not
    redelivered = await drain(engine, account, "q")
    assert sorted(redelivered) == [f"short-{i}" for i in range(5)]

    # Once its bucket is finalized, the held message no longer holds the pointer back.
    clock.advance(20)
    await engine.repair(account, "q")
    assert await engine.get_next(account, "q", 30) is None
    state = await engine.ctx.store.read_invisibility((await engine.queues.get(account, "q")).id)
    assert 0 in state.stragglers and state.bucket > 0
    clock.advance(3600)
    late = await engine.get_next(account, "q", 30)
    assert late is not None and late.message == "held for an hour" and late.delivery_count == 1
    await engine.ack(account, "q", late.receipt)
    assert await drain(engine, account, "q") == []
    assert (await engine.statistics(account, "q")).size == 0


async def _calls_of_an_empty_get(
    engine: QueueEngine, store: CountingStore, queue: str
) -> Counter[str]:
    await engine.queues.get(engine_account(engine, queue), queue.split("/")[1])  # warm the cache
    # Past the pointer and state caches: both gets start from what the store says.
    engine.ctx.clock.advance(engine.ctx.tuning.state_cache_ms / 1000)  # type: ignore[attr-defined]
    store.reset()
    assert await engine.get_next(engine_account(engine, queue), queue.split("/")[1], 30) is None
    return Counter(store.calls)


def engine_account(_: QueueEngine, path: str) -> str:
    return path.split("/")[0]


async def test_history_does_not_cost(
    engine: QueueEngine, store: CountingStore, account: str, clock: FakeClock
) -> None:
    total, workers = 20_000, 16
    old = await make_queue(engine, account, "old", bucket_size=20, finalize_seconds=15)
    await make_queue(engine, account, "fresh", bucket_size=20)

    async def through(worker: int) -> None:
        for i in range(total // workers):
            await engine.put(account, "old", f"{worker}-{i}")
            got = await engine.get_next(account, "old", 30)
            assert got is not None
            await engine.ack(account, "old", got.receipt)

    await asyncio.gather(*(through(w) for w in range(workers)))
    assert await engine.get_next(account, "old", 30) is None  # the reader seals the last bucket
    clock.advance(20)
    while await engine.repair(account, "old"):
        pass
    assert await engine.get_next(account, "old", 30) is None  # the pointers catch up

    # Finished buckets are gone (their markers stay, to keep late writers out).
    for bucket in (0, 1, total // 20 // 2, total // 20 - 1):
        assert (await store.read_bucket(old.id, bucket)).messages == ()
    with_history = await _calls_of_an_empty_get(engine, store, f"{account}/old")
    fresh = await _calls_of_an_empty_get(engine, store, f"{account}/fresh")
    assert with_history == fresh
    assert sum(with_history.values()) <= 4
    stats = await engine.statistics(account, "old")
    assert (stats.published, stats.acked, stats.size) == (total, total, 0)
