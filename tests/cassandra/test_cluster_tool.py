"""The local three-node cluster (`cassieq cassandra start --nodes 3`) against real nodes.

The session fixture starts whatever part of the cluster does not run (start_cluster reuses
running nodes), and the test fails, never skips, when it cannot. One kill/restart cycle of
node 3; the cluster is left running (restarted if a test left node 3 down).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from cassandra.cluster import NoHostAvailable, Session
from cassandra.pool import Host

from cassieq.store.cassandra import connect
from cassieq.tools.devcluster.cassandra import owned_pid, query_version, serves_cql
from cassieq.tools.devcluster.cluster import (
    CassandraToolError,
    ClusterConfig,
    gossip_up,
    kill_node,
    restart_node,
    start_cluster,
)

pytestmark = pytest.mark.cluster

KEYSPACE = "cassieq_cluster_tool_test"


@pytest.fixture(scope="module")
def ring() -> ClusterConfig:
    cfg = ClusterConfig.from_env()
    try:
        start_cluster(cfg)
    except CassandraToolError as exc:
        pytest.fail(f"the three-node cluster is not up and did not start: {exc}", pytrace=False)
    return cfg


@pytest.fixture(scope="module")
def session(ring: ClusterConfig) -> Iterator[Session]:
    # The store's own connection: LOCAL_QUORUM, LOCAL_SERIAL, no driver-side retries.
    cluster, session = connect(ring.hosts, ring.native_port)
    session.execute(
        f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = {ring.replication(3)}"
    )
    session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.kv (k text PRIMARY KEY, v int)")
    try:
        yield session
    finally:
        cluster.shutdown()


def _host(session: Session, address: str) -> Host:
    """The driver's Host for ``address``: requests sent to it are coordinated there."""
    return next(h for h in session.cluster.metadata.all_hosts() if h.address == address)


def _reconnected(session: Session, address: str, timeout: float = 60.0) -> Host:
    """The driver reconnects to a restarted node on its own schedule (after the UP event):
    wait for that, it is the client's business, not the tool's."""
    deadline = time.monotonic() + timeout
    while True:
        host = _host(session, address)
        try:
            session.execute("SELECT release_version FROM system.local", host=host)
            return host
        except NoHostAvailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _host_id(session: Session, address: str) -> object:
    row = session.execute("SELECT host_id FROM system.local", host=_host(session, address)).one()
    return row.host_id


def test_every_node_serves_cql_and_sees_the_others_up(ring: ClusterConfig) -> None:
    for n in ring.numbers:
        assert (query_version(ring.node(n)) or "").startswith("5.0."), f"node {n}"
        others = tuple(h for h in ring.hosts if h != ring.hosts[n - 1])
        assert gossip_up(ring, n) == others, f"node {n}"


def test_an_rf3_keyspace_takes_quorum_writes_and_serial_lwt(session: Session) -> None:
    replication = (
        session.execute(
            "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = %s", (KEYSPACE,)
        )
        .one()
        .replication
    )
    assert replication["datacenter1"] == "3"
    assert replication["class"].endswith("NetworkTopologyStrategy")
    key = str(uuid.uuid4())
    session.execute(f"INSERT INTO {KEYSPACE}.kv (k, v) VALUES (%s, 1)", (key,))
    assert session.execute(f"SELECT v FROM {KEYSPACE}.kv WHERE k = %s", (key,)).one().v == 1
    lwt = f"UPDATE {KEYSPACE}.kv SET v = %s WHERE k = %s IF v = %s"
    assert session.execute(lwt, (2, key, 1)).one().applied
    assert not session.execute(lwt, (3, key, 1)).one().applied


def test_kill_then_restart_node_3(ring: ClusterConfig, session: Session) -> None:
    node3, survivor = ring.node(3), ring.hosts[0]
    host_id = _host_id(session, node3.host)
    before = str(uuid.uuid4())
    session.execute(f"INSERT INTO {KEYSPACE}.kv (k, v) VALUES (%s, 1)", (before,))
    try:
        pid = kill_node(ring, 3)
        assert pid > 0 and owned_pid(node3) is None
        assert not serves_cql(node3)

        # Node 3 is down (and maybe not yet convicted by gossip): quorum is nodes 1 and 2.
        during = str(uuid.uuid4())
        coordinator = _host(session, survivor)
        insert = f"INSERT INTO {KEYSPACE}.kv (k, v) VALUES (%s, 7)"
        session.execute(insert, (during,), host=coordinator)
        lwt = f"UPDATE {KEYSPACE}.kv SET v = 8 WHERE k = %s IF v = 7"
        assert session.execute(lwt, (during,), host=coordinator).one().applied

        seconds = restart_node(ring, 3)
        assert 0 < seconds < 180
        assert serves_cql(node3)
        for n in ring.numbers:
            assert len(gossip_up(ring, n)) == 2, f"node {n} after the restart"
        # The same node came back on its own data (a wiped one would get a new host id) and,
        # as coordinator, serves what was written while it was down.
        on3 = _reconnected(session, node3.host)
        assert _host_id(session, node3.host) == host_id
        select = f"SELECT v FROM {KEYSPACE}.kv WHERE k = %s"
        assert session.execute(select, (during,), host=on3).one().v == 8
        assert session.execute(select, (before,), host=on3).one().v == 1
    finally:
        if owned_pid(node3) is None:
            restart_node(ring, 3)  # leave the cluster whole for whoever uses it next
