"""``cassieq bench driver``: a request's cost in the store's driver and in a native one."""

from __future__ import annotations

import click

from cassieq.cli.common import err as _err
from cassieq.config import Settings


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--clients", type=click.IntRange(1, 256), default=32, show_default=True)
@click.option(
    "--seconds",
    type=click.FloatRange(0.1, 600),
    default=5.0,
    show_default=True,
    help="Per request kind and driver.",
)
@click.option(
    "--keyspace",
    default="cassieq_bench_driver",
    show_default=True,
    help="Dropped and re-created by every run.",
)
def driver(as_json: bool, clients: int, seconds: float, keyspace: str) -> None:
    """CPU per request and requests/s of a read, an LWT and a conditional batch of 10 rows,
    through cassandra-driver as the store sends them and through acsylla (the C++ driver),
    in one process on the server's event loop, against the configured node."""
    import json

    from cassieq.api.http.event_loop import run
    from cassieq.logs import configure_logging
    from cassieq.tools.bench.drivers import DriverBenchError, drivers_table, run_drivers

    configure_logging("console", "warning")
    try:
        result = run(
            run_drivers(
                Settings.from_env(),
                keyspace=keyspace,
                clients=clients,
                seconds=seconds,
                say=_err,
            )
        )
    except DriverBenchError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(result, indent=2) if as_json else drivers_table(result))
