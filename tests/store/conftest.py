"""Store-level tests: every test runs on the memory store and on the real Cassandra store."""

from __future__ import annotations

import uuid

import pytest

from cassieq.model import QueueId
from cassieq.store.base import Store
from cassieq.store.memory import MemoryStore


@pytest.fixture(params=["memory", "cassandra"])
def store(request: pytest.FixtureRequest) -> Store:
    if request.param == "memory":
        return MemoryStore()
    inner: Store = request.getfixturevalue("cassandra_store")
    return inner


@pytest.fixture
def queue() -> QueueId:
    # A fresh queue id per test keeps tests apart on the shared Cassandra keyspace.
    return QueueId(f"s-{uuid.uuid4().hex[:12]}", "q", 1)
