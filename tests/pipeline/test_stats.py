"""The stats job on a seeded queue: exact counts, equal to the engine's own counters."""

from __future__ import annotations

from typing import Any

from cassieq.model import QueueOptions
from cassieq.pipeline import stats
from cassieq.pipeline.store_access import StoreAccess
from tests.pipeline.conftest import World


def _linear_percentile(values: list[int], p: float) -> float:
    ordered = sorted(values)
    rank = p * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def test_stats_of_a_seeded_queue_match_the_seed_and_the_engine(
    spark: Any, access: StoreAccess, world: World
) -> None:
    clock, engine, account, run = world.parts()
    options = QueueOptions(bucket_size=5, max_delivery_count=2)
    queue, _ = run(engine.create_queue(account, "seeded", options))
    start = clock.now()
    # 22 visible messages, then 8 that stay invisible for an hour (backlog, never delivered).
    for i in range(22):
        run(engine.put(account, "seeded", f"m{i}"))
    for i in range(8):
        run(engine.put(account, "seeded", f"later{i}", initial_invisibility_s=3600))

    latencies: list[int] = []

    def get(invisibility_s: int) -> Any:
        delivery = run(engine.get_next(account, "seeded", invisibility_s))
        assert delivery is not None
        return delivery

    def ack(delivery: Any) -> None:
        clock.advance(0.1)
        run(engine.ack(account, "seeded", delivery.receipt))
        latencies.append(clock.now() - start)

    clock.advance(1)
    for _ in range(10):  # acked after one delivery
        ack(get(10))
    for _ in range(4):  # in flight for an hour, delivered once
        get(3600)
    for _ in range(8):  # delivered once, left to expire
        get(10)
    clock.advance(20)
    second = [get(10) for _ in range(8)]
    assert {d.delivery_count for d in second} == {1}  # one delivery before
    for delivery in second[:5]:  # acked after two deliveries
        ack(delivery)
    clock.advance(20)
    # The last 3 have used up their 2 deliveries: the next gets drop them (no DLQ).
    for _ in range(5):
        assert run(engine.get_next(account, "seeded", 10)) is None

    engine_stats = run(engine.statistics(account, "seeded"))
    now = clock.now()
    [snapshot] = stats.run(spark, access, [queue], now)

    assert (snapshot.published, snapshot.acked, snapshot.dead_lettered) == (30, 15, 3)
    assert (snapshot.in_flight, snapshot.backlog) == (4, 8)
    assert snapshot.published == (
        snapshot.acked + snapshot.dead_lettered + snapshot.in_flight + snapshot.backlog
    )
    assert snapshot.delivery_count_histogram == {0: 8, 1: 14, 2: 8}
    assert snapshot.delivered == 14 + 2 * 8 == engine_stats.delivered
    assert snapshot.oldest_unacked_age_s == (now - start) / 1000
    assert snapshot.ack_latency_p50_ms == _linear_percentile(latencies, 0.5)
    assert snapshot.ack_latency_p95_ms == _linear_percentile(latencies, 0.95)
    assert snapshot.ack_latency_p99_ms == _linear_percentile(latencies, 0.99)
    # The engine's own counters say the same.
    assert engine_stats.published == snapshot.published
    assert engine_stats.acked == snapshot.acked
    assert engine_stats.dead_lettered == snapshot.dead_lettered
    assert engine_stats.in_flight == snapshot.in_flight
    assert engine_stats.size == snapshot.in_flight + snapshot.backlog
    # And the snapshot is kept for the API.
    assert run(access.store.read_stats_snapshot(account, "seeded")) == snapshot


def test_stats_count_finished_buckets_from_the_summary_without_double_counting(
    spark: Any, access: StoreAccess, world: World
) -> None:
    """Once the pointer has left buckets, their counts come from the invisibility summary;
    their rows (still stored here) feed only the histogram."""
    clock, engine, account, run = world.parts()
    queue, _ = run(engine.create_queue(account, "busy", QueueOptions(bucket_size=3)))
    for i in range(20):
        run(engine.put(account, "busy", f"m{i}"))
    for _ in range(17):
        delivery = run(engine.get_next(account, "busy", 30))
        assert delivery is not None
        run(engine.ack(account, "busy", delivery.receipt))
    # A get on what is left moves the invisibility pointer past the finished buckets.
    clock.advance(60)
    left = run(engine.get_next(account, "busy", 30))
    assert left is not None
    state = run(access.store.read_invisibility(queue.id))
    assert state.bucket > 0 and state.summary.published > 0  # the summary is in use

    [snapshot] = stats.run(spark, access, [queue], clock.now(), write=False)
    engine_stats = run(engine.statistics(account, "busy"))
    assert (snapshot.published, snapshot.acked, snapshot.in_flight) == (20, 17, 1)
    assert snapshot.backlog == 2
    assert (engine_stats.published, engine_stats.acked, engine_stats.in_flight) == (20, 17, 1)
    assert sum(snapshot.delivery_count_histogram.values()) == 20


def test_stats_select_an_account_and_write_one_row_per_queue(
    spark: Any, access: StoreAccess, world: World
) -> None:
    clock, engine, account, run = world.parts()
    for name, count in (("a", 3), ("b", 0)):
        run(engine.create_queue(account, name, QueueOptions()))
        for i in range(count):
            run(engine.put(account, name, f"{name}{i}"))
    queues = access.select_queues(account, None)
    snapshots = stats.run(spark, access, queues, clock.now())
    by_name = {s.queue.queue: s for s in snapshots}
    assert set(by_name) == {"a", "b"}
    assert (by_name["a"].published, by_name["a"].backlog) == (3, 3)
    assert (by_name["b"].published, by_name["b"].ack_latency_p50_ms) == (0, None)
    assert by_name["b"].oldest_unacked_age_s is None
    line = stats.to_json(by_name["a"])
    assert {"published", "acked", "dead_lettered", "in_flight", "backlog"} <= set(line)
    assert line["ack_latency_ms"] == {"p50": None, "p95": None, "p99": None}
