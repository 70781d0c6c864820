"""The stats job: per queue, what happened to every message, and how long it took.

Counts match the engine's own statistics exactly: the buckets the invisibility pointer
has finished with are summed in its state (``summary``); the live buckets (from the
pointer on, plus stragglers) are counted from their rows, with the same rules
(:class:`cassieq.model.Counts`; a row moved by repair counts at its copy only).
``published = acked + dead_lettered + in_flight + backlog``.

The delivery-count histogram, the oldest unacked message and the ack latencies come from
the message rows still stored: buckets that repair finalized may have been deleted
(``deleteBucketsAfterFinalization``), so they describe the retained history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from cassieq.model import InvisibilityState, QueueDefinition, QueueId, StatsSnapshot
from cassieq.pipeline.buckets import message_rows, top_bucket
from cassieq.pipeline.progress import Progress
from cassieq.pipeline.store_access import StoreAccess

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MAX_ROUNDS = 3  # re-reads of queues whose pointer moved during the scan
PERCENTILES = (0.5, 0.95, 0.99)


@dataclass(frozen=True)
class _QueueState:
    queue: QueueDefinition
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
    """Snapshots of ``queues`` as of ``now_ms``; written to queue_stats when ``write``."""
    say = progress.phase if progress else (lambda _: None)
    pending, done = list(queues), {}
    for round_ in range(MAX_ROUNDS):
        states = [_state(access, q) for q in pending]
        say(f"scanning {len(states)} queue(s), {_bucket_count(states)} bucket(s)")
        snapshots = _compute(spark, access.settings.keyspace, states, now_ms)
        moved = []
        for state in states:
            again = access.run(access.store.read_invisibility(state.queue.id))
            if again.rev != state.invisibility.rev and round_ < MAX_ROUNDS - 1:
                moved.append(state.queue)  # the pointer moved under the scan: again
            else:
                done[state.queue.id] = snapshots[state.queue.id]
        if not moved:
            break
        say(f"{len(moved)} queue(s) changed during the scan; reading them again")
        pending = moved
    result = [done[q.id] for q in queues]
    if write:
        say(f"writing {len(result)} snapshot(s) to queue_stats")
        for snapshot in result:
            access.run(access.store.write_stats_snapshot(snapshot))
    return result


def _state(access: StoreAccess, queue: QueueDefinition) -> _QueueState:
    store = access.store
    invisibility = access.run(store.read_invisibility(queue.id))
    return _QueueState(queue, invisibility, access.run(store.read_monoton(queue.id)))


def _bucket_count(states: list[_QueueState]) -> int:
    return sum(top_bucket(s.queue, s.monoton) + 1 for s in states)


def _compute(
    spark: SparkSession, keyspace: str, states: list[_QueueState], now_ms: int
) -> dict[QueueId, StatsSnapshot]:
    from pyspark.sql import functions as F

    ranges = [(s.queue, 0, top_bucket(s.queue, s.monoton)) for s in states]
    rows = message_rows(spark, keyspace, ranges)
    pointers = spark.createDataFrame(
        [
            (str(s.queue.id), s.invisibility.bucket, sorted(s.invisibility.stragglers))
            for s in states
        ],
        "queue_id string, pointer bigint, stragglers array<bigint>",
    )
    rows = rows.join(F.broadcast(pointers), "queue_id").withColumns(
        {
            "kept": F.col("republished_to").isNull(),
            "live": (F.col("bucket") >= F.col("pointer"))
            | F.array_contains(F.col("stragglers"), F.col("bucket")),
        }
    )
    rows = rows.withColumns(
        {
            "counted": F.col("kept") & F.col("live"),
            "acked_ok": F.col("acked") & ~F.coalesce(F.col("dead_lettered"), F.lit(False)),
            "dead": F.coalesce(F.col("dead_lettered"), F.lit(False)),
        }
    ).cache()
    try:
        totals = _totals(rows, now_ms)
        histograms = _histograms(rows)
    finally:
        rows.unpersist()
    out = {}
    for s in states:
        t, summary = totals.get(str(s.queue.id), {}), s.invisibility.summary
        published = summary.published + int(t.get("published") or 0)
        acked = summary.acked + int(t.get("acked") or 0)
        dead = summary.dead_lettered + int(t.get("dead_lettered") or 0)
        in_flight = int(t.get("in_flight") or 0)
        oldest = t.get("oldest_unacked")
        latency = t.get("latency") or [None, None, None]
        out[s.queue.id] = StatsSnapshot(
            queue=s.queue.id,
            computed_at=now_ms,
            published=published,
            acked=acked,
            dead_lettered=dead,
            in_flight=in_flight,
            backlog=published - acked - dead - in_flight,
            delivered=summary.delivered + int(t.get("delivered") or 0),
            delivery_count_histogram=histograms.get(str(s.queue.id), {}),
            oldest_unacked_age_s=None if oldest is None else max(0, now_ms - oldest) / 1000,
            ack_latency_p50_ms=_float(latency[0]),
            ack_latency_p95_ms=_float(latency[1]),
            ack_latency_p99_ms=_float(latency[2]),
            rows_scanned=int(t.get("rows") or 0),
        )
    return out


def _totals(rows: DataFrame, now_ms: int) -> dict[str, dict[str, Any]]:
    from pyspark.sql import functions as F

    def count_if(cond: Any) -> Any:
        return F.sum(F.when(cond, 1).otherwise(0))

    counted, unacked = F.col("counted"), ~F.col("acked")
    latency = F.when(
        F.col("kept") & F.col("acked_ok") & F.col("acked_at").isNotNull(),
        F.col("acked_at") - F.col("created_at"),
    )
    agg = rows.groupBy("queue_id").agg(
        F.count(F.lit(1)).alias("rows"),
        count_if(counted).alias("published"),
        count_if(counted & F.col("acked_ok")).alias("acked"),
        count_if(counted & F.col("dead")).alias("dead_lettered"),
        F.sum(F.when(counted, F.col("delivery_count")).otherwise(0)).alias("delivered"),
        count_if(
            counted
            & unacked
            & (F.col("delivery_count") > 0)
            & (F.col("next_visible_on") > F.lit(now_ms))
        ).alias("in_flight"),
        F.min(F.when(counted & unacked, F.col("created_at"))).alias("oldest_unacked"),
        # Exact percentiles (linear interpolation), not sketches: the figures are small
        # enough per queue, and exact ones can be checked.
        F.percentile(latency, list(PERCENTILES)).alias("latency"),
    )
    return {r["queue_id"]: r.asDict() for r in agg.collect()}


def _histograms(rows: DataFrame) -> dict[str, dict[int, int]]:
    counts = rows.where("kept").groupBy("queue_id", "delivery_count").count().collect()
    out: dict[str, dict[int, int]] = {}
    for r in counts:
        out.setdefault(r["queue_id"], {})[int(r["delivery_count"])] = int(r["count"])
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
    from cassieq.pipeline.cli import run_module
    from cassieq.pipeline.cli import stats as _command

    run_module(_command)
