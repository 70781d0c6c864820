"""``cassieq bench fifo``: a FIFO queue's e2e against a standard queue's, same run (issue 37)."""

from __future__ import annotations

from typing import get_args

import click

from cassieq.cli.common import err as _err
from cassieq.config import Settings
from cassieq.model import DeduplicationScope


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--groups", type=click.IntRange(1), default=16, show_default=True)
@click.option(
    "--servers",
    type=click.IntRange(1, 64),
    default=3,
    show_default=True,
    help="Engines in this process, each a server of the queues.",
)
@click.option(
    "--producers",
    type=click.IntRange(1),
    default=16,
    show_default=True,
    help="On the FIFO queue producer i sends to groups i, i + producers, ... in turn "
    "(more producers than groups: the extra ones send nothing there).",
)
@click.option("--consumers", type=click.IntRange(1), default=8, show_default=True)
@click.option("--seconds", type=click.FloatRange(min=1), default=10.0, show_default=True)
@click.option(
    "--batch",
    type=click.IntRange(1, 10),
    default=10,
    show_default=True,
    help="Messages per send and per receive.",
)
@click.option(
    "--rounds",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Turns standard, FIFO, FIFO, standard, this many times.",
)
@click.option(
    "--partitions",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Both queues' partitions.",
)
@click.option(
    "--dedup-ids/--no-dedup-ids",
    default=True,
    show_default=True,
    help="FIFO sends carry a deduplication id (the body); without: what deduplication costs.",
)
@click.option(
    "--dedup-scope",
    type=click.Choice(get_args(DeduplicationScope)),
    default="queue",
    show_default=True,
    help="The FIFO queue's deduplication scope (messageGroup: a group's ids claimed together).",
)
@click.option(
    "--keyspace",
    default="cassieq_bench_fifo",
    show_default=True,
    help="Dropped and re-created by every run.",
)
def fifo(
    as_json: bool,
    groups: int,
    servers: int,
    producers: int,
    consumers: int,
    seconds: float,
    batch: int,
    rounds: int,
    partitions: int,
    dedup_ids: bool,
    dedup_scope: DeduplicationScope,
    keyspace: str,
) -> None:
    """FIFO e2e (messages acked per second) with --groups groups against a standard queue's,
    in alternating turns of one run, and their ratio (issue 37's target: at least 0.5)."""
    import asyncio
    import json

    from cassieq.logs import configure_logging
    from cassieq.tools.bench.fifo import FifoBench, fifo_table, run_fifo_bench

    configure_logging("console", "warning")
    bench = FifoBench(
        groups=groups,
        servers=servers,
        producers=producers,
        consumers=consumers,
        seconds=seconds,
        batch=batch,
        rounds=rounds,
        partitions=partitions,
        dedup_ids=dedup_ids,
        dedup_scope=dedup_scope,
    )
    result = asyncio.run(
        run_fifo_bench(Settings.from_env(), keyspace=keyspace, bench=bench, say=_err)
    )
    click.echo(json.dumps(result, indent=2) if as_json else fifo_table(result))
