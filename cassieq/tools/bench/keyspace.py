"""A bench's own keyspace: dropped, made again with the schema, and a store on it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from cassieq.config import Settings
from cassieq.store.cassandra import (
    CassandraStore,
    apply_schema,
    connect,
    default_schema_dir,
    drop_keyspace,
)


@contextmanager
def fresh_store(settings: Settings, keyspace: str) -> Iterator[CassandraStore]:
    """A store on ``keyspace``, emptied first (a run never measures an earlier one's rows);
    the driver's connections are closed on the way out."""
    cluster, session = connect(settings.cassandra_hosts, settings.cassandra_port)
    try:
        drop_keyspace(session, keyspace)
        apply_schema(session, keyspace, settings.replication, default_schema_dir())
        yield CassandraStore(session, keyspace)
    finally:
        cluster.shutdown()
