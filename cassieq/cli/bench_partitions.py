"""``cassieq bench partitions``: one queue's throughput and LWT cost by partition count."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cassieq.cli.common import err as _err
from cassieq.config import Settings

if TYPE_CHECKING:
    from cassieq.engine.life.monotons import MonotonStrategy


def counts_between(text: str, low: int, high: int, what: str) -> tuple[int, ...]:
    """A list of counts like ``1,4,16``, each from ``low`` to ``high`` (else a usage error)."""
    try:
        values = tuple(int(c) for c in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a list of counts like 1,4,16") from None
    if not values or any(not low <= v <= high for v in values):
        raise click.BadParameter(f"each {what} count must be between {low} and {high}")
    return values


def counts(text: str) -> tuple[int, ...]:
    return counts_between(text, 1, 256, "partition")


def measure(
    partitions: tuple[int, ...],
    *,
    servers: int,
    producers: int,
    consumers: int,
    seconds: float,
    batch: int,
    keyspace: str,
    put_strategy: MonotonStrategy = "grouped",
) -> dict[str, object]:
    import asyncio

    from cassieq.tools.bench.partitions import PartitionBench, run_partitions

    bench = PartitionBench(
        counts=partitions,
        servers=servers,
        producers=producers,
        consumers=consumers,
        seconds=seconds,
        batch=batch,
        put_strategy=put_strategy,
    )
    return asyncio.run(
        run_partitions(Settings.from_env(), keyspace=keyspace, bench=bench, say=_err)
    )


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--partitions",
    "partition_counts",
    default="1,4,16",
    show_default=True,
    callback=lambda _c, _p, v: counts(v),
)
@click.option(
    "--servers",
    type=click.IntRange(1, 64),
    default=3,
    show_default=True,
    help="Engines in this process, each a server of the queue.",
)
@click.option("--producers", type=click.IntRange(1), default=32, show_default=True)
@click.option("--consumers", type=click.IntRange(1), default=8, show_default=True)
@click.option("--seconds", type=click.FloatRange(min=1), default=10.0, show_default=True)
@click.option(
    "--batch",
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
    help="Messages per put (1: v1's put; more: a v2 send).",
)
@click.option(
    "--put-strategy",
    # MonotonStrategy's values, spelled out: importing the engine here would load it for
    # every `cassieq` command.
    type=click.Choice(["grouped", "per_put"]),
    default="grouped",
    show_default=True,
    help="grouped: concurrent puts share a monoton range (the engine's way); per_put: a "
    "monoton compare-and-set for every put (the original design).",
)
@click.option(
    "--keyspace",
    default="cassieq_bench_partitions",
    show_default=True,
    help="Dropped and re-created by every run.",
)
def partitions(
    as_json: bool,
    partition_counts: tuple[int, ...],
    servers: int,
    producers: int,
    consumers: int,
    seconds: float,
    batch: int,
    put_strategy: MonotonStrategy,  # click's Choice gives only these values
    keyspace: str,
) -> None:
    """One queue with each partition count: e2e/s, LWT attempts and CAS retries per message,
    latency (the figures are under the key 'partitions' of --json)."""
    import json

    from cassieq.logs import configure_logging
    from cassieq.tools.bench.partitions import partitions_table

    configure_logging("console", "warning")
    result = measure(
        partition_counts,
        servers=servers,
        producers=producers,
        consumers=consumers,
        seconds=seconds,
        batch=batch,
        keyspace=keyspace,
        put_strategy=put_strategy,
    )
    click.echo(json.dumps(result, indent=2) if as_json else partitions_table(result))
