"""Export to Parquet, ingest back into a new queue: every payload once, and the engine
delivers them like any put message."""

from __future__ import annotations

import collections
import time
from pathlib import Path
from typing import Any

import pytest

from cassieq.engine import FakeClock
from cassieq.model import QueueOptions
from cassieq.pipeline import export, ingest
from cassieq.pipeline.spark import PipelineError
from cassieq.pipeline.store_access import StoreAccess
from tests.engine.test_holes_and_repair import drain
from tests.pipeline.conftest import World, engine_on

PAYLOADS = [
    *(f"order-{i}" for i in range(50)),
    '{"id": 7, "items": ["a", "b"]}',
    "zß水🙂",
    "",
    "   spaces   ",
    "order-1",  # the same payload twice is two messages
    "line\nbreak",
]


def test_export_then_ingest_round_trip(
    spark: Any, access: StoreAccess, world: World, tmp_path: Path
) -> None:
    _, engine, account, run = world.parts()
    source, _ = run(engine.create_queue(account, "source", QueueOptions(bucket_size=4)))
    for payload in PAYLOADS:
        run(engine.put(account, "source", payload))
    for _ in range(5):  # some acked: the archive keeps them, flagged
        delivery = run(engine.get_next(account, "source", 60))
        assert delivery is not None
        run(engine.ack(account, "source", delivery.receipt))

    out = str(tmp_path / "archive")
    rows = export.run(spark, access, source, out, export.ExportFilter())
    assert rows == len(PAYLOADS)
    archive = spark.read.parquet(out)
    assert set(archive.columns) >= {
        "queue_id", "monoton", "bucket", "message", "delivery_count", "acked", "created_at",
    }  # fmt: skip
    assert archive.where("acked").count() == 5
    assert sorted(r["monoton"] for r in archive.collect()) == list(range(len(PAYLOADS)))

    # Into a new queue with another bucket size. Ingest stamps rows with the wall clock;
    # the consuming engine's clock starts just after that and can then be moved on.
    target, _ = run(engine.create_queue(account, "target", QueueOptions(bucket_size=7)))
    result = ingest.run(spark, access.settings, target, out, "parquet")
    later = FakeClock(start_ms=int(time.time() * 1000) + 1000)
    live = engine_on(access, later)
    assert result.rows == len(PAYLOADS)
    # One reservation per task: the tasks' ranges tile the monotons, no holes.
    assert run(access.store.read_monoton(target.id)) == len(PAYLOADS)

    assert collections.Counter(run(drain(live, account, "target"))) == collections.Counter(PAYLOADS)
    stats = run(live.statistics(account, "target"))
    assert (stats.published, stats.acked, stats.size) == (len(PAYLOADS), len(PAYLOADS), 0)
    # Repair, once buckets are past their finalize time, finds nothing to move: no
    # redelivery, no copy.
    later.advance(target.options.finalize_seconds + 60)
    run(live.repair(account, "target"))
    assert run(live.get_next(account, "target", 60)) is None
    assert run(live.statistics(account, "target")).published == len(PAYLOADS)
    # The rows are a put's rows, each delivered and acked once.
    for bucket in range(len(PAYLOADS) // 7 + 1):
        for row in run(access.store.read_bucket(target.id, bucket)).messages:
            assert row.delivery_count == 1 and row.acked and row.tag and row.republished_to is None


def test_export_filters(spark: Any, access: StoreAccess, world: World, tmp_path: Path) -> None:
    clock, engine, account, run = world.parts()
    queue, _ = run(engine.create_queue(account, "f", QueueOptions(bucket_size=5)))
    first_half = clock.now()
    for i in range(10):
        run(engine.put(account, "f", f"early{i}"))
    clock.advance(60)
    second_half = clock.now()
    for i in range(10):
        run(engine.put(account, "f", f"late{i}"))
    for _ in range(3):
        delivery = run(engine.get_next(account, "f", 60))
        assert delivery is not None
        run(engine.ack(account, "f", delivery.receipt))

    def count(flt: export.ExportFilter) -> list[str]:
        frame = export.select(spark, access.settings.keyspace, queue, 0, 10, flt)
        return sorted(r["message"] for r in frame.collect())

    assert count(export.ExportFilter(only_acked=True)) == ["early0", "early1", "early2"]
    assert count(export.ExportFilter(since_ms=second_half)) == sorted(f"late{i}" for i in range(10))
    assert count(export.ExportFilter(until_ms=second_half)) == sorted(
        f"early{i}" for i in range(10)
    )
    assert count(export.ExportFilter(since_ms=first_half, until_ms=first_half + 1)) == sorted(
        f"early{i}" for i in range(10)
    )
    bucket_1 = export.select(spark, access.settings.keyspace, queue, 1, 1, export.ExportFilter())
    assert sorted(r["monoton"] for r in bucket_1.collect()) == [5, 6, 7, 8, 9]


def test_an_existing_output_names_the_overwrite_flag(
    spark: Any, access: StoreAccess, world: World, tmp_path: Path
) -> None:
    """Where cassieq cannot look first (hdfs://, s3a://: Spark's own check), Spark's refusal
    ("Set mode as overwrite") becomes the flag's name."""
    _, engine, account, run = world.parts()
    queue, _ = run(engine.create_queue(account, "e", QueueOptions()))
    run(engine.put(account, "e", "kept"))
    out = tmp_path / "archive"
    assert export.run(spark, access, queue, str(out), export.ExportFilter()) == 1
    with pytest.raises(PipelineError, match="--overwrite") as refused:
        export.run(spark, access, queue, str(out), export.ExportFilter())
    assert "Set mode" not in str(refused.value)
    assert spark.read.parquet(str(out)).count() == 1  # the archive is untouched
    assert export.run(spark, access, queue, str(out), export.ExportFilter(), overwrite=True) == 1
