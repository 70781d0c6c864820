"""The delayed cluster (`cassieq cassandra start --nodes 3 --inter-node-delay-ms MS`) really
delays: peers know each other by their proxies, and a Paxos round costs its round trips.

Run by hand, never by the suite (its file name is not test_*.py, so pytest collects it only
when named): the delayed cluster takes the plain cluster's addresses, so the two never run
at once, and CI runs the plain one without Toxiproxy. Nothing here is skipped:
    cassieq cassandra start --nodes 3 --inter-node-delay-ms 5
    pytest tests/cluster/delayed_cluster_check.py
"""

from __future__ import annotations

import statistics
import time
import uuid

import pytest
from cassandra import ConsistencyLevel

from cassieq.store.cassandra import connect
from cassieq.tools.devcluster.cluster import ClusterConfig, running_variant

pytestmark = [pytest.mark.cluster]

KEYSPACE = "cassieq_delayed_cluster_test"


def test_peers_talk_through_the_proxies_and_a_paxos_round_pays_six_delays() -> None:
    ring = running_variant(ClusterConfig.from_env())
    if not ring.delayed:
        pytest.fail(
            "no delayed cluster runs: cassieq cassandra start --nodes 3 --inter-node-delay-ms 5",
            pytrace=False,
        )
    cluster, session = connect(list(ring.hosts), ring.native_port, connect_timeout=10.0)
    try:
        peers = {str(row.peer) for row in session.execute("SELECT peer FROM system.peers_v2")}
        advertised = {ring.node(n).storage_address.split(":")[0] for n in ring.numbers}
        assert peers and peers <= advertised  # 127.0.1.x: every peer is reached by its proxy
        session.execute(
            f"CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = {ring.replication(3)}"
        )
        session.execute(f"CREATE TABLE IF NOT EXISTS {KEYSPACE}.t (k uuid PRIMARY KEY, v int)")
        insert = session.prepare(f"INSERT INTO {KEYSPACE}.t (k, v) VALUES (?, 0) IF NOT EXISTS")
        insert.consistency_level = ConsistencyLevel.QUORUM
        insert.serial_consistency_level = ConsistencyLevel.SERIAL

        def median_round_trip_ms() -> float:
            timings = []
            for _ in range(15):
                started = time.perf_counter()
                assert session.execute(insert, (uuid.uuid4(),)).one()[0]  # applied
                timings.append((time.perf_counter() - started) * 1000)
            return statistics.median(timings)

        # Three round trips to a quorum (prepare, propose, commit): six one-way delays, at
        # least four even if a phase were folded into another.
        base = median_round_trip_ms()
        assert base >= 4 * ring.inter_node_delay_ms
        # The same, more: 20 ms more each way must cost at least 80 ms more per LWT, whatever
        # the load of the machine adds to both (the proxies are on the Paxos path).
        proxy = ring.toxiproxy()
        for name in proxy.latency():
            proxy.set_latency(name, ring.inter_node_delay_ms + 20)
        try:
            slower = median_round_trip_ms()
        finally:
            for name in proxy.latency():
                proxy.set_latency(name, ring.inter_node_delay_ms)
        assert slower - base >= 4 * 20, (base, slower)
    finally:
        session.execute(f"DROP KEYSPACE IF EXISTS {KEYSPACE}")
        cluster.shutdown()
