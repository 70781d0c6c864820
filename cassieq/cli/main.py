"""The ``cassieq`` command: server entry points and developer tooling."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from cassieq.cli.bench import bench
from cassieq.cli.cassandra import cassandra, schema
from cassieq.cli.fifo_check import fifo_check
from cassieq.cli.server import dev, openapi, secrets_group, serve


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cassieq")
def cli() -> None:
    """cassieq: a message queue on Apache Cassandra.

    Server and tooling: dev, serve, cassandra, schema, secrets, openapi, pipeline (Spark
    jobs).
    Client commands (they talk to a server over HTTP): account, key, queue, get, ack,
    update, stats, grant (v1); put, receive, drain, peek, purge, redrive (v2, in batches);
    subscription, read, seek (v2: a queue's messages read again by position).
    """


for _command in (cassandra, schema, dev, serve, secrets_group, openapi, bench, fifo_check):
    cli.add_command(_command)


def main(args: Sequence[str] | None = None, prog_name: str | None = None) -> None:
    """The command line (``args`` and ``prog_name`` default, as click's do, to sys.argv and
    the name it was run by: the tests give both to run a command in their own process)."""
    from cassieq.cli.client.commands import COMMANDS

    for command in COMMANDS:
        cli.add_command(command)
    # pyspark is imported only when a job runs: the group is there without the extra.
    from cassieq.pipeline.commands import pipeline

    cli.add_command(pipeline)
    from cassieq.tools.chaos.command import chaos

    cli.add_command(chaos)
    try:
        cli(args, prog_name=prog_name)
    except Exception as exc:
        if not isinstance(exc, _user_errors()):
            raise
        # A bad setting, an unreadable file, an unreachable or unprepared Cassandra: the
        # person at the terminal gets one line, not a traceback.
        click.echo(f"Error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(1)


def _user_errors() -> tuple[type[Exception], ...]:
    import httpx
    from cassandra import DriverException

    from cassieq.store.cassandra import CassandraUnavailable, SchemaError

    return (
        ValueError,
        OSError,
        httpx.InvalidURL,
        DriverException,
        CassandraUnavailable,
        SchemaError,
    )
