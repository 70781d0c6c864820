from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from cassieq.store.cassandra import SchemaError, apply_schema, default_schema_dir
from tests.conftest import CassandraNode

REPLICATION = "{'class': 'SimpleStrategy', 'replication_factor': 1}"


def test_project_schema_applies_then_reapplies_as_a_no_op(cassandra_node: CassandraNode) -> None:
    session = cassandra_node.session
    keyspace = f"schema_probe_{uuid.uuid4().hex[:12]}"
    try:
        first = apply_schema(session, keyspace, REPLICATION, default_schema_dir())
        assert first == sorted(p.name for p in default_schema_dir().glob("*.cql"))
        assert apply_schema(session, keyspace, REPLICATION, default_schema_dir()) == []
        tables = {
            r.table_name
            for r in session.execute(
                "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (keyspace,)
            )
        }
        assert {"accounts", "schema_migrations"} <= tables
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=60)


def test_editing_an_applied_migration_is_refused(
    cassandra_node: CassandraNode, tmp_path: Path
) -> None:
    session = cassandra_node.session
    keyspace = f"schema_probe_{uuid.uuid4().hex[:12]}"
    migration = tmp_path / "0001_t.cql"
    migration.write_text("CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY);\n")
    try:
        assert apply_schema(session, keyspace, REPLICATION, tmp_path) == ["0001_t.cql"]
        migration.write_text("CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY, v int);\n")
        with pytest.raises(SchemaError, match="changed after it was applied"):
            apply_schema(session, keyspace, REPLICATION, tmp_path)
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=60)
