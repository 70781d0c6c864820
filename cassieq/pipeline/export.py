"""The export job: a queue's messages to Parquet, an archive to take before finished
buckets are deleted.

One row per message (a late write moved by repair appears once, at its copy), with the
queue, its version and id, the monoton and bucket, the payload, the delivery count,
acked / dead-lettered flags and the times (UTC timestamps, millisecond precision).
The output directory can be fed back to the ingest job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cassieq.model import QueueDefinition
from cassieq.pipeline.buckets import message_rows, top_bucket
from cassieq.pipeline.progress import Progress
from cassieq.pipeline.spark import PipelineError
from cassieq.pipeline.store_access import StoreAccess

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


@dataclass(frozen=True)
class ExportFilter:
    only_acked: bool = False
    first_bucket: int | None = None
    last_bucket: int | None = None
    since_ms: int | None = None  # created at or after
    until_ms: int | None = None  # created before


def run(
    spark: SparkSession,
    access: StoreAccess,
    queue: QueueDefinition,
    out: str,
    flt: ExportFilter,
    *,
    overwrite: bool = False,
    progress: Progress | None = None,
) -> int:
    """Write the selected messages of ``queue`` to Parquet at ``out``; the row count."""
    monoton = access.run(access.store.read_monoton(queue.id))
    first = flt.first_bucket or 0
    last = top_bucket(queue, monoton)
    if flt.last_bucket is not None:
        last = min(last, flt.last_bucket)
    if first < 0 or (flt.last_bucket is not None and flt.last_bucket < first):
        raise PipelineError(f"bad bucket range {first}..{flt.last_bucket}")
    if progress:
        progress.phase(f"exporting {queue.id}: buckets {first}..{last} to {out}")
    frame = select(spark, access.settings.keyspace, queue, first, last, flt)
    frame.write.mode("overwrite" if overwrite else "errorifexists").parquet(out)
    return spark.read.parquet(out).count()


def select(
    spark: SparkSession,
    keyspace: str,
    queue: QueueDefinition,
    first: int,
    last: int,
    flt: ExportFilter,
) -> DataFrame:
    from pyspark.sql import functions as F

    rows = message_rows(spark, keyspace, [(queue, first, last)])
    # A row repair moved lives on at its copy: exporting both would duplicate it.
    rows = rows.where(F.col("republished_to").isNull())
    if flt.only_acked:
        rows = rows.where(F.col("acked") & ~F.coalesce(F.col("dead_lettered"), F.lit(False)))
    if flt.since_ms is not None:
        rows = rows.where(F.col("created_at") >= F.lit(flt.since_ms))
    if flt.until_ms is not None:
        rows = rows.where(F.col("created_at") < F.lit(flt.until_ms))

    def ts(name: str) -> Column:
        return F.timestamp_millis(F.col(name)).alias(name)

    return rows.select(
        F.lit(queue.account).alias("account"),
        F.lit(queue.name).alias("queue"),
        F.lit(queue.version).alias("queue_version"),
        "queue_id",
        "bucket",
        "monoton",
        "message",
        "delivery_count",
        "acked",
        F.coalesce(F.col("dead_lettered"), F.lit(False)).alias("dead_lettered"),
        ts("created_at"),
        ts("updated_at"),
        ts("acked_at"),
        ts("next_visible_on"),
    ).orderBy("monoton")


if __name__ == "__main__":  # python -m cassieq.pipeline.export / spark-submit
    from cassieq.pipeline.commands import export as _command
    from cassieq.pipeline.commands import run_module

    run_module(_command)
