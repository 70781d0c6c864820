"""``cassieq bench``: the benchmark command, and ``cassieq bench fairness`` (two tenants)."""

from __future__ import annotations

import click

from cassieq.cli.common import err as _err
from cassieq.config import Settings


@click.group(invoke_without_command=True)
@click.pass_context
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
@click.option(
    "--workers",
    default=None,
    help="`cassieq serve --workers` counts (e.g. 1,2) whose HTTP e2e is measured at the top "
    "concurrency, in the JSON under 'workers' (default: none).",
)
@click.option(
    "--partitions",
    default=None,
    help="Partition counts (e.g. 1,4,16) of one queue, measured by `cassieq bench partitions`'s "
    "method, in the JSON under 'partitions' (default: none).",
)
def bench(
    ctx: click.Context,
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
    workers: str | None,
    partitions: str | None,
) -> None:
    """Measure the engine and the HTTP API against the LWT ceiling (real Cassandra).

    Without a subcommand: the whole benchmark. `cassieq bench fairness`: one tenant's
    latency alone and under another's flood."""
    if ctx.invoked_subcommand is not None:
        return
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
            workers=[int(w) for w in workers.split(",")] if workers else None,
        )
    )
    if partitions:
        # Issue 35: one queue by partition count (`cassieq bench partitions` on its own).
        from cassieq.cli.bench_partitions import counts, measure
        from cassieq.tools.bench.partitions import partitions_table

        part = measure(
            counts(partitions),
            servers=3,
            producers=max(int(c) for c in clients.split(",")),
            consumers=8,
            seconds=max(seconds, 5.0),
            batch=1,
            keyspace=f"{keyspace}_partitions",
        )
        result["partitions"] = part["partitions"]
        result["partitions_run"] = {k: v for k, v in part.items() if k != "partitions"}
        if not as_json:
            click.echo(partitions_table(part))
    click.echo(json.dumps(result, indent=2) if as_json else table(result))


@bench.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--seconds",
    type=click.FloatRange(min=1),
    default=20.0,
    show_default=True,
    help="Per turn (B alone, then B under A's flood).",
)
@click.option("--b-clients", type=click.IntRange(1), default=2, show_default=True)
@click.option(
    "--b-rate",
    type=click.FloatRange(min=0, min_open=True),
    default=50.0,
    show_default=True,
    help="Tenant B's puts per second (all its clients).",
)
@click.option("--a-clients", type=click.IntRange(1), default=32, show_default=True)
@click.option(
    "--account-rate",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="The server's CASSIEQ_ACCOUNT_REQUESTS_PER_SECOND (default: the setting's).",
)
@click.option(
    "--account-burst",
    type=click.IntRange(1),
    default=None,
    help="The server's CASSIEQ_ACCOUNT_REQUEST_BURST (default: the setting's).",
)
@click.option(
    "--keyspace",
    default="cassieq_bench_fairness",
    show_default=True,
    help="Dropped and re-created by every run.",
)
@click.option(
    "--rounds",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Turns alone and under the flood, interleaved, each --seconds long.",
)
@click.option(
    "--lone/--no-lone",
    default=True,
    show_default=True,
    help="Each round, a turn of A flooding alone too (a lone tenant's throughput).",
)
def fairness(
    as_json: bool,
    seconds: float,
    b_clients: int,
    b_rate: float,
    a_clients: int,
    account_rate: float | None,
    account_burst: int | None,
    keyspace: str,
    rounds: int,
    lone: bool,
) -> None:
    """Tenant B's put latency alone, then while tenant A floods puts (issue 40's fairness).

    The server reads the other settings from the environment (CASSIEQ_ACCOUNT_FAIR_SHARE=false:
    without the overload-aware fair share)."""
    import asyncio
    import json

    from cassieq.logs import configure_logging
    from cassieq.tools.bench.fairness import FairnessSettings, fairness_table, run_fairness

    configure_logging("console", "warning")
    fair = FairnessSettings(
        seconds=seconds,
        b_clients=b_clients,
        b_rate=b_rate,
        a_clients=a_clients,
        account_rate=account_rate,
        account_burst=account_burst,
        rounds=rounds,
        lone=lone,
    )
    result = asyncio.run(run_fairness(Settings.from_env(), keyspace=keyspace, fair=fair, say=_err))
    click.echo(json.dumps(result, indent=2) if as_json else fairness_table(result))


# `cassieq bench partitions` (issue 35), in a module of its own.
from cassieq.cli.bench_partitions import partitions as _partitions  # noqa: E402

bench.add_command(_partitions)

# `cassieq bench fifo` (issue 37), in a module of its own.
from cassieq.cli.bench_fifo import fifo as _fifo  # noqa: E402

bench.add_command(_fifo)

# `cassieq bench subscriptions` (issue 36), in a module of its own.
from cassieq.cli.bench_subscriptions import subscriptions as _subscriptions  # noqa: E402

bench.add_command(_subscriptions)

# `cassieq bench driver` (issue 38: the driver's floor), in a module of its own.
from cassieq.cli.bench_driver import driver as _driver  # noqa: E402

bench.add_command(_driver)
