"""`cassieq chaos`: the click command (heavy imports wait until it runs)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import click

from cassieq.model import DeduplicationScope
from cassieq.tools.chaos.options import NODE_SCENARIOS, SCENARIOS, ChaosOptions, Scenario

if TYPE_CHECKING:
    from cassieq.tools.devcluster.cluster import ClusterConfig

SINGLE_NODE_REPLICATION = "{'class': 'SimpleStrategy', 'replication_factor': 1}"


@click.command()
@click.option(
    "--scenario",
    type=click.Choice([*SCENARIOS, "all"]),
    default="all",
    show_default=True,
    help="node-kill: SIGKILL a Cassandra node at 1/3 of the puts, restart it at 2/3; "
    "server-kill: SIGKILL server B at 1/3, restart it on its port a few seconds later; "
    "both: the two, overlapping.",
)
@click.option("--messages", type=click.IntRange(1), default=3000, show_default=True)
@click.option(
    "--rate", type=click.FloatRange(min=0.1), default=15.0, show_default=True, help="Puts/s."
)
@click.option("--producers", type=click.IntRange(1), default=8, show_default=True)
@click.option("--consumers", type=click.IntRange(1), default=12, show_default=True)
@click.option("--lease", type=click.IntRange(2), default=30, show_default=True, help="Seconds.")
@click.option("--bucket-size", type=click.IntRange(1, 10_000), default=20, show_default=True)
@click.option("--finalize", type=click.IntRange(1), default=5, show_default=True, help="Seconds.")
@click.option(
    "--repair-poll", type=click.IntRange(1), default=1, show_default=True, help="Seconds."
)
@click.option(
    "--unacked-every",
    type=click.IntRange(0),
    default=50,
    show_default=True,
    help="Leave every Nth delivery unacked on purpose (0: none).",
)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option(
    "--batch",
    type=click.IntRange(0, 100),
    default=0,
    show_default=True,
    help="0: v1, one message per request. N: v2 batches (/api/v2): producers send N "
    "messages per request, consumers receive up to N with long polling and ack them in one "
    "request.",
)
@click.option(
    "--mixed",
    is_flag=True,
    help="With --batch: every other producer and consumer uses v1 instead (one message per "
    "request), so one run's faults meet both APIs.",
)
@click.option(
    "--deadline",
    type=click.FloatRange(min=10),
    default=360.0,
    show_default=True,
    help="Hard bound per scenario, seconds (set-up to end of drain).",
)
@click.option(
    "--hosts", default=None, help="Cluster hosts, comma-separated (default: the cluster tool's)."
)
@click.option(
    "--single-node",
    is_flag=True,
    help="Development: the single local node (RF 1); baseline and server-kill only.",
)
@click.option(
    "--partitions",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="The queue's partitions (the servers' CASSIEQ_DEFAULT_PARTITIONS).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Processes of each server (its CASSIEQ_WORKERS).",
)
@click.option(
    "--subscriptions",
    type=click.IntRange(0, 10),
    default=0,
    show_default=True,
    help="Ordered subscriptions (start earliest) made on the queue before the puts, each "
    "read and committed by one reader through the puts and the drain until caught up; "
    "judged per subscription: LOST, DOUBLE, ORDER.",
)
@click.option(
    "--shared-subscriptions",
    type=click.IntRange(0, 10),
    default=0,
    show_default=True,
    help="Shared subscriptions (start earliest) made on the queue before the puts, each "
    "consumed by --consumers consumers of its own through its v2 receive and ack (the "
    "queue's workers, one message per receive without --batch); judged per subscription "
    "as the queue is: LOST, DOUBLE WITHIN LEASE, ...",
)
@click.option(
    "--fifo",
    is_flag=True,
    help="The FIFO check's workload instead (`cassieq fifo-check`: boto3 on a .fifo queue "
    "through both servers; --messages over --groups groups, --lease is the visibility "
    "timeout, one first delivery in --unacked-every left to expire, --rate paces the sends).",
)
@click.option(
    "--groups",
    type=click.IntRange(1),
    default=20,
    show_default=True,
    help="With --fifo: message groups.",
)
@click.option(
    "--dedup-scope",
    type=click.Choice(get_args(DeduplicationScope)),
    default="queue",
    show_default=True,
    help="With --fifo: the queue's DeduplicationScope (messageGroup: a group's ids are "
    "claimed together).",
)
@click.option("--keep", is_flag=True, help="Keep each scenario's keyspace.")
@click.option(
    "--keep-logs",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Write the servers' JSON logs under DIR/<keyspace>/ (default: a temporary dir).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def chaos(
    scenario: str,
    messages: int,
    rate: float,
    producers: int,
    consumers: int,
    lease: int,
    bucket_size: int,
    finalize: int,
    repair_poll: int,
    unacked_every: int,
    seed: int,
    batch: int,
    mixed: bool,
    deadline: float,
    hosts: str | None,
    single_node: bool,
    partitions: int,
    workers: int,
    subscriptions: int,
    shared_subscriptions: int,
    fifo: bool,
    groups: int,
    dedup_scope: DeduplicationScope,
    keep: bool,
    keep_logs: Path | None,
    as_json: bool,
) -> None:
    """A bounded soak: two servers on an RF 3 keyspace, producers and consumers, faults.

    Prints per scenario: puts answered 201, LOST, DOUBLE WITHIN LEASE, redeliveries, 409s on
    valid receipts, 5xx, time to recover after each fault and the three pointers after the
    drain. Exits 1 when any scenario shows a violation.
    """
    import asyncio

    from rich.console import Console

    from cassieq.tools.chaos.report import passed, print_table, to_json
    from cassieq.tools.chaos.scenario import run_scenario

    if mixed and not batch:
        raise click.UsageError("--mixed needs --batch (the v2 half's batch size)")
    if fifo and shared_subscriptions:
        raise click.UsageError("--shared-subscriptions is for the queue's workload, not --fifo")
    scenarios: list[Scenario] = list(SCENARIOS) if scenario == "all" else [_scenario(scenario)]
    cluster, where = _where(hosts, single_node, scenarios)
    opts = ChaosOptions(
        messages=messages,
        rate=rate,
        producers=producers,
        consumers=consumers,
        lease=lease,
        bucket_size=bucket_size,
        finalize=finalize,
        repair_poll=repair_poll,
        unacked_every=unacked_every,
        seed=seed,
        batch=batch,
        mixed=mixed,
        deadline=deadline,
        single_node=single_node,
        partitions=partitions,
        workers=workers,
        subscriptions=subscriptions,
        shared_subscriptions=shared_subscriptions,
        keep_keyspace=keep,
        log_dir=keep_logs,
        **where,
    )

    async def run_all() -> dict[str, dict[str, Any]]:
        results: dict[str, dict[str, Any]] = {}
        for name in scenarios:
            try:
                if fifo:
                    from cassieq.tools.chaos.fifo import run_fifo_scenario

                    results[name] = await run_fifo_scenario(
                        name, opts, cluster, _err, groups, dedup_scope
                    )
                    continue
                results[name] = await run_scenario(name, opts, cluster, _err)
            except Exception as exc:  # one broken scenario must not hide the others
                results[name] = {"scenario": name, "passed": False, "error": _one_line(exc)}
                _err(f"[{name}] failed: {_one_line(exc)}")
            results[name]["messages"] = opts.messages
        return results

    results = asyncio.run(run_all())
    if as_json:
        click.echo(to_json(results))
    elif fifo:
        from cassieq.tools.fifo.report import figures

        for name, result in results.items():
            click.echo(f"== {name} (fifo)")
            click.echo(figures(result) if "error" not in result else f"ERROR: {result['error']}")
    else:
        print_table(results, Console())
    if not passed(results):
        sys.exit(1)


def _scenario(name: str) -> Scenario:
    for s in SCENARIOS:
        if s == name:
            return s
    raise click.BadParameter(name)


def _where(
    hosts: str | None, single_node: bool, scenarios: list[Scenario]
) -> tuple[ClusterConfig | None, dict[str, Any]]:
    """The cluster (its config, for the node faults), or the single dev node."""
    host_list = tuple(h.strip() for h in hosts.split(",") if h.strip()) if hosts else None
    if single_node:
        from cassieq.config import Settings

        needs_cluster = [s for s in scenarios if s in NODE_SCENARIOS]
        if needs_cluster:
            raise click.UsageError(f"{', '.join(needs_cluster)} needs the cluster")
        settings = Settings.from_env()
        return None, {
            "hosts": host_list or ("127.0.0.1",),
            "native_port": settings.cassandra_port,
            "replication": SINGLE_NODE_REPLICATION,
        }
    from cassieq.tools.devcluster.cluster import ClusterConfig

    cfg = ClusterConfig.from_env(hosts=host_list) if host_list else ClusterConfig.from_env()
    return cfg, {
        "hosts": tuple(cfg.hosts),
        "native_port": cfg.native_port,
        "replication": cfg.replication(3),
    }


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:500]


def _err(message: str) -> None:
    click.echo(message, err=True)
