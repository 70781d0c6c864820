"""The export job: a queue's messages to Parquet, an archive to take before finished
buckets are deleted.

One row per message (a late write moved by repair appears once, at its copy), with the
queue, its version and id, the monoton and bucket, the payload, the delivery count,
acked / dead-lettered flags and the times (UTC timestamps, millisecond precision).
The output directory can be fed back to the ingest job.

A queue of many partitions (issue 35) is exported whole: every partition's messages, each
row with its ``partition``, ``queue_id`` (the partition's key) and ``message_id`` (the id
v2 gives it: the monoton, ``p-monoton`` beyond partition 0). A monoton is unique within a
partition only; ``(partition, monoton)`` and ``message_id`` are unique in the queue.

From a subscription's position (``ExportFilter.from_position``, issue 36) the export holds
what an ordered read from there would read: per partition the rows at or after the
position's monoton, each message where it was first written. So a late write that repair
moved is exported at its original (a reader by position waits for it and reads it there)
and the repair copy (``republished_from``) is skipped; a reader past the original has read
it, and its copy further on is not exported again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
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
    # Per partition, the first monoton to export: a subscription's committed position.
    from_position: tuple[int, ...] | None = None


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
    """Write the selected messages of ``queue`` (every partition) to Parquet at ``out``;
    the row count. The bucket range of the filter applies within each partition."""
    first = flt.first_bucket or 0
    if first < 0 or (flt.last_bucket is not None and flt.last_bucket < first):
        raise PipelineError(f"bad bucket range {first}..{flt.last_bucket}")
    ranges = []
    for view in queue.partition_views():
        last = top_bucket(view, access.run(access.store.read_monoton(view.id)))
        if flt.last_bucket is not None:
            last = min(last, flt.last_bucket)
        start = first
        if flt.from_position is not None:  # the buckets before the position are not read
            start = max(first, view.bucket_of(flt.from_position[view.partition]))
        ranges.append((view, start, last))
    if progress:
        starts = ", ".join(str(start) for _, start, _ in ranges)
        tops = ", ".join(str(last) for _, _, last in ranges)
        progress.phase(
            f"exporting {queue.id}: {len(ranges)} partition(s), buckets [{starts}]..[{tops}] "
            f"to {out}"
        )
    frame = select_ranges(spark, access.settings.keyspace, queue, ranges, flt)
    try:
        frame.write.mode("overwrite" if overwrite else "errorifexists").parquet(out)
    except Exception as exc:
        # A path this process cannot see (hdfs://, s3a://) is checked by Spark only: its
        # advice names its own API (mode "overwrite"), not the flag.
        if "PATH_ALREADY_EXISTS" in str(exc):
            raise PipelineError(_exists(out)) from exc
        raise
    return spark.read.parquet(out).count()


def refuse_existing(out: str) -> None:
    """Refuse an existing local output directory before Spark starts, naming --overwrite."""
    local = _local_path(out)
    if local is not None and local.exists():
        raise PipelineError(_exists(out))


def _exists(out: str) -> str:
    return (
        f"the export folder {out} exists already: pass --overwrite to replace it "
        f"(its contents are deleted), or choose another --out"
    )


def _local_path(out: str) -> Path | None:
    """The local path ``out`` names (a plain path or a file: URI), or None (hdfs://...)."""
    if out.startswith("file:"):
        return Path(re.sub(r"^file:(//)?", "", out))
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", out):
        return None
    return Path(out)


def select(
    spark: SparkSession,
    keyspace: str,
    queue: QueueDefinition,
    first: int,
    last: int,
    flt: ExportFilter,
) -> DataFrame:
    """Buckets ``first..last`` of every partition of ``queue``."""
    ranges = [(view, first, last) for view in queue.partition_views()]
    return select_ranges(spark, keyspace, queue, ranges, flt)


def select_ranges(
    spark: SparkSession,
    keyspace: str,
    queue: QueueDefinition,
    ranges: list[tuple[QueueDefinition, int, int]],
    flt: ExportFilter,
) -> DataFrame:
    """The export's rows of the given (partition view, first, last) bucket ranges."""
    from pyspark.sql import functions as F

    rows = message_rows(spark, keyspace, ranges)
    # Which partition a row's key is, and its first monoton (a small table: at most 256
    # rows, broadcast).
    starts = flt.from_position or (0,) * len(queue.partition_views())
    partitions = spark.createDataFrame(
        [(str(view.id), view.partition, starts[view.partition]) for view, _, _ in ranges],
        "queue_id string, partition int, first_monoton long",
    )
    rows = rows.join(F.broadcast(partitions), "queue_id")
    if flt.from_position is None:
        # A row repair moved lives on at its copy: exporting both would duplicate it.
        rows = rows.where(F.col("republished_to").isNull())
    else:
        # As an ordered read: the original where it landed, never the copy (module doc).
        rows = rows.where(
            F.col("republished_from").isNull() & (F.col("monoton") >= F.col("first_monoton"))
        )
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
        "partition",
        # The id v2 gives the message (model.message_id): partition 0's is the monoton.
        F.when(F.col("partition") == 0, F.col("monoton").cast("string"))
        .otherwise(F.concat_ws("-", F.col("partition").cast("string"), F.col("monoton")))
        .alias("message_id"),
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
    ).orderBy("partition", "monoton")


if __name__ == "__main__":  # python -m cassieq.pipeline.export / spark-submit
    from cassieq.pipeline.commands import export as _command
    from cassieq.pipeline.commands import run_module

    run_module(_command)
