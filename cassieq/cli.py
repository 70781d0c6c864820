"""The ``cassieq`` command: server entry points and developer tooling."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import click

from cassieq.config import LogFormat, LogLevel, Settings

# The shortest operator token or receipt secret `cassieq serve` accepts.
MIN_SECRET_LENGTH = 32

if TYPE_CHECKING:
    from cassieq.devtools.cluster import ClusterConfig
    from cassieq.engine import QueueEngine


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cassieq")
def cli() -> None:
    """cassieq: a message queue on Apache Cassandra.

    Server and tooling: dev, serve, cassandra, schema, secrets, openapi, pipeline (Spark
    jobs).
    Client commands (they talk to a server over HTTP): account, key, queue, get, ack,
    update, stats, grant (v1); put, receive, drain, peek, purge, redrive (v2, in batches).
    """


# --------------------------------------------------------------------------- cassandra


@cli.group()
def cassandra() -> None:
    """Run a local Apache Cassandra for development and tests: the single dev node on
    127.0.0.1, or (--nodes 3) a three-node cluster on 127.0.0.2-4."""


_NODES = click.option(
    "--nodes",
    type=click.IntRange(min=1),
    default=None,
    help="1 (default): the single dev node; N: the local cluster of N nodes.",
)
_HOSTS = click.option(
    "--hosts",
    default=None,
    help="Cluster node addresses, comma-separated (default 127.0.0.2,127.0.0.3,127.0.0.4 "
    "or $CASSIEQ_CLUSTER_HOSTS); implies the cluster.",
)
_PORT = click.option(
    "--port",
    type=int,
    default=None,
    help="CQL port (default 9042, or $CASSIEQ_CASSANDRA_PORT / $CASSIEQ_CLUSTER_PORT).",
)


@cassandra.command("start")
@_NODES
@_HOSTS
@_PORT
@click.option("--version", "version", default=None, help="Cassandra 5.0.x version, or 'latest'.")
def cassandra_start(
    nodes: int | None, hosts: str | None, port: int | None, version: str | None
) -> None:
    """Fetch (once), start and wait for the node(s); reuse what already runs."""
    from cassieq.devtools import cassandra as tool

    if version == "latest":
        version = tool.resolve_latest_version(tool.NodeConfig.from_env().home)
    ring = _cluster_config(nodes, hosts, port, version)
    if ring is not None:
        _cluster_start(ring)
        return
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
@_NODES
@_HOSTS
@click.option("--port", type=int, default=None, help="CQL port of the node(s) to stop.")
def cassandra_stop(nodes: int | None, hosts: str | None, port: int | None) -> None:
    """Stop what `cassieq cassandra start` started (never another process)."""
    from cassieq.devtools import cassandra as tool
    from cassieq.devtools import cluster

    ring = _cluster_config(nodes, hosts, port)
    if ring is not None:
        cluster.stop_cluster(ring, log=click.echo)
        return
    tool.stop(tool.NodeConfig.from_env(native_port=port), log=click.echo)


@cassandra.command("status")
@_NODES
@_HOSTS
@click.option("--port", type=int, default=None, help="CQL port of the node(s).")
def cassandra_status(nodes: int | None, hosts: str | None, port: int | None) -> None:
    """Say whether the node (each cluster node) runs; exit 3 when one does not answer."""
    from cassieq.devtools import cassandra as tool

    ring = _cluster_config(nodes, hosts, port)
    if ring is not None:
        _cluster_status(ring)
        return
    cfg = tool.NodeConfig.from_env(native_port=port)
    st = tool.node_status(cfg)
    if not st.reachable:
        click.echo(f"not running on {cfg.host}:{cfg.native_port}")
        sys.exit(3)
    owner = f"pid {st.pid}, started by cassieq" if st.owned else "not started by cassieq"
    click.echo(f"Apache Cassandra {st.version} on {cfg.host}:{cfg.native_port} ({owner})")


@cassandra.command("kill")
@click.argument("node", type=int)
@_HOSTS
@click.option("--port", type=int, default=None, help="CQL port of the cluster nodes.")
def cassandra_kill(node: int, hosts: str | None, port: int | None) -> None:
    """SIGKILL cluster node NODE (1-based; a crash, no shutdown) by its pid file."""
    from cassieq.devtools import cluster

    ring = _cluster_node(node, hosts, port)
    try:
        pid = cluster.kill_node(ring, node)
    except cluster.CassandraToolError as exc:
        raise click.ClickException(f"cannot kill node {node}: {exc}") from exc
    click.echo(f"killed node {node} ({ring.hosts[node - 1]}:{ring.native_port}, pid {pid})")


@cassandra.command("restart")
@click.argument("node", type=int)
@_HOSTS
@click.option("--port", type=int, default=None, help="CQL port of the cluster nodes.")
def cassandra_restart(node: int, hosts: str | None, port: int | None) -> None:
    """Start cluster node NODE again on its data (stopping it first if it runs); wait until
    it serves CQL and the other live nodes' gossip shows it UP (and it them)."""
    from cassieq.devtools import cluster

    ring = _cluster_node(node, hosts, port)
    try:
        seconds = cluster.restart_node(ring, node, log=_err)
    except cluster.CassandraToolError as exc:
        raise click.ClickException(f"cannot restart node {node}: {exc}") from exc
    where = f"{ring.hosts[node - 1]}:{ring.native_port}"
    click.echo(f"node {node} back on {where}, seen UP by the live nodes, in {seconds:.1f} s")


def _cluster_config(
    nodes: int | None, hosts: str | None, port: int | None, version: str | None = None
) -> ClusterConfig | None:
    from cassieq.devtools import cluster

    try:
        return cluster.from_options(nodes, hosts, port, version)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc


def _cluster_node(node: int, hosts: str | None, port: int | None) -> ClusterConfig:
    from cassieq.devtools import cluster

    try:
        ring = cluster.ClusterConfig.from_env(hosts=hosts, native_port=port)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    if node not in ring.numbers:
        raise click.ClickException(f"no node {node}: the cluster has nodes 1..{len(ring.hosts)}")
    return ring


def _cluster_start(ring: ClusterConfig) -> None:
    from cassieq.devtools import cluster

    try:
        seconds = cluster.start_cluster(ring, log=_err)
        statuses = cluster.cluster_status(ring)
    except cluster.CassandraToolError as exc:
        raise click.ClickException(f"the cluster did not start: {exc}") from exc
    for n, st in zip(ring.numbers, statuses, strict=True):
        click.echo(
            f"node {n}: Apache Cassandra {st.version} on {ring.hosts[n - 1]}:"
            f"{ring.native_port} (pid {st.pid})"
        )
    took = f"ready in {seconds:.1f} s" if seconds else "already running"
    rf = min(3, len(ring.hosts))
    click.echo(f"cluster of {len(ring.hosts)} nodes {took}; replication {ring.replication(rf)}")


def _cluster_status(ring: ClusterConfig) -> None:
    from cassieq.devtools import cluster

    down = 0
    for n, st in zip(ring.numbers, cluster.cluster_status(ring), strict=True):
        where = f"node {n} {ring.hosts[n - 1]}:{ring.native_port}"
        if not st.reachable:
            down += 1
            click.echo(f"{where}: not running")
            continue
        owner = f"pid {st.pid}, started by cassieq" if st.owned else "not started by cassieq"
        up = ", ".join(cluster.gossip_up(ring, n)) or "none"
        click.echo(f"{where}: Apache Cassandra {st.version} ({owner}); gossip shows UP: {up}")
    if down:
        sys.exit(3)


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

_LOG_FORMAT = click.option(
    "--log-format",
    type=click.Choice(get_args(LogFormat)),
    default=None,
    help="Log lines as text or JSON ($CASSIEQ_LOG_FORMAT, default console).",
)
_LOG_LEVEL = click.option(
    "--log-level",
    type=click.Choice(get_args(LogLevel)),
    default=None,
    help="($CASSIEQ_LOG_LEVEL, default info).",
)


@cli.command()
@click.option("--host", default=None, help="Bind address (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="HTTP port (default 8080).")
@click.option(
    "--admin-port",
    type=int,
    default=None,
    help="Port of the operator routes, open without a token from loopback (default 8081).",
)
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
@_LOG_FORMAT
@_LOG_LEVEL
def dev(
    host: str | None,
    port: int | None,
    admin_port: int | None,
    use_cassandra: bool,
    admin_token: str | None,
    dev_key: str | None,
    log_format: str | None,
    log_level: str | None,
) -> None:
    """Run a development server with an account 'dev' (memory store unless --cassandra)."""
    import asyncio
    import os
    import secrets

    import msgspec

    from cassieq.engine.accounts import new_key

    token = admin_token or os.environ.get("CASSIEQ_ADMIN_TOKEN") or secrets.token_urlsafe(32)
    settings = Settings.from_env(
        host=host,
        port=port,
        admin_token=token,
        admin_port=admin_port,
        log_format=log_format,
        log_level=log_level,
    )
    if problem := secret_length_problem(settings):
        # A dev server is for this machine: a short token is allowed, but said to be one.
        _err(f"warning: {problem} (accepted by `cassieq dev` only; `cassieq serve` refuses it)")
    if settings.admin_port is None:
        # Like CassieQ's dev image: the application on 8080, the admin routes on 8081.
        settings = msgspec.structs.replace(settings, admin_port=8081)
    store = _dev_cassandra_store(settings) if use_cassandra else _memory_store()
    primary = dev_key or os.environ.get("CASSIEQ_DEV_KEY") or new_key()

    async def ensure_dev_account() -> dict[str, str]:
        from cassieq.engine.errors import AccountExists

        accounts = _engine(settings, store).accounts
        try:
            created = await accounts.create("dev", {"primary": primary, "secondary": new_key()})
        except AccountExists:
            return (await accounts.get("dev")).keys
        return created.keys

    keys = asyncio.run(ensure_dev_account())
    url = f"http://{settings.host}:{settings.port}"
    admin_url = f"http://{settings.host}:{settings.admin_port}"
    click.echo(f"cassieq dev server on {url} ({'Cassandra' if use_cassandra else 'memory'} store)")
    click.echo(
        f"admin routes on {admin_url}/admin/api/v1 (no operator token needed from this machine)"
    )
    click.echo("account: dev")
    for name, key in sorted(keys.items()):
        click.echo(f"key {name}: {key}")
    click.echo(f"operator token: {token}")
    click.echo(f"Swagger UI: {url}/schema/swagger")
    _serve(settings, store, open_admin_port=True)


@cli.command()
@click.option("--host", default=None, help="Bind address ($CASSIEQ_HOST, default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="HTTP port ($CASSIEQ_PORT, default 8080).")
@click.option(
    "--admin-port",
    type=int,
    default=None,
    help="A second port serving the operator routes ($CASSIEQ_ADMIN_PORT; default none).",
)
@click.option(
    "--cassandra-hosts",
    default=None,
    help="Comma-separated contact points ($CASSIEQ_CASSANDRA_HOSTS, default 127.0.0.1).",
)
@click.option(
    "--cassandra-port", type=int, default=None, help="CQL port ($CASSIEQ_CASSANDRA_PORT)."
)
@click.option("--keyspace", default=None, help="($CASSIEQ_KEYSPACE, default cassieq).")
@_LOG_FORMAT
@_LOG_LEVEL
def serve(
    host: str | None,
    port: int | None,
    admin_port: int | None,
    cassandra_hosts: str | None,
    cassandra_port: int | None,
    keyspace: str | None,
    log_format: str | None,
    log_level: str | None,
) -> None:
    """Run the production server on Cassandra, configured by CASSIEQ_* variables; a flag
    wins over its variable. Secrets (tokens, keys) are read from the environment only: a
    command line is visible to every user of the machine."""
    from cassieq.auth.keyring import key_encryption_key
    from cassieq.store.cassandra import CassandraStore, CassandraUnavailable

    settings = serve_settings(
        None,
        host=host,
        port=port,
        admin_port=admin_port,
        cassandra_hosts=cassandra_hosts,
        cassandra_port=cassandra_port,
        keyspace=keyspace,
        log_format=log_format,
        log_level=log_level,
    )
    if problem := secret_length_problem(settings):
        raise click.ClickException(problem)
    key_encryption_key(settings.key_encryption_key)  # a malformed one: refused before connecting
    try:
        _, store = CassandraStore.from_settings(settings)
    except CassandraUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    _serve(settings, store)


def serve_settings(
    env: Mapping[str, str] | None, *, cassandra_hosts: str | None, **flags: Any
) -> Settings:
    """The settings of `cassieq serve`: its flags (None: not given) over the environment."""
    hosts = (
        [h.strip() for h in cassandra_hosts.split(",") if h.strip()] if cassandra_hosts else None
    )
    return Settings.from_env(env, cassandra_hosts=hosts, **flags)


def secret_length_problem(settings: Settings) -> str | None:
    """Why the configured operator token or receipt secret is too short to be safe, or None.

    Both are bearer secrets a remote attacker can test guesses against (the token online,
    a receipt secret offline from one receipt): shorter than MIN_SECRET_LENGTH characters,
    they may be guessed."""
    for variable, value in (
        ("CASSIEQ_ADMIN_TOKEN", settings.admin_token),
        ("CASSIEQ_RECEIPT_SECRET", settings.receipt_secret),
        ("CASSIEQ_RECEIPT_SECRET_PREVIOUS", settings.receipt_secret_previous),
    ):
        if value is not None and len(value) < MIN_SECRET_LENGTH:
            return (
                f"{variable} is {len(value)} characters long: use at least "
                f"{MIN_SECRET_LENGTH} random characters (e.g. `openssl rand -base64 32`)"
            )
    return None


def _engine(settings: Settings, store: Any) -> QueueEngine:
    """An engine on ``store`` that seals account keys as the server does."""
    from cassieq.auth.keyring import key_encryption_key
    from cassieq.engine import QueueEngine

    return QueueEngine(store, key_encryption_key=key_encryption_key(settings.key_encryption_key))


# --------------------------------------------------------------------------- secrets


@cli.group("secrets")
def secrets_group() -> None:
    """The keyspace's own secrets (used when CASSIEQ_RECEIPT_SECRET is unset)."""


@secrets_group.command("rotate-receipt")
@click.option(
    "--grace-seconds",
    type=click.IntRange(min=0),
    default=None,
    help="How long receipts signed with the replaced secret still verify "
    "($CASSIEQ_RECEIPT_SECRET_GRACE_SECONDS, default 86400; 0 after a leak).",
)
def secrets_rotate_receipt(grace_seconds: int | None) -> None:
    """Replace the keyspace's receipt signing secret with a new random one.

    Every server signs with the new one within a minute, and accepts one signed with it at
    once; receipts signed with the replaced one verify for --grace-seconds more. Rotating
    again within that window drops the secret before it."""
    import asyncio
    from datetime import UTC, datetime

    from cassieq.engine.keyspace_secrets import RECEIPT_SECRET
    from cassieq.store.cassandra import CassandraStore, CassandraUnavailable

    settings = Settings.from_env()
    grace = settings.receipt_secret_grace_seconds if grace_seconds is None else grace_seconds
    if grace < 0:
        raise click.ClickException("CASSIEQ_RECEIPT_SECRET_GRACE_SECONDS cannot be negative")
    try:
        cluster, store = CassandraStore.from_settings(settings)
    except CassandraUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        rotated = asyncio.run(_engine(settings, store).secrets.rotate(RECEIPT_SECRET, grace * 1000))
    finally:
        cluster.shutdown()
    until = datetime.fromtimestamp((rotated.previous_until or 0) / 1000, UTC)
    click.echo(
        f"receipt secret of keyspace {settings.keyspace} rotated (version {rotated.version}); "
        f"receipts signed with the previous one verify until {until:%Y-%m-%dT%H:%M:%SZ}"
    )
    if settings.receipt_secret:
        _err(
            "note: CASSIEQ_RECEIPT_SECRET is set here; servers configured with it sign with "
            "that, not with the keyspace's secret"
        )


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

    from cassieq.bench.report import table
    from cassieq.bench.run import run_bench
    from cassieq.bench.v2 import V2Settings
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


def _serve(settings: Settings, store: Any, *, open_admin_port: bool = False) -> None:
    from cassieq.api.app import create_app
    from cassieq.api.server import serve
    from cassieq.logs import configure_logging

    configure_logging(settings.log_format, settings.log_level)
    app = create_app(settings, store, open_admin_port=open_admin_port)
    serve(
        app,
        host=settings.host,
        port=settings.port,
        admin_port=settings.admin_port,
        log_level=settings.log_level,
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
    from cassieq.chaos.command import chaos

    cli.add_command(chaos)
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
