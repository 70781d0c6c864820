"""The ``cassieq`` command: server entry points and developer tooling."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from cassieq.config import Settings


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cassieq")
def cli() -> None:
    """cassieq: a message queue on Apache Cassandra.

    Server and tooling: dev, serve, cassandra, schema, openapi, pipeline (Spark jobs).
    Client commands (they talk to a server over HTTP): account, key, queue, put, get, ack,
    update, drain, stats, grant.
    """


# --------------------------------------------------------------------------- cassandra


@cli.group()
def cassandra() -> None:
    """Run a local single-node Apache Cassandra for development and tests."""


@cassandra.command("start")
@click.option(
    "--port", type=int, default=None, help="CQL port (default 9042 or $CASSIEQ_CASSANDRA_PORT)."
)
@click.option("--version", "version", default=None, help="Cassandra 5.0.x version, or 'latest'.")
def cassandra_start(port: int | None, version: str | None) -> None:
    """Fetch (once), start and wait for the node; reuse it when already running."""
    from cassieq.devtools import cassandra as tool

    cfg = tool.NodeConfig.from_env(native_port=port)
    if version == "latest":
        version = tool.resolve_latest_version(cfg.home)
    cfg = tool.NodeConfig.from_env(native_port=port, version=version)
    try:
        seconds = tool.start(cfg, log=_err)
        status = tool.node_status(cfg)
    except tool.CassandraToolError as exc:
        raise click.ClickException(str(exc)) from exc
    took = f", ready in {seconds:.1f} s" if seconds else ", already running"
    pid = f"pid {status.pid}" if status.pid else "not started by cassieq"
    click.echo(
        f"Apache Cassandra {status.version} ready on {cfg.host}:{cfg.native_port} ({pid}{took})"
    )


@cassandra.command("stop")
@click.option("--port", type=int, default=None, help="CQL port of the node to stop.")
def cassandra_stop(port: int | None) -> None:
    """Stop the node that `cassieq cassandra start` started (never another process)."""
    from cassieq.devtools import cassandra as tool

    tool.stop(tool.NodeConfig.from_env(native_port=port), log=click.echo)


@cassandra.command("status")
@click.option("--port", type=int, default=None, help="CQL port of the node.")
def cassandra_status(port: int | None) -> None:
    """Say whether a node runs; exit 3 when none answers."""
    from cassieq.devtools import cassandra as tool

    cfg = tool.NodeConfig.from_env(native_port=port)
    st = tool.node_status(cfg)
    if not st.reachable:
        click.echo(f"not running on {cfg.host}:{cfg.native_port}")
        sys.exit(3)
    owner = f"pid {st.pid}, started by cassieq" if st.owned else "not started by cassieq"
    click.echo(f"Apache Cassandra {st.version} on {cfg.host}:{cfg.native_port} ({owner})")


# --------------------------------------------------------------------------- schema


@cli.group()
def schema() -> None:
    """Create and migrate the cassieq keyspace."""


@schema.command("apply")
@click.option(
    "--hosts", default=None, help="Comma-separated contact points ($CASSIEQ_CASSANDRA_HOSTS)."
)
@click.option("--port", type=int, default=None, help="CQL port ($CASSIEQ_CASSANDRA_PORT).")
@click.option("--keyspace", default=None, help="Keyspace ($CASSIEQ_KEYSPACE, default cassieq).")
@click.option("--replication", default=None, help="CQL replication map ($CASSIEQ_REPLICATION).")
@click.option("--schema-dir", type=click.Path(path_type=Path, exists=True), default=None)
@click.option(
    "--recreate",
    is_flag=True,
    help="Drop the keyspace first (test runs start empty). Destroys all its data.",
)
def schema_apply(
    hosts: str | None,
    port: int | None,
    keyspace: str | None,
    replication: str | None,
    schema_dir: Path | None,
    recreate: bool,
) -> None:
    """Apply schema/cassandra/NNNN_*.cql in order; re-applying is harmless."""
    from cassieq.store import cassandra as cql

    settings = Settings.from_env(
        cassandra_hosts=hosts.split(",") if hosts else None,
        cassandra_port=port,
        keyspace=keyspace,
        replication=replication,
    )
    try:
        cluster, session = cql.connect(settings.cassandra_hosts, settings.cassandra_port)
    except cql.CassandraUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        if recreate:
            cql.drop_keyspace(session, settings.keyspace)
        applied = cql.apply_schema(
            session, settings.keyspace, settings.replication, schema_dir or cql.default_schema_dir()
        )
    except cql.SchemaError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        cluster.shutdown()
    done = ", ".join(applied) if applied else "nothing new"
    click.echo(f"schema of keyspace {settings.keyspace} is up to date (applied: {done})")


# --------------------------------------------------------------------------- servers


@cli.command()
@click.option("--host", default=None, help="Bind address (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="HTTP port (default 8080).")
@click.option(
    "--cassandra",
    "use_cassandra",
    is_flag=True,
    help="Use the local Cassandra node (started if needed, schema applied) instead of memory.",
)
@click.option(
    "--admin-token", default=None, help="Operator token ($CASSIEQ_ADMIN_TOKEN; default: random)."
)
@click.option(
    "--dev-key", default=None, help="Primary key of the 'dev' account ($CASSIEQ_DEV_KEY)."
)
def dev(
    host: str | None,
    port: int | None,
    use_cassandra: bool,
    admin_token: str | None,
    dev_key: str | None,
) -> None:
    """Run a development server with an account 'dev' (memory store unless --cassandra)."""
    import asyncio
    import os
    import secrets

    from cassieq.engine.accounts import new_key

    token = admin_token or os.environ.get("CASSIEQ_ADMIN_TOKEN") or secrets.token_urlsafe(24)
    settings = Settings.from_env(host=host, port=port, admin_token=token)
    store = _dev_cassandra_store(settings) if use_cassandra else _memory_store()
    primary = dev_key or os.environ.get("CASSIEQ_DEV_KEY") or new_key()

    async def ensure_dev_account() -> dict[str, str]:
        from cassieq.engine import QueueEngine
        from cassieq.engine.errors import AccountExists

        accounts = QueueEngine(store).accounts
        try:
            created = await accounts.create("dev", {"primary": primary, "secondary": new_key()})
        except AccountExists:
            return (await accounts.get("dev")).keys
        return created.keys

    keys = asyncio.run(ensure_dev_account())
    url = f"http://{settings.host}:{settings.port}"
    click.echo(f"cassieq dev server on {url} ({'Cassandra' if use_cassandra else 'memory'} store)")
    click.echo("account: dev")
    for name, key in sorted(keys.items()):
        click.echo(f"key {name}: {key}")
    click.echo(f"operator token: {token}")
    click.echo(f"Swagger UI: {url}/schema/swagger")
    _serve(settings, store)


@cli.command()
def serve() -> None:
    """Run the production server on Cassandra, configured by CASSIEQ_* variables."""
    from cassieq.store.cassandra import CassandraStore, CassandraUnavailable

    settings = Settings.from_env()
    try:
        _, store = CassandraStore.from_settings(settings)
    except CassandraUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    _serve(settings, store)


@cli.command()
@click.option(
    "--output",
    type=click.Path(path_type=Path),
    default=Path("api_spec/openapi.json"),
    show_default=True,
)
@click.option(
    "--client-dir",
    type=click.Path(path_type=Path),
    default=Path("api_spec/client"),
    show_default=True,
)
@click.option("--check", is_flag=True, help="Exit 1 when the spec or the client is stale.")
def openapi(output: Path, client_dir: Path, check: bool) -> None:
    """Write the OpenAPI document generated from the app, and the client generated from it."""
    from cassieq.devtools import client

    text = openapi_document()
    try:
        if check:
            if not output.exists() or output.read_text() != text:
                raise click.ClickException(f"{output} is stale: run `cassieq openapi`")
            stale = client.stale_files(output, client_dir)
            if stale:
                raise click.ClickException(
                    f"the client in {client_dir} is stale ({', '.join(stale[:5])}): "
                    "run `cassieq openapi`"
                )
            click.echo(f"{output} and {client_dir} are up to date")
            return
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text)
        client.regenerate(output, client_dir)
    except client.ClientGenerationError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"wrote {output} and {client_dir / client.PACKAGE}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--clients", default="1,8,32", show_default=True, help="Concurrencies to measure.")
@click.option("--seconds", type=float, default=5.0, show_default=True, help="Per measurement.")
@click.option("--backlog", type=int, default=100_000, show_default=True)
@click.option(
    "--keyspace",
    default="cassieq_bench",
    show_default=True,
    help="Dropped and re-created by every run: give it a keyspace of its own.",
)
@click.option("--no-http", is_flag=True, help="Skip the HTTP API measurements.")
def bench(
    as_json: bool, clients: str, seconds: float, backlog: int, keyspace: str, no_http: bool
) -> None:
    """Measure the engine and the HTTP API against the LWT ceiling (real Cassandra)."""
    import asyncio
    import json

    from cassieq.bench.report import table
    from cassieq.bench.run import run_bench
    from cassieq.logs import configure_logging

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
        )
    )
    click.echo(json.dumps(result, indent=2) if as_json else table(result))


def openapi_document() -> str:
    import json

    from cassieq.api.app import create_app

    app = create_app(Settings(), _memory_store(), background=False)
    from litestar.serialization import encode_json

    schema = json.loads(encode_json(app.openapi_schema.to_schema()))
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def _memory_store() -> Any:
    from cassieq.store.memory import MemoryStore

    return MemoryStore()


def _dev_cassandra_store(settings: Settings) -> Any:
    from cassieq.devtools import cassandra as tool
    from cassieq.store.cassandra import CassandraStore, apply_schema, connect, default_schema_dir

    cfg = tool.NodeConfig.from_env(native_port=settings.cassandra_port)
    try:
        tool.start(cfg, log=_err)
    except tool.CassandraToolError as exc:
        raise click.ClickException(str(exc)) from exc
    _cluster, session = connect([cfg.host], cfg.native_port)
    apply_schema(session, settings.keyspace, settings.replication, default_schema_dir())
    return CassandraStore(session, settings.keyspace)


def _serve(settings: Settings, store: Any) -> None:
    import uvicorn

    from cassieq.api.app import create_app
    from cassieq.logs import configure_logging

    configure_logging(settings.log_format, settings.log_level)
    app = create_app(settings, store)
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        access_log=False,  # request logs would carry signed query strings
        timeout_graceful_shutdown=10,
    )


def _err(message: str) -> None:
    click.echo(message, err=True)


def main() -> None:
    from cassieq.console.commands import COMMANDS

    for command in COMMANDS:
        cli.add_command(command)
    # pyspark is imported only when a job runs: the group is there without the extra.
    from cassieq.pipeline.cli import pipeline

    cli.add_command(pipeline)
    try:
        cli()
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
