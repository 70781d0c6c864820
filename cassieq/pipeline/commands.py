"""``cassieq pipeline``: the Spark jobs from the command line.

Each job is also a module for spark-submit (``python -m cassieq.pipeline.stats`` or
``spark-submit --jars "$(cassieq pipeline jars)" <path of cassieq/pipeline/stats.py>``).
Progress goes to stderr; ``--json`` prints results and a summary on stdout.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click
import msgspec

from cassieq.auth.signing import BadTime, parse_time
from cassieq.config import Settings
from cassieq.model_subscriptions import ms_rounded_up

if TYPE_CHECKING:
    from cassieq.pipeline.progress import Progress
    from cassieq.pipeline.store_access import StoreAccess

F = TypeVar("F", bound=Callable[..., Any])


def _err(message: str) -> None:
    click.echo(message, err=True)


def _common(fn: F) -> F:
    fn = click.option(
        "--master", default=None, help="Spark master URL (default local[*], or spark-submit's)."
    )(fn)
    fn = click.option(
        "--keyspace", default=None, help="Keyspace ($CASSIEQ_KEYSPACE, default cassieq)."
    )(fn)
    fn = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(fn)
    fn = click.option(
        "--quiet", is_flag=True, help="No progress and no Spark log lines on stderr (errors stay)."
    )(fn)
    return fn


@click.group()
def pipeline() -> None:
    """Batch jobs on Spark: stats, export, ingest (needs the `pipeline` extra)."""


@pipeline.command("jars")
def jars() -> None:
    """Print the Spark Cassandra connector's jars, comma-separated (for spark-submit --jars)."""
    from cassieq.pipeline.spark import connector_jars

    with _errors():
        click.echo(",".join(str(j) for j in connector_jars(log=_err)))


@pipeline.command("stats")
@click.option("--account", default=None, help="Only this account's queues.")
@click.option("--queue", default=None, help="Only this queue (needs --account).")
@click.option("--no-write", is_flag=True, help="Do not write snapshots to queue_stats.")
@_common
def stats(
    account: str | None,
    queue: str | None,
    no_write: bool,
    master: str | None,
    keyspace: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Statistics of one queue, an account's queues, or all: printed and kept as snapshots.

    --json prints one JSON object per queue (published, acked, dead_lettered, in_flight,
    backlog, delivery_count_histogram, oldest_unacked_age_s, ack_latency_ms, ...).
    """
    from cassieq.pipeline import stats as job

    with _errors(), _store(keyspace) as access:
        queues = access.select_queues(account, queue)  # before Spark: a typo fails at once
        with _spark("stats", access.settings, master, quiet) as (spark, progress):
            now = int(time.time() * 1000)
            snapshots = job.run(spark, access, queues, now, write=not no_write, progress=progress)
            seconds = progress.elapsed()
    if as_json:
        for snapshot in snapshots:
            click.echo(job.encode(snapshot))
        return
    _table(
        ["queue", "published", "acked", "dead", "in flight", "backlog", "oldest s", "p50/p99 ms"],
        [
            [
                f"{s.queue.account}/{s.queue.queue}",
                s.published,
                s.acked,
                s.dead_lettered,
                s.in_flight,
                s.backlog,
                _num(s.oldest_unacked_age_s),
                f"{_num(s.ack_latency_p50_ms)}/{_num(s.ack_latency_p99_ms)}",
            ]
            for s in snapshots
        ],
    )
    click.echo(f"{len(snapshots)} queue(s) in {seconds:.1f} s")


@pipeline.command("export")
@click.option("--account", required=True)
@click.option("--queue", required=True)
@click.option("--out", required=True, help="Output directory (Parquet).")
@click.option("--only-acked", is_flag=True, help="Only messages acked by a consumer.")
@click.option("--buckets", default=None, metavar="FIRST:LAST", help="Only these buckets.")
@click.option(
    "--since",
    default=None,
    metavar="TIME",
    help="Sent at or after (RFC 3339, e.g. 2026-11-27T09:00:00Z; UTC if no offset).",
)
@click.option("--until", default=None, metavar="TIME", help="Sent before (as --since).")
@click.option(
    "--from-subscription",
    default=None,
    metavar="NAME",
    help="Only what this subscription has not read yet (from its committed position; "
    "not with --since).",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing output directory.")
@_common
def export(
    account: str,
    queue: str,
    out: str,
    only_acked: bool,
    buckets: str | None,
    since: str | None,
    until: str | None,
    from_subscription: str | None,
    overwrite: bool,
    master: str | None,
    keyspace: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Export a queue's messages to Parquet (an archive; ingest reads it back).

    --from-subscription NAME starts where that subscription of the queue reads next: per
    partition, the messages at or after its committed position, as an ordered read would
    give them (a late write at its original place, never its repair copy).
    """
    from cassieq.pipeline import export as job

    if since is not None and from_subscription is not None:
        # Two starts: which one wins would be a guess.
        raise click.UsageError("give --since or --from-subscription, not both")
    first, last = _bucket_range(buckets)
    flt = job.ExportFilter(
        only_acked=only_acked,
        first_bucket=first,
        last_bucket=last,
        since_ms=_time_ms(since, "--since"),
        until_ms=_time_ms(until, "--until"),
    )
    with _errors(), _store(keyspace) as access:
        definition = access.queue(account, queue)
        if from_subscription is not None:
            start = access.subscription_start(definition, from_subscription)
            flt = dataclasses.replace(flt, from_position=start)
        if not overwrite:
            job.refuse_existing(out)
        with _spark("export", access.settings, master, quiet) as (spark, progress):
            rows = job.run(
                spark, access, definition, out, flt, overwrite=overwrite, progress=progress
            )
            seconds = progress.elapsed()
    _summary("export", rows, seconds, as_json, out=out)


@pipeline.command("ingest")
@click.option("--account", required=True)
@click.option("--queue", required=True)
@click.option("--input", "source", required=True, help="A Parquet or JSON Lines file or dir.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "jsonl"]),
    default=None,
    help="Input format (default: from the name; .jsonl/.json are JSON Lines).",
)
@_common
def ingest(
    account: str,
    queue: str,
    source: str,
    fmt: str | None,
    master: str | None,
    keyspace: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Load messages into a queue: each task reserves its monotons with one LWT."""
    from cassieq.pipeline import ingest as job

    chosen = fmt or ("jsonl" if re.search(r"\.jsonl?$", source) else "parquet")
    with _errors(), _store(keyspace) as access:
        definition = access.queue(account, queue)
        with _spark("ingest", access.settings, master, quiet) as (spark, progress):
            result = job.run(
                spark,
                access.settings,
                definition,
                source,
                "jsonl" if chosen == "jsonl" else "parquet",
                progress=progress,
            )
            seconds = progress.elapsed()
    _summary(
        "ingest",
        result.rows,
        seconds,
        as_json,
        reservations=result.reservations,
        batches=result.batches,
    )


# --------------------------------------------------------------------------- helpers


@contextmanager
def _store(keyspace: str | None) -> Iterator[StoreAccess]:
    """The store, opened before Spark starts: what a job names (an account, a queue) is
    looked up first, so a typo fails in a second, not after Spark's start."""
    from cassandra import InvalidRequest

    from cassieq.pipeline.spark import PipelineError
    from cassieq.pipeline.store_access import StoreAccess

    settings = Settings.from_env(keyspace=keyspace)
    try:
        access = StoreAccess(settings)
    except InvalidRequest as exc:
        # The store prepares its statements at once: a keyspace (or --keyspace typo)
        # without cassieq's tables fails here, in the driver's words (code=2200).
        raise PipelineError(
            f"keyspace {settings.keyspace!r} has no cassieq schema (the keyspace or its "
            f"tables do not exist): check --keyspace / CASSIEQ_KEYSPACE, or create it with "
            f"`cassieq schema apply --keyspace {settings.keyspace}`"
        ) from exc
    with access:
        yield access


@contextmanager
def _spark(
    name: str, settings: Settings, master: str | None, quiet: bool
) -> Iterator[tuple[Any, Progress]]:
    from cassieq.pipeline.progress import Progress
    from cassieq.pipeline.spark import session

    progress = Progress(name, enabled=not quiet)
    progress.phase("starting Spark")
    spark = session(
        settings,
        master=master,
        app_name=f"cassieq-{name}",
        log=_err,
        log_level="OFF" if quiet else "WARN",
    )
    progress.watch(spark.sparkContext)
    try:
        yield spark, progress
    finally:
        progress.close()


@contextmanager
def _errors() -> Iterator[None]:
    """One line on stderr and exit 1 for what a user can fix; no JVM stack traces."""
    from cassieq.pipeline.spark import PipelineError

    try:
        yield
    except (PipelineError, ValueError) as exc:  # connector_jars wraps mvn's errors too
        raise click.ClickException(str(exc).splitlines()[0] if str(exc) else repr(exc)) from exc
    except Exception as exc:
        # A task's PipelineError reaches the driver inside Spark's own exception.
        found = re.search(r"PipelineError: (.*)", str(exc))
        if found:
            raise click.ClickException(found.group(1)) from exc
        if type(exc).__name__ in {"AnalysisException", "Py4JJavaError", "PythonException"}:
            raise click.ClickException(_first_line(exc)) from exc
        raise


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


def _summary(job: str, rows: int, seconds: float, as_json: bool, **extra: Any) -> None:
    rate = rows / seconds if seconds > 0 else 0.0
    if as_json:
        body = {"job": job, "rows": rows, "seconds": round(seconds, 3)}
        body |= {"rows_per_s": round(rate, 1), **extra}
        click.echo(msgspec.json.encode(body))
    else:
        more = "".join(f", {k} {v}" for k, v in extra.items())
        click.echo(f"{job}: {rows} rows in {seconds:.1f} s ({rate:.0f} rows/s{more})")


def _bucket_range(text: str | None) -> tuple[int | None, int | None]:
    if text is None:
        return None, None
    found = re.fullmatch(r"(\d+)?:(\d+)?", text)
    if not found:
        raise click.BadParameter("expected FIRST:LAST, e.g. 0:99 or 100:", param_hint="--buckets")
    first, last = (None if g is None else int(g) for g in found.groups())
    if first is not None and last is not None and last < first:
        raise click.BadParameter(f"{last} is before {first}", param_hint="--buckets")
    return first, last


def _time_ms(text: str | None, option: str) -> int | None:
    """Milliseconds since the epoch, rounded up as v2's times are: sends are stamped in
    milliseconds, and "at or after 09:00:00.0005" must not take one stamped 09:00:00.000."""
    if text is None:
        return None
    try:
        parsed = parse_time(text)  # naive times are UTC
    except BadTime as exc:
        raise click.BadParameter(
            f"not an RFC 3339 time such as 2026-11-27T09:00:00Z: {text!r}", param_hint=option
        ) from exc
    return ms_rounded_up(parsed)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _table(head: list[str], rows: list[list[Any]]) -> None:
    cells = [head, *[[str(c) for c in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    for r in cells:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def run_module(command: click.Command) -> None:
    """Entry of ``python -m cassieq.pipeline.<job>`` and of spark-submit."""
    command.main(args=sys.argv[1:], prog_name=f"cassieq pipeline {command.name}")
