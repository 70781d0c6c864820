"""The store's connections to Cassandra send each request at once (no Nagle delay).

The Python driver leaves Nagle's algorithm on. A request it writes in more than one piece
then waits for the coordinator's delayed ACK: a conditional batch of 20 message rows (a
bucket's worth of a v2 send) took 43.5 ms instead of 1.5 ms on one idle node. The rate
itself is the benchmark's to show; this checks the option on every socket the store uses.
"""

from __future__ import annotations

import socket

from cassieq.store.cassandra.session import connect
from tests.conftest import CassandraNode


def test_every_connection_of_the_store_has_tcp_nodelay(cassandra_node: CassandraNode) -> None:
    s = cassandra_node.settings
    cluster, session = connect(s.cassandra_hosts, s.cassandra_port)
    try:
        session.execute("SELECT release_version FROM system.local")
        connections = [
            conn for holder in cluster.get_connection_holders() for conn in holder.get_connections()
        ]
        # The request pool's connections and the control connection.
        assert len(connections) >= 2
        for conn in connections:
            assert conn._socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0, conn
    finally:
        cluster.shutdown()
