"""``cassieq bench subscriptions``: a put's cost with 0 and with N subscriptions."""

from __future__ import annotations

import click

from cassieq.cli.bench_partitions import counts_between
from cassieq.cli.common import err as _err
from cassieq.config import Settings


def _counts(_ctx: click.Context, _param: click.Parameter, text: str) -> tuple[int, ...]:
    return counts_between(text, 0, 64, "subscription")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--subscriptions", "counts", default="0,10", show_default=True, callback=_counts)
@click.option("--messages", type=click.IntRange(1, 100_000), default=500, show_default=True)
@click.option(
    "--producers",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Clients putting (1: every put its own LWTs, so the counts compare exactly).",
)
@click.option(
    "--keyspace",
    default="cassieq_bench_subscriptions",
    show_default=True,
    help="Dropped and re-created by every run.",
)
def subscriptions(
    as_json: bool, counts: tuple[int, ...], messages: int, producers: int, keyspace: str
) -> None:
    """LWTs and store calls per put with each subscription count, in one run (under the key
    'subscriptions' of --json), while every subscription is read."""
    import asyncio
    import json

    from cassieq.logs import configure_logging
    from cassieq.tools.bench.subscriptions import (
        SubscriptionBench,
        run_subscriptions,
        subscriptions_table,
    )

    configure_logging("console", "warning")
    bench = SubscriptionBench(counts=counts, messages=messages, producers=producers)
    result = asyncio.run(
        run_subscriptions(Settings.from_env(), keyspace=keyspace, bench=bench, say=_err)
    )
    click.echo(json.dumps(result, indent=2) if as_json else subscriptions_table(result))
