"""GET /ready on each store: 200 when Cassandra answers, the schema is the one of this
build and the background loop is alive; else 503 naming the failed checks. /health stays
liveness (200 whatever the checks say).

The background loop runs with a tick of an hour: it makes its first pass at start and
none after, so the FakeClock alone decides how old its last pass is.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.model import Account
from cassieq.store.base import Store, StoreUnavailable
from cassieq.store.cassandra import CassandraStore, connect, default_schema_dir
from cassieq.store.memory import MemoryStore
from tests.conftest import CassandraNode

TOKEN = "ready-operator-token"
MAX_AGE_S = 30.0
HOUR = 3600.0


@dataclass
class Ready:
    client: TestClient[Litestar]
    clock: FakeClock

    def get(self) -> httpx.Response:
        return self.client.get("/ready")

    def until_ready(self, within_s: float = 180) -> httpx.Response:
        """The first background pass runs at start, on the app's loop: wait for it
        (bounded), by asking as an orchestrator would. It repairs every queue of the shared
        test keyspace: long on a loaded machine."""
        deadline = time.monotonic() + within_s
        while True:
            answer = self.get()
            if answer.status_code == 200 or time.monotonic() > deadline:
                return answer
            time.sleep(0.05)


@pytest.fixture
def make() -> Iterator[Any]:
    clients: list[TestClient[Litestar]] = []

    def start(store: Store, *, background: bool = True) -> Ready:
        clock = FakeClock()
        settings = Settings(admin_token=TOKEN, ready_background_max_age_seconds=MAX_AGE_S)
        app = create_app(
            settings, store, clock=clock, background=background, background_tick_seconds=HOUR
        )
        client = TestClient(app=app)
        client.__enter__()
        clients.append(client)
        return Ready(client, clock)

    yield start
    for client in clients:
        client.__exit__(None, None, None)


def test_ready_when_every_check_passes(make: Any, store: Store) -> None:
    ready = make(store)
    answer = ready.until_ready()
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["status"] == "ready" and body["failed"] == []
    assert set(body["checks"]) == {"cassandra", "schema", "background"}
    assert all(check["ok"] for check in body["checks"].values())
    if isinstance(store, CassandraStore):
        files = len(list(default_schema_dir().glob("*.cql")))
        assert body["checks"]["schema"]["detail"] == f"{files} files applied"


def test_a_stalled_background_loop_is_not_ready(make: Any, store: Store) -> None:
    ready = make(store)
    assert ready.until_ready().status_code == 200
    ready.clock.advance(MAX_AGE_S + 1)
    answer = ready.get()
    assert answer.status_code == 503
    body = answer.json()
    assert body["status"] == "not ready" and body["failed"] == ["background"]
    assert "31 s ago" in body["checks"]["background"]["detail"]
    # Liveness is not readiness: the process still answers.
    assert ready.client.get("/health").status_code == 200


class FailingListing(MemoryStore):
    """A store whose account listing fails, as a node that stopped answering makes it:
    every background pass fails."""

    async def list_accounts(self) -> list[Account]:
        raise StoreUnavailable("no answer")


def test_a_failing_background_loop_is_not_ready(make: Any) -> None:
    ready = make(FailingListing())
    health = ready.client.app.state.cassieq.background
    deadline = time.monotonic() + 20
    while health.failures == 0 and time.monotonic() < deadline:
        time.sleep(0.05)  # the first pass runs on the app's loop at start
    answer = ready.get()
    assert answer.status_code == 503
    body = answer.json()
    assert body["failed"] == ["background"]
    assert body["checks"]["background"]["detail"] == "no pass completed yet (1 failed)"


def test_without_a_background_loop_there_is_none_to_check(make: Any) -> None:
    answer = make(MemoryStore(), background=False).get()
    assert answer.status_code == 200
    assert answer.json()["checks"]["background"] == {"ok": True, "detail": "not run by this app"}


@pytest.fixture
def newer_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """This server built with one schema file more than the keyspace has."""
    for cql in default_schema_dir().glob("*.cql"):
        shutil.copy(cql, tmp_path / cql.name)
    newer = "0999_newer_than_the_keyspace.cql"
    (tmp_path / newer).write_text(
        "CREATE TABLE IF NOT EXISTS never_applied (id int PRIMARY KEY);\n"
    )
    monkeypatch.setenv("CASSIEQ_SCHEMA_DIR", str(tmp_path))
    return newer


def test_a_schema_behind_the_server_is_not_ready(
    make: Any, cassandra_store: CassandraStore, newer_build: str
) -> None:
    answer = make(cassandra_store, background=False).get()
    assert answer.status_code == 503
    body = answer.json()
    assert body["failed"] == ["schema"]
    assert body["checks"]["cassandra"]["ok"] is True
    detail = body["checks"]["schema"]["detail"]
    assert detail == f"not applied: {newer_build} (run `cassieq schema apply`)"


def test_a_keyspace_without_schema_is_not_ready(make: Any, cassandra_store: CassandraStore) -> None:
    # The store's statements are prepared on the test keyspace; its readiness reads another.
    bare = CassandraStore.__new__(CassandraStore)
    bare.__dict__.update(cassandra_store.__dict__, keyspace="cassieq_no_such_keyspace")
    answer = make(bare, background=False).get()
    assert answer.status_code == 503
    assert answer.json()["failed"] == ["schema"]
    assert answer.json()["checks"]["schema"]["detail"].startswith("not applied: 0001_")


def test_cassandra_not_answering_is_not_ready(make: Any, cassandra_node: CassandraNode) -> None:
    s = cassandra_node.settings
    cluster, session = connect(s.cassandra_hosts, s.cassandra_port)
    store = CassandraStore(session, s.keyspace)
    # The driver's connections are gone: every request fails as with no node up.
    cluster.shutdown()
    answer = make(store, background=False).get()
    assert answer.status_code == 503
    body = answer.json()
    assert "cassandra" in body["failed"]
    assert body["checks"]["cassandra"]["ok"] is False
    assert body["checks"]["cassandra"]["detail"].startswith("no answer")


def test_without_schema_files_there_is_nothing_to_compare(
    make: Any, cassandra_store: CassandraStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An installed package run without CASSIEQ_SCHEMA_DIR: the keyspace is not judged.
    monkeypatch.setenv("CASSIEQ_SCHEMA_DIR", str(tmp_path))
    answer = make(cassandra_store, background=False).get()
    assert answer.status_code == 200, answer.text
    assert "CASSIEQ_SCHEMA_DIR" in answer.json()["checks"]["schema"]["detail"]
