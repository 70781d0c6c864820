"""Shared by the three-node cluster tests."""

from __future__ import annotations

import pytest

from cassieq.store.cassandra import CassandraUnavailable, connect


def cluster_answers() -> None:
    """Fail (never skip) with a clear message when the three-node cluster is not running."""
    from cassieq.tools.devcluster.cluster import ClusterConfig

    cfg = ClusterConfig.from_env()
    try:
        cluster, _ = connect(list(cfg.hosts), cfg.native_port, connect_timeout=5.0)
    except CassandraUnavailable as exc:
        pytest.fail(
            f"this test needs the three-node cluster (cassieq cassandra start --nodes 3): {exc}",
            pytrace=False,
        )
    cluster.shutdown()
