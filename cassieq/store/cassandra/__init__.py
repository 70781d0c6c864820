"""Everything that speaks CQL: connecting, applying the schema, and the Store.

- ``session``: connecting, and running requests on the driver's threads for asyncio;
- ``schema``: the numbered CQL files, applied in order;
- ``statements``: every CQL statement of the store;
- ``lwt``: lightweight transactions whose outcome is resolved, never assumed;
- ``rows``: mapping rows to the model and back;
- ``store``: ``CassandraStore``, the Store protocol on Cassandra.
"""

from cassieq.store.cassandra.lwt import LwtRetry, Outcome
from cassieq.store.cassandra.schema import (
    Migration,
    SchemaError,
    apply_schema,
    default_schema_dir,
    drop_keyspace,
    load_migrations,
    split_statements,
)
from cassieq.store.cassandra.session import (
    CassandraUnavailable,
    cached_row_factory,
    check_keyspace,
    connect,
    consistency_level,
    execute_async,
    server_version,
)
from cassieq.store.cassandra.store import MARKER_TTL_S, CassandraStore
from cassieq.store.observer import LwtObserver, LwtObservers, LwtTally

__all__ = [
    "MARKER_TTL_S",
    "CassandraStore",
    "CassandraUnavailable",
    "LwtObserver",
    "LwtObservers",
    "LwtRetry",
    "LwtTally",
    "Migration",
    "Outcome",
    "SchemaError",
    "apply_schema",
    "cached_row_factory",
    "check_keyspace",
    "connect",
    "consistency_level",
    "default_schema_dir",
    "drop_keyspace",
    "execute_async",
    "load_migrations",
    "server_version",
    "split_statements",
]
