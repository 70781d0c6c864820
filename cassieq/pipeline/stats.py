"""The stats job: per queue, what happened to every message, and how long it took.

Counts are the engine's own statistics (its StatisticsReader, run by the job's driver):
the buckets the invisibility pointer has finished with are summed in its state
(``summary``); the live buckets (from the pointer on, plus stragglers) are counted from
their rows (a row moved by repair counts at its copy only).
``published = acked + dead_lettered + expired + in_flight + backlog`` (expired: past the
retention or purged, retired unread).

A queue of many partitions (issue 35) is one snapshot: the counts are summed over its
partitions as the engine's statistics sum them, and the rows of every partition are
scanned together (the histogram, the oldest unacked message and the percentiles are of the
whole queue, not of one partition).

The delivery-count histogram, the oldest unacked message and the ack latencies come from
the message rows still stored: buckets that repair finalized may have been deleted
(``deleteBucketsAfterFinalization``), so they describe the retained history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from cassieq.engine.clock import FakeClock
from cassieq.engine.context import EngineContext
from cassieq.engine.life.partitions import sum_statistics
from cassieq.engine.stats import StatisticsReader
from cassieq.model import InvisibilityState, QueueDefinition, Statistics, StatsSnapshot
from cassieq.pipeline.buckets import message_rows, top_bucket
from cassieq.pipeline.progress import Progress
from cassieq.pipeline.store_access import StoreAccess

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PERCENTILES = (0.5, 0.95, 0.99)


@dataclass(frozen=True)
class _QueueState:
    queue: QueueDefinition  # one partition's view: its id is the partition's
    invisibility: InvisibilityState
    monoton: int


def run(
    spark: SparkSession,
    access: StoreAccess,
    queues: list[QueueDefinition],
    now_ms: int,
    *,
    write: bool = True,
    progress: Progress | None = None,
) -> list[StatsSnapshot]:
    """Snapshots of ``queues`` as of ``now_ms``; written to queue_stats when ``write``.

    The counts come from the engine's own StatisticsReader (summary plus live buckets,
    re-read until the invisibility state held still), so they are the engine's exactly;
    Spark scans the stored rows for the histogram, the oldest unacked message and the
    ack latencies.
    """
    say = progress.phase if progress else (lambda _: None)
    # A clock that stays at now_ms: every figure of the run is as of the same instant.
    reader = StatisticsReader(EngineContext(store=access.store, clock=FakeClock(now_ms)))
    # Every partition's own state (a queue of one: its only partition, keyed as before).
    read = {v.id: access.run(reader.read_with_state(v)) for v in _views(queues)}
    counts = {q.id: sum_statistics([read[v.id][0] for v in q.partition_views()]) for q in queues}
    # The scan goes by the state and monoton the counts were read at: no second read.
    states = [_QueueState(v, read[v.id][1], read[v.id][2]) for v in _views(queues)]
    buckets = _bucket_count(states)
    say(f"scanning {len(queues)} queue(s), {len(states)} partition(s), {buckets} bucket(s)")
    detail = _scan(spark, access.settings.keyspace, states, now_ms)
    result = [_snapshot(q, counts[q.id], detail.get(str(q.id), {}), now_ms) for q in queues]
    if write:
        say(f"writing {len(result)} snapshot(s) to queue_stats")
        for snapshot in result:
            access.run(access.store.write_stats_snapshot(snapshot))
    return result


def _views(queues: list[QueueDefinition]) -> list[QueueDefinition]:
    """Every partition of every queue, in order (one view for a queue of one partition)."""
    return [v for q in queues for v in q.partition_views()]


def _bucket_count(states: list[_QueueState]) -> int:
    return sum(top_bucket(s.queue, s.monoton) + 1 for s in states)


def _snapshot(
    queue: QueueDefinition, c: Statistics, d: dict[str, Any], now_ms: int
) -> StatsSnapshot:
    oldest = d.get("oldest_unacked")
    latency = d.get("latency") or [None, None, None]
    return StatsSnapshot(
        queue=queue.id,
        computed_at=now_ms,
        published=c.published,
        acked=c.acked,
        dead_lettered=c.dead_lettered,
        in_flight=c.in_flight,
        backlog=c.size - c.in_flight,  # size = published - acked - dead_lettered - expired
        delivered=c.delivered,
        delivery_count_histogram=d.get("histogram", {}),
        oldest_unacked_age_s=None if oldest is None else max(0, now_ms - oldest) / 1000,
        ack_latency_p50_ms=_float(latency[0]),
        ack_latency_p95_ms=_float(latency[1]),
        ack_latency_p99_ms=_float(latency[2]),
        rows_scanned=int(d.get("rows") or 0),
    )


def _scan(
    spark: SparkSession, keyspace: str, states: list[_QueueState], now_ms: int
) -> dict[str, dict[str, Any]]:
    from pyspark.sql import functions as F

    ranges = [(s.queue, 0, top_bucket(s.queue, s.monoton)) for s in states]
    # Only what the figures need: a payload can be 256 KiB, and the rows are cached.
    rows = message_rows(spark, keyspace, ranges).drop("message", "updated_at", "next_visible_on")
    # Each partition's pointer, and the queue it belongs to (partition 0's id, the key the
    # figures are grouped by: one snapshot per queue, whatever its partitions).
    pointers = spark.createDataFrame(
        [
            (
                str(s.queue.id),
                str(s.queue.id.whole),
                s.invisibility.bucket,
                sorted(s.invisibility.stragglers),
            )
            for s in states
        ],
        "queue_id string, whole_id string, pointer bigint, stragglers array<bigint>",
    )
    rows = rows.join(F.broadcast(pointers), "queue_id").withColumns(
        {
            # A row repair moved lives on at its copy: counted there only.
            "kept": F.col("republished_to").isNull(),
            "live": (F.col("bucket") >= F.col("pointer"))
            | F.array_contains(F.col("stragglers"), F.col("bucket")),
            # Acked by a consumer: not dead-lettered, expired or purged (retired unread).
            "acked_ok": F.col("acked")
            & ~F.coalesce(
                F.col("dead_lettered") | F.col("expired") | F.col("purged"), F.lit(False)
            ),
        }
    )
    latency = F.when(
        F.col("kept") & F.col("acked_ok") & F.col("acked_at").isNotNull(),
        F.col("acked_at") - F.col("created_at"),
    )
    unacked_live = F.col("kept") & F.col("live") & ~F.col("acked")
    rows = rows.cache()
    try:
        agg = rows.groupBy("whole_id").agg(
            F.count(F.lit(1)).alias("rows"),
            F.min(F.when(unacked_live, F.col("created_at"))).alias("oldest_unacked"),
            # Exact percentiles (linear interpolation), not sketches: checkable figures.
            F.percentile(latency, list(PERCENTILES)).alias("latency"),
        )
        out = {r["whole_id"]: r.asDict() for r in agg.collect()}
        for queue_id, histogram in _histograms(rows).items():
            out.setdefault(queue_id, {})["histogram"] = histogram
    finally:
        rows.unpersist()
    return out


def _histograms(rows: DataFrame) -> dict[str, dict[int, int]]:
    counts = rows.where("kept").groupBy("whole_id", "delivery_count").count().collect()
    out: dict[str, dict[int, int]] = {}
    for r in counts:
        out.setdefault(r["whole_id"], {})[int(r["delivery_count"])] = int(r["count"])
    return out


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def to_json(snapshot: StatsSnapshot) -> dict[str, Any]:
    """The job's JSON line for one queue (the CLI's ``--json``)."""
    s = snapshot
    return {
        "account": s.queue.account,
        "queue": s.queue.queue,
        "queue_version": s.queue.version,
        "computed_at_ms": s.computed_at,
        "published": s.published,
        "acked": s.acked,
        "dead_lettered": s.dead_lettered,
        "in_flight": s.in_flight,
        "backlog": s.backlog,
        "delivered": s.delivered,
        "delivery_count_histogram": {
            str(k): v for k, v in sorted(s.delivery_count_histogram.items())
        },
        "oldest_unacked_age_s": s.oldest_unacked_age_s,
        "ack_latency_ms": {
            "p50": s.ack_latency_p50_ms,
            "p95": s.ack_latency_p95_ms,
            "p99": s.ack_latency_p99_ms,
        },
        "rows_scanned": s.rows_scanned,
    }


def encode(snapshot: StatsSnapshot) -> bytes:
    return msgspec.json.encode(to_json(snapshot))


if __name__ == "__main__":  # python -m cassieq.pipeline.stats / spark-submit
    from cassieq.pipeline.commands import run_module
    from cassieq.pipeline.commands import stats as _command

    run_module(_command)
