"""The ingest job: load messages from Parquet or JSON Lines into a queue, at scale.

Each Spark task takes its partition's messages, reserves one contiguous monoton range for
all of them with a single compare-and-set (n -> n + k, the engine's own Monotons), and
writes them with one conditional batch per bucket (the engine's insert: refused if repair
has finalized the bucket). The rows are the very rows a put writes, so the engine cannot
tell them apart: it delivers each once, and repair treats a slow task's rows as it treats
a slow put's. A batch refused because its bucket was finalized under a slow task is
written again under a fresh reservation; nothing is dropped.

A queue of many partitions (issue 35) takes the input spread over its partitions: task
``i`` writes into partition ``i mod partitions`` (its monoton range is taken from that
partition's own monoton, its rows go to that partition's buckets), so each task is still
one reservation and one conditional batch per bucket, as a put of a group is. There is no
order across partitions, as for puts without a key.

Input: Parquet with a string column ``message`` (what the export job writes), or JSON
Lines with one object per line whose ``message`` is the payload (a string is taken as
is; any other JSON value is stored as its JSON text).
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

from cassieq.config import Settings
from cassieq.engine.clock import SystemClock
from cassieq.engine.context import EngineContext
from cassieq.engine.life.monotons import Monotons
from cassieq.engine.life.put import new_message
from cassieq.model import MAX_MESSAGE_BYTES, QueueDefinition, utf8_len
from cassieq.pipeline.progress import Progress
from cassieq.pipeline.spark import PipelineError
from cassieq.store.batches import by_bytes
from cassieq.store.cassandra import CassandraStore

if TYPE_CHECKING:
    from pyspark.rdd import RDD
    from pyspark.sql import SparkSession

InputFormat = Literal["parquet", "jsonl"]
MAX_ATTEMPTS = 8  # reservations per task for batches refused by finalized buckets
CONCURRENT_BATCHES = 32  # per task: the LWT ceiling is reached with a few dozen in flight


@dataclass(frozen=True)
class TaskResult:
    rows: int
    reservations: int
    batches: int


def run(
    spark: SparkSession,
    settings: Settings,
    queue: QueueDefinition,
    source: str,
    fmt: InputFormat,
    *,
    progress: Progress | None = None,
) -> TaskResult:
    """Ingest ``source`` into ``queue``; the totals over all tasks.

    The input is checked whole before anything is written: a bad line refuses the file,
    rather than leaving part of it in the queue.
    """
    say = progress.phase if progress else (lambda _: None)
    say(f"checking {source} ({fmt})")
    from pyspark import StorageLevel

    # Kept after the check: the write reads the same records, not the input again.
    records = read_records(spark, source, fmt).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        problems = records.filter(lambda r: r[1] is not None).map(lambda r: r[1]).take(1)
        if problems:
            raise PipelineError(str(problems[0]))
        payloads = records.map(lambda r: str(r[0]))
        parallelism = spark.sparkContext.defaultParallelism
        if payloads.getNumPartitions() < parallelism:
            payloads = payloads.repartition(parallelism)
        say(f"ingesting into {queue.id}")
        config = msgspec.json.encode((settings, queue))
        results = payloads.mapPartitionsWithIndex(
            lambda index, part: ingest_partition(config, part, index)
        ).collect()
    finally:
        records.unpersist()
    return TaskResult(
        rows=sum(r.rows for r in results),
        reservations=sum(r.reservations for r in results),
        batches=sum(r.batches for r in results),
    )


Record = tuple[str | None, str | None]  # (payload, problem): exactly one is set


def read_records(spark: SparkSession, source: str, fmt: InputFormat) -> RDD[Record]:
    """The input's payloads, or what is wrong with a row (returned, not raised: a task's
    exception would reach the user as a JVM stack trace)."""
    if fmt == "parquet":
        try:
            frame = spark.read.parquet(source)
        except Exception as exc:
            raise PipelineError(f"{source}: cannot read it as Parquet") from exc
        types = dict(frame.dtypes)
        if types.get("message") != "string":
            found = types.get("message", "no such column")
            raise PipelineError(f"{source}: needs a string column 'message' ({found})")
        return frame.select("message").rdd.map(lambda r: _checked(r[0], source))
    if fmt == "jsonl":
        if not Path(source).exists() and "://" not in source:
            raise PipelineError(f"{source}: no such file or directory")
        lines = spark.sparkContext.textFile(source)
        return (
            lines.zipWithIndex()
            .filter(lambda li: li[0].strip() != "")
            .map(lambda li: _payload_of_line(li[0], li[1] + 1, source))
        )
    raise PipelineError(f"unknown input format {fmt!r} (parquet or jsonl)")


def _payload_of_line(line: str, number: int, source: str) -> Record:
    where = f"{source}, line {number}"
    try:
        obj = json.loads(line)
    except ValueError as exc:
        return None, f"{where}: not JSON ({exc})"
    if not isinstance(obj, dict) or "message" not in obj:
        return None, f"{where}: needs an object with a 'message' key"
    value = obj["message"]
    payload = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return _checked(payload, where)


def _checked(payload: str | None, where: str) -> Record:
    if payload is None:
        return None, f"{where}: a null message (every row needs a payload)"
    if utf8_len(payload) > MAX_MESSAGE_BYTES:
        return None, f"{where}: a message over {MAX_MESSAGE_BYTES} bytes"
    return payload, None


def ingest_partition(config: bytes, payloads: Iterable[str], task: int = 0) -> Iterator[TaskResult]:
    """One Spark task: reserve a range, write the rows (runs on an executor). Task ``task``
    writes into the queue's partition ``task mod partitions``."""
    messages = list(payloads)
    if not messages:
        return iter(())
    settings, queue = msgspec.json.decode(config, type=tuple[Settings, QueueDefinition])
    # The partition's view: its id keys the monoton taken and the buckets written.
    view = queue.in_partition(task % queue.options.partitions)
    return iter([asyncio.run(_write_all(settings, view, messages))])


async def _write_all(settings: Settings, queue: QueueDefinition, messages: list[str]) -> TaskResult:
    cluster, store = CassandraStore.from_settings(settings)
    try:
        ctx = EngineContext(store=store, clock=SystemClock())
        monotons = Monotons(ctx)
        gate = asyncio.Semaphore(CONCURRENT_BATCHES)
        todo, batches = messages, 0
        for attempt in range(1, MAX_ATTEMPTS + 1):
            first = await monotons.take(queue.id, len(todo))
            todo, written = await _write_range(ctx, queue, gate, first, todo)
            batches += written
            if not todo:
                return TaskResult(rows=len(messages), reservations=attempt, batches=batches)
        raise PipelineError(
            f"{len(todo)} message(s) could not be written into {queue.id}: their buckets were "
            f"finalized {MAX_ATTEMPTS} times in a row (is the task far slower than "
            "finalize_seconds?)"
        )
    finally:
        cluster.shutdown()


async def _write_range(
    ctx: EngineContext,
    queue: QueueDefinition,
    gate: asyncio.Semaphore,
    first: int,
    payloads: list[str],
) -> tuple[list[str], int]:
    """Write ``payloads`` at monotons ``first...``; the ones refused, and the batch count."""
    by_bucket: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for offset, payload in enumerate(payloads):
        by_bucket[queue.bucket_of(first + offset)].append((first + offset, payload))

    async def write(bucket: int, part: list[tuple[int, str]]) -> bool:
        async with gate:
            # Stamped as it is written, like a put: a row stamped long before it lands
            # would look written before a seal it came after.
            now = ctx.clock.now()
            rows = [new_message(monoton, payload, now) for monoton, payload in part]
            return await ctx.store.insert_messages(queue.id, bucket, rows, now)

    # Buckets in ascending order: readers meet written buckets rather than holes. A bucket
    # of large messages is written in parts (MAX_BATCH_BYTES), each refused or not alone.
    writes = [
        (bucket, part)
        for bucket in sorted(by_bucket)
        for part in by_bytes(by_bucket[bucket], lambda entry: utf8_len(entry[1]))
    ]
    written = await asyncio.gather(*(write(bucket, part) for bucket, part in writes))
    refused = [
        payload
        for (_, part), ok in zip(writes, written, strict=True)
        if not ok
        for _, payload in part
    ]
    return refused, len(writes)


if __name__ == "__main__":  # python -m cassieq.pipeline.ingest / spark-submit
    from cassieq.pipeline.commands import ingest as _command
    from cassieq.pipeline.commands import run_module

    run_module(_command)
