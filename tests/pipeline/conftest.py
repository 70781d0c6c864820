"""Pipeline fixtures: one local Spark session for the module run, on the real Cassandra."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.clock import Clock
from cassieq.pipeline.spark import session
from cassieq.pipeline.store_access import StoreAccess
from tests.conftest import CassandraNode

T = TypeVar("T")


@pytest.fixture(scope="session")
def spark(cassandra_node: CassandraNode) -> Iterator[Any]:
    spark = session(cassandra_node.settings, master="local[2]", app_name="cassieq-tests")
    try:
        yield spark
    finally:
        spark.stop()


@pytest.fixture
def access(cassandra_node: CassandraNode, cassandra_store: object) -> Iterator[StoreAccess]:
    # cassandra_store: the schema is applied to the test keyspace before any job runs.
    with StoreAccess(cassandra_node.settings) as access:
        yield access


@dataclass
class World:
    """An engine on a fake clock, its own account, and the loop that runs its calls."""

    access: StoreAccess
    clock: FakeClock
    engine: QueueEngine
    account: str

    def parts(self) -> tuple[FakeClock, QueueEngine, str, Callable[[Coroutine[Any, Any, T]], T]]:
        return self.clock, self.engine, self.account, self.access.run


@pytest.fixture
def world(access: StoreAccess) -> World:
    clock = FakeClock()
    engine = engine_on(access, clock)
    return World(access, clock, engine, new_account(access, engine))


def new_account(access: StoreAccess, engine: QueueEngine) -> str:
    name = f"p-{uuid.uuid4().hex[:12]}"
    access.run(engine.accounts.create(name))
    return name


def engine_on(access: StoreAccess, clock: Clock) -> QueueEngine:
    """An engine on the job's own store handle (its event loop runs the engine's calls)."""
    return QueueEngine(access.store, clock)
