"""Shared fixtures. Tests that need Cassandra connect to the node that `make test` starts.

A test that needs Cassandra fails (never skips) when none answers: the address
comes from CASSIEQ_CASSANDRA_HOSTS / CASSIEQ_CASSANDRA_PORT (default 127.0.0.1:9042).

`store` is the one two-store fixture: a test (or a fixture) that asks for it runs once on a
fresh MemoryStore and once on the session's Cassandra store. `AppClient` and `app_client`
are the one helper for tests that speak to an app through Litestar's TestClient.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest
from cassandra.cluster import Cluster, Session
from litestar import Litestar
from litestar.testing import TestClient

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.engine import QueueEngine
from cassieq.engine.clock import Clock
from cassieq.model import QueueOptions
from cassieq.store.base import Store
from cassieq.store.cassandra import (
    CassandraStore,
    CassandraUnavailable,
    apply_schema,
    connect,
    default_schema_dir,
    server_version,
)
from cassieq.store.memory import MemoryStore

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


STORES = ("memory", "cassandra")


def open_store(kind: str, request: pytest.FixtureRequest) -> Store:
    """The store of one side of a two-store fixture: a fresh MemoryStore, or the session's
    Cassandra store (its schema applied to the test keyspace)."""
    if kind == "memory":
        return MemoryStore()
    cassandra: Store = request.getfixturevalue("cassandra_store")
    return cassandra


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    """Which store this run of a two-store test is on ("memory" or "cassandra")."""
    kind: str = request.param
    return kind


@pytest.fixture
def store(store_kind: str, request: pytest.FixtureRequest) -> Store:
    """The two-store fixture: each test that uses it runs on memory and on Cassandra. Tests
    on Cassandra share its keyspace: each keeps to accounts (or queue ids) of its own."""
    return open_store(store_kind, request)


C = TypeVar("C", bound=Clock)
A = TypeVar("A", bound="AppClient[Any]")


@dataclass
class AppClient(Generic[C]):
    """A TestClient on an app over one store, the app's clock, and one account with its
    keys (none until `create_account` when the app was opened without one)."""

    client: TestClient[Litestar]
    clock: C
    account: str
    keys: dict[str, str]
    admin_token: str

    @property
    def key(self) -> str:
        return self.keys["primary"]

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Key {self.key}"}

    @property
    def admin(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin_token}"}

    @property
    def v1(self) -> str:
        return f"/api/v1/accounts/{self.account}"

    @property
    def v2(self) -> str:
        return f"/api/v2/accounts/{self.account}"

    @property
    def engine(self) -> QueueEngine:
        engine: QueueEngine = self.client.app.state.cassieq.engine
        return engine

    def create_account(self) -> dict[str, str]:
        created = self.client.post("/api/v1/accounts", json=self.account, headers=self.admin)
        assert created.status_code == 201, created.text
        keys: dict[str, str] = created.json()["keys"]
        self.keys = keys
        return keys

    def create_queue(self, name: str = "q", **options: Any) -> None:
        """Through the engine, in the app's own event loop (v1's create body has no v2
        options)."""
        assert self.client.blocking_portal is not None
        _, created = self.client.blocking_portal.call(
            self.engine.create_queue, self.account, name, QueueOptions(**options)
        )
        assert created

    def create_v1_queue(self, name: str = "q", **options: object) -> None:
        body = {"queueName": name, **options}
        created = self.client.post(f"{self.v1}/queues", json=body, headers=self.auth)
        assert created.status_code == 201, created.text

    def grant(self, *levels: str, queue: str | None = None) -> dict[str, str]:
        """The query parameters of a permission for the primary key."""
        body: dict[str, object] = {
            "accountName": self.account, "keyName": "primary", "levels": list(levels),
        }  # fmt: skip
        if queue is not None:
            body["queueName"] = queue
        issued = self.client.post("/api/v1/permissions", json=body, headers=self.admin)
        assert issued.status_code == 201, issued.text
        pairs = (p.partition("=") for p in issued.json()["queryParam"].split("&"))
        return {k: v for k, _, v in pairs}


@contextmanager
def app_client(
    cls: type[A],
    store: Store,
    settings: Settings,
    clock: Clock,
    *,
    prefix: str,
    name: str | None = None,
    account: bool = True,
    routes: Sequence[Any] = (),
    **extra: Any,
) -> Iterator[A]:
    """An app (no background loop) on ``store`` and ``clock`` with ``routes`` added, and a
    client of class ``cls`` on it; with ``account``, a new account named ``name``, by default
    ``prefix-<random>`` (random: tests on Cassandra share its keyspace)."""
    app = create_app(settings, store, clock=clock, background=False)
    for route in routes:
        app.register(route)
    with TestClient(app=app) as client:
        api = cls(
            client=client,
            clock=clock,
            account=name or f"{prefix}-{uuid.uuid4().hex[:10]}",
            keys={},
            admin_token=settings.admin_token or "",
            **extra,
        )
        if account:
            api.create_account()
        yield api


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
