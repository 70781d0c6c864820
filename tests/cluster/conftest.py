"""The three-node cluster's store, shared by the cluster tests (a module's own)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from cassieq.store.cassandra import CassandraStore, apply_schema, connect, default_schema_dir
from cassieq.tools.devcluster.cluster import ClusterConfig
from tests.cluster.helpers import cluster_answers


@pytest.fixture(scope="module")
def cluster_store() -> Iterator[CassandraStore]:
    cfg = ClusterConfig.from_env()
    # A keyspace of this test run's own (helpers running side by side use their own).
    keyspace = os.environ.get("CASSIEQ_TEST_KEYSPACE", "cassieq_test") + "_rf3"
    cluster_answers()  # else a clear failure, not a connection error
    cluster, session = connect(list(cfg.hosts), cfg.native_port, connect_timeout=5.0)
    try:
        apply_schema(session, keyspace, cfg.replication(3), default_schema_dir())
        yield CassandraStore(session, keyspace)
    finally:
        cluster.shutdown()
