"""The suite's Cassandra connection fails loudly (it never degrades to a skip)."""

from __future__ import annotations

import pytest

from cassieq.store.cassandra import CassandraUnavailable, connect
from cassieq.tools.bench.servers import free_port


def test_connect_to_a_closed_port_raises_naming_the_address() -> None:
    port = free_port()
    with pytest.raises(CassandraUnavailable, match=f"127.0.0.1:{port}"):
        connect(["127.0.0.1"], port, connect_timeout=1.0)
