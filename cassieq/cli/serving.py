"""The Cassandra store `cassieq serve` (and each of its workers) serves from."""

from __future__ import annotations

from typing import Any

import click

from cassieq.config import Settings


def connected(settings: Settings) -> tuple[Any, Any]:
    """(cluster, store) on the configured keyspace, which must hold cassieq's schema."""
    from cassandra import InvalidRequest

    from cassieq.store.cassandra import CassandraStore, CassandraUnavailable, connect

    try:
        cluster, session = connect(
            settings.cassandra_hosts,
            settings.cassandra_port,
            consistency=settings.consistency,
            serial_consistency=settings.serial_consistency,
        )
    except CassandraUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    # Looked up in the driver's schema metadata before any statement is prepared: preparing
    # on a missing keyspace logs the driver's own error and traceback first.
    found = cluster.metadata.keyspaces.get(settings.keyspace)
    if found is None or "schema_migrations" not in found.tables:
        cluster.shutdown()
        raise without_schema(settings.keyspace)
    try:
        store = CassandraStore(
            session, settings.keyspace, serial_consistency=settings.serial_consistency
        )
    except InvalidRequest as exc:
        # Statements are prepared at start: a keyspace missing some of cassieq's tables.
        raise without_schema(settings.keyspace, exc) from exc
    return cluster, store


def without_schema(keyspace: str, exc: Exception | None = None) -> click.ClickException:
    """The error for a keyspace without cassieq's schema (``exc``: the driver's refusal to
    prepare a statement, when it came to that): the first run's missing step named, rather
    than the driver's ``code=2200``. Another refusal is passed on as it is."""
    text = "" if exc is None else str(exc)
    if exc is not None and "does not exist" not in text and "unconfigured table" not in text:
        return click.ClickException(text)
    return click.ClickException(
        f"keyspace {keyspace!r} has no cassieq schema (the keyspace or its tables do not "
        f"exist). Create it first, with the same CASSIEQ_CASSANDRA_* settings: "
        f"`cassieq schema apply --keyspace {keyspace}` (docs/operations/serving.md, First run)"
    )
