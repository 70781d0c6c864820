"""``cassieq bench``: the benchmark command."""

from __future__ import annotations

import click

from cassieq.cli.common import err as _err
from cassieq.config import Settings


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--clients", default="1,8,32", show_default=True, help="Concurrencies to measure.")
@click.option("--seconds", type=float, default=5.0, show_default=True, help="Per measurement.")
@click.option("--backlog", type=int, default=100_000, show_default=True)
@click.option(
    "--keyspace",
    default="cassieq_bench",
    show_default=True,
    help="Dropped and re-created by every run, as is <keyspace>_paired.",
)
@click.option("--no-http", is_flag=True, help="Skip the HTTP API measurements.")
@click.option("--no-v2", is_flag=True, help="Skip the v2 section (batches, long polling).")
@click.option("--v2-batches", default="1,10", show_default=True, help="v2 batch sizes.")
@click.option(
    "--wake-samples",
    type=click.IntRange(1),
    default=30,
    show_default=True,
    help="Long-poll wake-up samples per case (same server, other server).",
)
@click.option(
    "--idle-waiters", type=click.IntRange(1), default=100, show_default=True, help="Per server."
)
@click.option(
    "--idle-seconds",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="The window the idle waiters' store reads are counted over.",
)
@click.option(
    "--paired-rounds",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help="Rounds of v1 v2 v2 v1 HTTP e2e turns on one server, for #15's ratio.",
)
def bench(
    as_json: bool,
    clients: str,
    seconds: float,
    backlog: int,
    keyspace: str,
    no_http: bool,
    no_v2: bool,
    v2_batches: str,
    wake_samples: int,
    idle_waiters: int,
    idle_seconds: float,
    paired_rounds: int,
) -> None:
    """Measure the engine and the HTTP API against the LWT ceiling (real Cassandra)."""
    import asyncio
    import json

    from cassieq.logs import configure_logging
    from cassieq.tools.bench.report import table
    from cassieq.tools.bench.run import run_bench
    from cassieq.tools.bench.v2 import V2Settings

    configure_logging("console", "warning")
    result = asyncio.run(
        run_bench(
            Settings.from_env(),
            keyspace=keyspace,
            clients=[int(c) for c in clients.split(",")],
            seconds=seconds,
            backlog=backlog,
            http=not no_http,
            say=_err,
            v2=None
            if no_v2
            else V2Settings(
                batches=tuple(int(b) for b in v2_batches.split(",")),
                wake_samples=wake_samples,
                idle_waiters=idle_waiters,
                idle_seconds=idle_seconds,
                paired_rounds=paired_rounds,
            ),
        )
    )
    click.echo(json.dumps(result, indent=2) if as_json else table(result))
