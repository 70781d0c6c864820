"""Reading a queue's bucket partitions with Spark.

The messages table is keyed by (queue id, bucket). A queue's buckets are 0 up to one past
its monoton's bucket (a repair copy may sit there), so a job builds that key range and
joins it with the table: with the connector's extensions this is a direct join (one read
per partition), without them a scan of the whole table (every queue's rows); both give the
same rows.
"""

from __future__ import annotations

from functools import reduce
from typing import TYPE_CHECKING

from cassieq.model import QueueDefinition
from cassieq.pipeline.spark import table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MESSAGE_COLUMNS = (
    "queue_id",
    "bucket",
    "monoton",
    "message",
    "delivery_count",
    "acked",
    "dead_lettered",
    "republished_to",
    "republished_from",  # schema 0014
    "next_visible_on",
    "created_at",
    "updated_at",
    "acked_at",
    "expired",  # schema 0007
    "purged",  # schema 0008
)


def top_bucket(queue: QueueDefinition, monoton: int) -> int:
    return queue.bucket_of(monoton) + 1


def bucket_keys(spark: SparkSession, ranges: list[tuple[QueueDefinition, int, int]]) -> DataFrame:
    """(queue_id, bucket) for each queue's buckets ``first..last`` inclusive."""
    from pyspark.sql import functions as F

    spans = [(str(q.id), first, last) for q, first, last in ranges if last >= first]
    if not spans:
        return spark.createDataFrame([], "queue_id string, bucket bigint")
    # With one queue id, Spark folds the literal into a filter on the table and joins on
    # the bucket alone, which no longer covers the partition key: the connector then scans
    # the whole messages table (every queue's rows) instead of reading the buckets. A second
    # branch with another id and no rows keeps queue_id a join key (a direct join).
    spans.append(_NO_QUEUE)
    frames = [
        spark.range(first, last + 1).select(
            F.lit(queue_id).alias("queue_id"), F.col("id").alias("bucket")
        )
        for queue_id, first, last in spans
    ]
    return reduce(lambda a, b: a.unionByName(b), frames)


# No queue has this id (a queue id is account:name:version), and its range is empty.
_NO_QUEUE = ("", 0, -1)


def message_rows(
    spark: SparkSession, keyspace: str, ranges: list[tuple[QueueDefinition, int, int]]
) -> DataFrame:
    """The message rows (not the bucket markers) of the given bucket ranges."""
    from pyspark.sql import functions as F

    messages = table(spark, keyspace, "messages").select(*MESSAGE_COLUMNS)
    rows = bucket_keys(spark, ranges).join(messages, ["queue_id", "bucket"])
    # A bucket with markers but no message row (not written yet, or emptied after
    # finalization) reads as one row of nulls. Not filtered on monoton: the connector
    # declares key columns non-nullable, so Spark drops `monoton IS NOT NULL` as always true
    # and the null row went through. Every message row has created_at (rows are only
    # inserted whole, and changed by LWTs that need the row), a column Spark keeps nullable.
    return rows.where(F.col("created_at").isNotNull())
