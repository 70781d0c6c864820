"""Store-level tests: every test runs on the memory store and on the real Cassandra store
(the `store` fixture of tests/conftest.py)."""

from __future__ import annotations

import uuid

import pytest

from cassieq.model import QueueId


@pytest.fixture
def queue() -> QueueId:
    # A fresh queue id per test keeps tests apart on the shared Cassandra keyspace.
    return QueueId(f"s-{uuid.uuid4().hex[:12]}", "q", 1)
