"""The suite's Cassandra connection fails loudly (it never degrades to a skip)."""

from __future__ import annotations

import socket

import pytest

from cassieq.store.cassandra import CassandraUnavailable, connect


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_connect_to_a_closed_port_raises_naming_the_address() -> None:
    port = _closed_port()
    with pytest.raises(CassandraUnavailable, match=f"127.0.0.1:{port}"):
        connect(["127.0.0.1"], port, connect_timeout=1.0)
