"""Shared fixtures. Tests that need Cassandra connect to the node that `make test` starts.

A test that needs Cassandra fails (never skips) when none answers: the address
comes from CASSIEQ_CASSANDRA_HOSTS / CASSIEQ_CASSANDRA_PORT (default 127.0.0.1:9042).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cassandra.cluster import Cluster, Session

from cassieq.config import Settings
from cassieq.store.cassandra import (
    CassandraStore,
    CassandraUnavailable,
    apply_schema,
    connect,
    default_schema_dir,
    server_version,
)

TEST_KEYSPACE = os.environ.get("CASSIEQ_TEST_KEYSPACE", "cassieq_test")


@dataclass
class CassandraNode:
    settings: Settings
    cluster: Cluster
    session: Session
    version: str


def _settings() -> Settings:
    return Settings.from_env(keyspace=TEST_KEYSPACE)


def pytest_report_header(config: pytest.Config) -> str:
    s = _settings()
    where = f"{','.join(s.cassandra_hosts)}:{s.cassandra_port}"
    try:
        cluster, session = connect(s.cassandra_hosts, s.cassandra_port, connect_timeout=3.0)
    except CassandraUnavailable:
        return f"cassandra: NOT reachable at {where} (tests that need it will fail)"
    try:
        return f"cassandra: Apache Cassandra {server_version(session)} at {where}"
    finally:
        cluster.shutdown()


@pytest.fixture(scope="session")
def cassandra_node() -> Iterator[CassandraNode]:
    s = _settings()
    try:
        cluster, session = connect(s.cassandra_hosts, s.cassandra_port)
    except CassandraUnavailable as exc:
        pytest.fail(f"this test needs a real Cassandra: {exc}", pytrace=False)
    try:
        yield CassandraNode(s, cluster, session, server_version(session))
    finally:
        cluster.shutdown()


@pytest.fixture(scope="session")
def cassandra_store(cassandra_node: CassandraNode) -> Iterator[CassandraStore]:
    s = cassandra_node.settings
    apply_schema(cassandra_node.session, s.keyspace, s.replication, default_schema_dir())
    cluster, session = connect(s.cassandra_hosts, s.cassandra_port)
    try:
        yield CassandraStore(session, s.keyspace)
    finally:
        cluster.shutdown()


# What makes a test need the node: one of these fixtures (directly or through another
# fixture), a "cassandra" parameter (the two-store fixtures fetch `cassandra_store` with
# getfixturevalue, which item.fixturenames does not see), or its folder.
NODE_FIXTURES = frozenset({"cassandra_node", "cassandra_store"})
NODE_FOLDERS = frozenset({"cassandra", "cluster"})


def needs_cassandra(item: pytest.Item) -> bool:
    if NODE_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is not None and any(v == "cassandra" for v in callspec.params.values()):
        return True
    if item.get_closest_marker("cluster") is not None:
        return True
    tests = Path(__file__).parent
    parts = item.path.relative_to(tests).parts if item.path.is_relative_to(tests) else ()
    return len(parts) > 1 and parts[0] in NODE_FOLDERS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks `cassandra` every test that talks to the real node, so that
    `pytest -m "not cassandra"` is the loop that needs none."""
    for item in items:
        if needs_cassandra(item):
            item.add_marker(pytest.mark.cassandra)


def pytest_configure(config: pytest.Config) -> None:
    from cassieq.logs import configure_logging

    configure_logging("console", os.environ.get("CASSIEQ_TEST_LOG_LEVEL", "warning"))
