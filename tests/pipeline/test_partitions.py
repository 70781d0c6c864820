"""The pipeline on a partitioned queue (issue 35): stats sum every partition, export writes
every partition's messages, ingest spreads over the partitions."""

from __future__ import annotations

import collections
import time
from pathlib import Path
from typing import Any

import msgspec

from cassieq.engine import FakeClock
from cassieq.model import OutgoingMessage, QueueOptions, message_id
from cassieq.pipeline import export, ingest, stats
from cassieq.pipeline.store_access import StoreAccess
from tests.pipeline.conftest import World, engine_on

PARTITIONS = 3


def _seed(world: World, name: str, count: int) -> list[tuple[int, int]]:
    """``count`` single sends into a queue of 3 partitions; their (partition, monoton)."""
    _, engine, account, run = world.parts()
    run(engine.create_queue(account, name, QueueOptions(bucket_size=2, partitions=PARTITIONS)))
    sent = [
        s
        for i in range(count)
        for s in run(engine.send(account, name, [OutgoingMessage(body=f"m{i}")]))
    ]
    return [(s.partition, s.monoton) for s in sent]


def test_stats_of_a_partitioned_queue_sum_every_partition(
    spark: Any, access: StoreAccess, world: World
) -> None:
    clock, engine, account, run = world.parts()
    sent = _seed(world, "wide", 12)
    # Single sends rotate over the partitions: every partition holds messages.
    assert collections.Counter(p for p, _ in sent) == {0: 4, 1: 4, 2: 4}
    clock.advance(1)
    got = run(engine.receive(account, "wide", 10, 60))
    assert len({d.receipt.partition for d in got}) > 1  # delivered from several partitions
    acked, held = got[:6], got[6:]
    assert run(engine.ack_batch(account, "wide", [d.receipt for d in acked])) == [None] * 6
    clock.advance(1)

    queue = run(engine.queue(account, "wide"))
    engine_stats = run(engine.statistics(account, "wide"))
    [snapshot] = stats.run(spark, access, [queue], clock.now())

    # One snapshot for the queue, under its own id, summing the three partitions.
    assert snapshot.queue == queue.id
    assert (snapshot.published, snapshot.acked) == (12, 6)
    assert (snapshot.in_flight, snapshot.backlog) == (len(held), 12 - 10)
    assert snapshot.delivered == 10 == engine_stats.delivered
    assert (engine_stats.published, engine_stats.acked) == (12, 6)
    assert engine_stats.in_flight == snapshot.in_flight
    # The rows of every partition were scanned: the histogram counts all 12 messages.
    assert snapshot.rows_scanned == 12
    assert snapshot.delivery_count_histogram == {0: 2, 1: 10}
    assert snapshot.oldest_unacked_age_s is not None
    assert run(access.store.read_stats_snapshot(account, "wide")) == snapshot


def test_export_writes_every_partition_and_ingest_spreads_over_them(
    spark: Any, access: StoreAccess, world: World, tmp_path: Path
) -> None:
    _, engine, account, run = world.parts()
    sent = _seed(world, "wide", 9)
    source = run(engine.queue(account, "wide"))

    out = str(tmp_path / "archive")
    assert export.run(spark, access, source, out, export.ExportFilter()) == 9
    rows = spark.read.parquet(out).collect()
    assert sorted((r["partition"], r["monoton"]) for r in rows) == sorted(sent)
    assert {r["partition"] for r in rows} == {0, 1, 2}
    for r in rows:  # the id v2 gives the message, and the partition's own key
        assert r["message_id"] == message_id(r["partition"], r["monoton"])
        assert r["queue_id"] == str(source.in_partition(r["partition"]).id)
    assert len({r["message_id"] for r in rows}) == 9
    # A bucket range applies within each partition: bucket 0 is monotons 0 and 1 of each.
    first = export.select(spark, access.settings.keyspace, source, 0, 0, export.ExportFilter())
    assert sorted((r["partition"], r["monoton"]) for r in first.collect()) == sorted(
        (p, m) for p, m in sent if m < 2
    )

    # Back into another queue of 3 partitions: task i writes into partition i mod 3.
    target, _ = run(
        engine.create_queue(account, "back", QueueOptions(bucket_size=2, partitions=PARTITIONS))
    )
    result = ingest.run(spark, access.settings, target, out, "parquet")
    assert result.rows == 9
    monotons = [run(access.store.read_monoton(v.id)) for v in target.partition_views()]
    # Each task one reservation in its own partition's monoton: they tile the 9 rows.
    assert sum(monotons) == 9
    # Which task gets which rows is Spark's choice; which partition a task writes is not.
    config = msgspec.json.encode((access.settings, target))
    [task] = ingest.ingest_partition(config, ["x", "y"], 4)
    assert (task.rows, task.reservations) == (2, 1)
    after = [run(access.store.read_monoton(v.id)) for v in target.partition_views()]
    assert after == [monotons[0], monotons[1] + 2, monotons[2]]  # task 4: partition 1
    live = engine_on(access, FakeClock(start_ms=int(time.time() * 1000) + 1000))
    got = []
    while batch := run(live.receive(account, "back", 10, 60)):
        got += batch
        assert run(live.ack_batch(account, "back", [d.receipt for d in batch])) == [None] * len(
            batch
        )
    assert collections.Counter(d.message for d in got) == collections.Counter(
        [*(f"m{i}" for i in range(9)), "x", "y"]
    )
