"""``cassieq fifo-check``: FIFO queues' ordering and deduplication through boto3 (issue 37)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cassieq.cli.common import err as _err
from cassieq.config import Settings


@click.command("fifo-check")
@click.option(
    "--endpoint",
    "endpoints",
    multiple=True,
    help="A server's base URL (repeat for several: clients are spread over them). Default: "
    "start --servers servers on --keyspace.",
)
@click.option(
    "--account",
    envvar="AWS_ACCESS_KEY_ID",
    default=None,
    help="With --endpoint: the account (its SQS access key id) [env AWS_ACCESS_KEY_ID].",
)
@click.option(
    "--key",
    envvar="AWS_SECRET_ACCESS_KEY",
    default=None,
    help="With --endpoint: one of the account's keys [env AWS_SECRET_ACCESS_KEY].",
)
@click.option(
    "--region",
    default=None,
    help="The servers' CASSIEQ_SQS_REGION (default: this environment's setting).",
)
@click.option("--groups", type=click.IntRange(1), default=20, show_default=True)
@click.option("--per-group", type=click.IntRange(1), default=200, show_default=True)
@click.option("--consumers", type=click.IntRange(1), default=8, show_default=True)
@click.option(
    "--expire-fraction",
    type=click.FloatRange(0, 1),
    default=0.05,
    show_default=True,
    help="Share of first deliveries left unacked, for their lease to run out.",
)
@click.option(
    "--retry-fraction",
    type=click.FloatRange(0, 1),
    default=0.05,
    show_default=True,
    help="Share of sends sent again with the same MessageDeduplicationId.",
)
@click.option(
    "--visibility",
    type=click.IntRange(1, 43200),
    default=5,
    show_default=True,
    help="Every receive's VisibilityTimeout, seconds.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=600.0,
    show_default=True,
    help="Seconds from the first send; the run stops there if not every message was acked.",
)
@click.option(
    "--rate",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Sends per second, all groups together (default: as fast as they answer).",
)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option(
    "--servers",
    type=click.IntRange(1, 8),
    default=2,
    show_default=True,
    help="Without --endpoint: `cassieq serve` processes to start.",
)
@click.option(
    "--keyspace",
    default="cassieq_fifo_check",
    show_default=True,
    help="Without --endpoint: dropped, re-created and dropped again by the run.",
)
@click.option(
    "--events",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write every send and delivery to FILE (JSON lines), for --check-events.",
)
@click.option(
    "--check-events",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="Run no workload: judge the events a run wrote with --events.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def fifo_check(
    endpoints: tuple[str, ...],
    account: str | None,
    key: str | None,
    region: str | None,
    groups: int,
    per_group: int,
    consumers: int,
    expire_fraction: float,
    retry_fraction: float,
    visibility: int,
    timeout: float,
    rate: float | None,
    seed: int,
    servers: int,
    keyspace: str,
    events: Path | None,
    check_events: Path | None,
    as_json: bool,
) -> None:
    """A FIFO queue through boto3: groups sent in order, consumers that leave some leases to
    expire, and a check of every delivery.

    Prints per run: LOST, DOUBLE-in-lease, ORDER and INFLIGHT violations, DUP stored (and the
    figures behind them, per group in --json). Exits 1 on any violation, a timeout or a
    harness error.
    """
    import asyncio
    import json

    from cassieq.logs import configure_logging
    from cassieq.tools.fifo.report import figures
    from cassieq.tools.fifo.run import run_check, run_local
    from cassieq.tools.fifo.workload import Credentials, Shape

    configure_logging("console", "warning")
    if check_events is not None:
        result = _judge(check_events)
    else:
        shape = Shape(
            groups=groups,
            per_group=per_group,
            consumers=consumers,
            expire_fraction=expire_fraction,
            retry_fraction=retry_fraction,
            visibility=visibility,
            timeout=timeout,
            rate=rate,
            seed=seed,
        )
        settings = Settings.from_env()
        if endpoints:
            if not account or not key:
                raise click.UsageError("--endpoint needs --account and --key")
            creds = Credentials(
                endpoints=endpoints,
                access_key=account,
                secret_key=key,
                region=region or settings.sqs_region,
            )
            result = run_check(creds, shape, _err, events=events)
        else:
            result = asyncio.run(
                run_local(
                    settings,
                    keyspace=keyspace,
                    servers=servers,
                    shape=shape,
                    say=_err,
                    events=events,
                )
            )
    click.echo(json.dumps(result, indent=2) if as_json else figures(result))
    if not result["ok"]:
        sys.exit(1)


def _judge(path: Path) -> dict[str, object]:
    from cassieq.tools.fifo.checker import VIOLATIONS, check
    from cassieq.tools.fifo.events import read_jsonl

    result = check(read_jsonl(path)).summary()
    failures = [f"{VIOLATIONS[k]} {result[k]}" for k in VIOLATIONS if result[k]]
    result["ok"], result["failures"] = not failures, failures
    result["run"] = {"events": str(path)}
    return result
