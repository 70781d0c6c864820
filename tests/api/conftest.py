"""HTTP tests: a real `cassieq serve` process on the real Cassandra, spoken to over a socket."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from cassieq.tools.bench.servers import free_port
from tests.conftest import CassandraNode

ADMIN_TOKEN = "test-operator-" + secrets.token_hex(16)  # serve wants 32+ characters


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def admin(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=30
        )


def start_server(node: CassandraNode, log: Path, port: int | None = None, **env: str) -> Server:
    port = port or free_port()
    s = node.settings
    environment = {
        **os.environ,
        "CASSIEQ_CASSANDRA_HOSTS": ",".join(s.cassandra_hosts),
        "CASSIEQ_CASSANDRA_PORT": str(s.cassandra_port),
        "CASSIEQ_KEYSPACE": s.keyspace,
        "CASSIEQ_PORT": str(port),
        "CASSIEQ_ADMIN_TOKEN": ADMIN_TOKEN,
        "CASSIEQ_LOG_FORMAT": "json",
        # One process, as the tests of one server expect (a put wakes a long poll at once,
        # /metrics counts what this test did); tests/e2e/test_serve_workers.py asks for more.
        "CASSIEQ_WORKERS": "1",
        **env,
    }
    with log.open("ab") as out:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(
            [sys.executable, "-m", "cassieq", "serve"], env=environment, stdout=out, stderr=out
        )
    server = Server(f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"cassieq serve exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{server.url}/health", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.1)  # not listening yet: this polls a process start, bounded above
    process.kill()
    raise RuntimeError(f"cassieq serve did not answer in 60 s:\n{log.read_text()[-3000:]}")


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture(scope="package")
def server(
    cassandra_store: object, cassandra_node: CassandraNode, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    # cassandra_store applies the schema to the test keyspace first. One server for the
    # package's tests (tests/api, and tests/e2e, which imports this fixture), stopped when
    # the package is done: kept for the whole session, it repaired the test keyspace's
    # thousands of queues for the rest of it (a third of a core, and Cassandra's Paxos).
    running = start_server(cassandra_node, tmp_path_factory.mktemp("server") / "server.log")
    yield running
    stop_server(running)


@dataclass
class AccountCtx:
    name: str
    keys: dict[str, str]
    url: str

    def client(self, key: str = "primary", api: str = "v1") -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.url}/api/{api}/accounts/{self.name}",
            headers={"Authorization": f"Key {self.keys[key]}"},
            timeout=30,
        )


@pytest.fixture
def account(server: Server) -> AccountCtx:
    name = f"api-{uuid.uuid4().hex[:12]}"
    with server.admin() as admin:
        response = admin.post("/api/v1/accounts", json=name)
    assert response.status_code == 201, response.text
    body = response.json()
    return AccountCtx(body["accountName"], body["keys"], server.url)
