"""The server commands: ``dev``, ``serve``, ``secrets``, ``openapi``."""

from __future__ import annotations

import functools
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import click

from cassieq.cli.common import err as _err
from cassieq.cli.serving import connected
from cassieq.config import LogFormat, LogLevel, Settings

# The shortest operator token or receipt secret `cassieq serve` accepts.
MIN_SECRET_LENGTH = 32

if TYPE_CHECKING:
    from cassieq.api.workers import WorkerSlot
    from cassieq.engine import QueueEngine

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


@click.command()
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

    from cassieq.engine.tenancy.accounts import new_key

    token = admin_token or os.environ.get("CASSIEQ_ADMIN_TOKEN") or secrets.token_urlsafe(32)
    settings = Settings.from_env(
        host=host,
        port=port,
        admin_token=token,
        admin_port=admin_port,
        log_format=log_format,
        log_level=log_level,
    )
    # Before anything logs (the store's, the dev account's first events): every log line
    # in the chosen format, one timestamp style, on stderr; stdout keeps the banner.
    log = _configure_logging(settings)
    if problem := secret_length_problem(settings):
        # A dev server is for this machine: a short token is allowed, but said to be one.
        log.warning(
            "short_secret",
            detail=f"{problem} (accepted by `cassieq dev` only; `cassieq serve` refuses it)",
        )
    if settings.admin_port is None:
        # Like CassieQ's dev image: the application on 8080, the admin routes on 8081.
        settings = msgspec.structs.replace(settings, admin_port=8081)
    store = _dev_cassandra_store(settings, log) if use_cassandra else _memory_store()
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
    # Where the operator's pages are, and what each asks for (both ports serve both).
    click.echo(
        f"web console: {admin_url}/console (no login from this machine; "
        f"{url}/console asks for the operator token)"
    )
    click.echo(
        f"metrics: {admin_url}/metrics (open from this machine; "
        f"{url}/metrics wants the operator token)"
    )
    click.echo(f"Swagger UI: {url}/schema/swagger")
    _serve(settings, store, open_admin_port=True)


@click.command()
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
@click.option(
    "--workers",
    type=click.IntRange(1, 1024),
    default=None,
    help="Server processes on the port(s), each a full server ($CASSIEQ_WORKERS; default: "
    "the machine's cores).",
)
@_LOG_FORMAT
@_LOG_LEVEL
def serve(
    host: str | None,
    port: int | None,
    admin_port: int | None,
    cassandra_hosts: str | None,
    cassandra_port: int | None,
    keyspace: str | None,
    workers: int | None,
    log_format: str | None,
    log_level: str | None,
) -> None:
    """Run the production server on Cassandra, configured by CASSIEQ_* variables; a flag
    wins over its variable. Secrets (tokens, keys) are read from the environment only: a
    command line is visible to every user of the machine."""
    from cassieq.api.http.supervisor import supervise
    from cassieq.api.workers import default_workers
    from cassieq.auth.keyring import key_encryption_key, previous_key_encryption_keys

    settings = serve_settings(
        None,
        host=host,
        port=port,
        admin_port=admin_port,
        cassandra_hosts=cassandra_hosts,
        cassandra_port=cassandra_port,
        keyspace=keyspace,
        workers=workers,
        log_format=log_format,
        log_level=log_level,
    )
    _configure_logging(settings)  # the driver's warnings while connecting are log lines too
    if problem := secret_length_problem(settings):
        raise click.ClickException(problem)
    # A malformed one is refused before connecting.
    key_encryption_key(settings.key_encryption_key)
    previous_key_encryption_keys(settings.key_encryption_key_previous)
    count = settings.workers or default_workers()
    if count == 1:
        _serve(settings, _serving_store(settings))
        return
    # Checked once here (a missing schema is one error line, not one per worker, restarted
    # forever); each worker connects on its own.
    cluster, _store = connected(settings)
    cluster.shutdown()
    _warn_kek_in_keyspace(settings)
    status = supervise(
        functools.partial(_worker, settings),
        count=count,
        host=settings.host,
        port=settings.port,
        admin_port=settings.admin_port,
    )
    if status:
        raise SystemExit(status)


def _worker(settings: Settings, slot: WorkerSlot, sockets: list[socket.socket]) -> None:
    """One server process of `cassieq serve --workers N` (spawned by the supervisor)."""
    _configure_logging(settings)
    _serve(settings, _serving_store(settings), worker_slot=slot, sockets=sockets)


def _serving_store(settings: Settings) -> Any:
    return connected(settings)[1]


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
    from cassieq.auth.keyring import key_encryption_key, previous_key_encryption_keys
    from cassieq.engine import QueueEngine

    return QueueEngine(
        store,
        key_encryption_key=key_encryption_key(settings.key_encryption_key),
        previous_key_encryption_keys=previous_key_encryption_keys(
            settings.key_encryption_key_previous
        ),
    )


# --------------------------------------------------------------------------- secrets


@click.group("secrets")
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

    from cassieq.engine.tenancy.keyspace_secrets import RECEIPT_SECRET
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


@secrets_group.command("reseal-keys")
def secrets_reseal_keys() -> None:
    """Re-seal every account key under CASSIEQ_KEY_ENCRYPTION_KEY.

    Keys sealed under the keyspace's own key (servers without CASSIEQ_KEY_ENCRYPTION_KEY)
    or under one of CASSIEQ_KEY_ENCRYPTION_KEY_PREVIOUS are opened with it and stored under
    the current key. Servers do the same for each account they read; this does all at once,
    after which the earlier keys can be dropped from the servers' settings."""
    import asyncio

    from cassieq.store.cassandra import CassandraStore, CassandraUnavailable

    settings = Settings.from_env()
    if settings.key_encryption_key is None:
        raise click.ClickException(
            "CASSIEQ_KEY_ENCRYPTION_KEY is not set: there is no key to re-seal under"
        )
    try:
        cluster, store = CassandraStore.from_settings(settings)
    except CassandraUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        accounts, unreadable = asyncio.run(_engine(settings, store).reseal_account_keys())
    finally:
        cluster.shutdown()
    click.echo(f"{accounts} accounts of keyspace {settings.keyspace} read; keys re-sealed")
    if unreadable:
        raise click.ClickException(
            f"{unreadable} keys open under none of the keys given (logged by account): add "
            "the key-encryption key they were sealed under to CASSIEQ_KEY_ENCRYPTION_KEY_PREVIOUS"
        )


@click.command()
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
    from cassieq.tools.devcluster import client

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


def _dev_cassandra_store(settings: Settings, log: Any) -> Any:
    from cassieq.store.cassandra import CassandraStore, apply_schema, connect, default_schema_dir
    from cassieq.tools.devcluster import cassandra as tool

    cfg = tool.NodeConfig.from_env(native_port=settings.cassandra_port)
    try:
        tool.start(cfg, log=lambda line: log.info("local_cassandra", detail=line))
    except tool.CassandraToolError as exc:
        raise click.ClickException(str(exc)) from exc
    _cluster, session = connect([cfg.host], cfg.native_port)
    apply_schema(session, settings.keyspace, settings.replication, default_schema_dir())
    return CassandraStore(session, settings.keyspace)


def _stopped_as_asked(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _configure_logging(settings: Settings) -> Any:
    """Logging as the settings say, for the whole process; cassieq's logger."""
    import structlog

    from cassieq.logs import configure_logging

    configure_logging(settings.log_format, settings.log_level)
    return structlog.get_logger("cassieq")


def _warn_kek_in_keyspace(settings: Settings) -> None:
    if settings.key_encryption_key is None:
        # Loudly, at every start of a production server (`cassieq dev` is for this machine).
        import structlog

        from cassieq.auth.keyring import KEK_IN_KEYSPACE_WARNING

        structlog.get_logger("cassieq").warning(
            "key_encryption_key_in_keyspace", detail=KEK_IN_KEYSPACE_WARNING
        )


def _serve(
    settings: Settings,
    store: Any,
    *,
    open_admin_port: bool = False,
    worker_slot: WorkerSlot | None = None,
    sockets: list[socket.socket] | None = None,
) -> None:
    """Serve until stopped. Logging is configured by the caller, before it logs anything.
    ``worker_slot`` and ``sockets``: a worker's, given by its supervisor (which warned)."""
    import signal

    from cassieq.api.app import create_app
    from cassieq.api.http.server import serve

    if not open_admin_port and worker_slot is None:
        _warn_kek_in_keyspace(settings)
    app = create_app(settings, store, open_admin_port=open_admin_port, worker_slot=worker_slot)
    # uvicorn takes SIGTERM while it serves, shuts down gracefully, then restores the
    # handler it found and raises the signal again, so that the process dies of it (exit
    # 143). A SIGTERM is how docker stop, systemd and Kubernetes ask for that graceful stop:
    # done, the process exits 0. This handler is the one found (and, before uvicorn takes
    # over, ends the process at once, as the default would, with 0).
    signal.signal(signal.SIGTERM, _stopped_as_asked)
    serve(
        app,
        host=settings.host,
        port=settings.port,
        admin_port=settings.admin_port,
        log_level=settings.log_level,
        sockets=sockets,
    )
