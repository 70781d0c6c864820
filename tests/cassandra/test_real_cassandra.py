"""Proof that the suite talks to a real Apache Cassandra with working Paxos (LWT)."""

from __future__ import annotations

import uuid

from tests.conftest import CassandraNode


def test_node_is_apache_cassandra_5(cassandra_node: CassandraNode) -> None:
    assert cassandra_node.version.startswith("5.0."), cassandra_node.version


def test_lightweight_transaction_applies_once(cassandra_node: CassandraNode) -> None:
    session = cassandra_node.session
    keyspace = f"lwt_probe_{uuid.uuid4().hex[:12]}"
    session.execute(
        f"CREATE KEYSPACE {keyspace} WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    )
    try:
        session.execute(f"CREATE TABLE {keyspace}.kv (k text PRIMARY KEY, v int)")
        insert = session.prepare(f"INSERT INTO {keyspace}.kv (k, v) VALUES (?, ?) IF NOT EXISTS")

        first = session.execute(insert, ("monoton", 1)).one()
        second = session.execute(insert, ("monoton", 2)).one()
        assert first.applied is True
        assert second.applied is False
        # A losing LWT reports the row that beat it.
        assert second.v == 1

        cas = session.prepare(f"UPDATE {keyspace}.kv SET v = ? WHERE k = ? IF v = ?")
        assert session.execute(cas, (2, "monoton", 1)).one().applied is True
        assert session.execute(cas, (3, "monoton", 1)).one().applied is False

        row = session.execute(f"SELECT v FROM {keyspace}.kv WHERE k = 'monoton'").one()
        assert row.v == 2
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=60)
