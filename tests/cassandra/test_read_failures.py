"""A read that meets a dying, restarting or overloaded node is tried again, then answered as
StoreUnavailable (a 503 on the API), never let out as a raw driver error (a 500).

The chaos soak (node and server killed) once answered a v1 get with a 500; the read path
retried timeouts and Unavailable but let a replica's failure answer or a busy connection
out as they came.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from cassandra import ConsistencyLevel, ReadFailure
from cassandra.connection import ConnectionBusy
from cassandra.protocol import IsBootstrappingErrorMessage, OverloadedErrorMessage, ServerError

from cassieq.model import QueueId
from cassieq.store.base import StoreUnavailable
from cassieq.store.cassandra import CassandraStore

FAILURES: dict[str, Callable[[], Exception]] = {
    "read_failure": lambda: ReadFailure(
        "Operation failed (injected)",
        consistency=ConsistencyLevel.QUORUM,
        required_responses=2,
        received_responses=1,
        failures=1,
    ),
    "server_error": lambda: ServerError(0x0000, "java.lang.AssertionError (injected)", None),
    "overloaded": lambda: OverloadedErrorMessage(0x1001, "overloaded (injected)", None),
    "bootstrapping": lambda: IsBootstrappingErrorMessage(0x1002, "bootstrapping", None),
    "connection_busy": lambda: ConnectionBusy("no stream ids left (injected)"),
}


class FailingReads(CassandraStore):
    """The real store; its next ``fail`` requests raise ``error()`` instead of running."""

    def __init__(self, store: CassandraStore, error: Callable[[], Exception], fail: int) -> None:
        super().__init__(store._session, store.keyspace)
        self._error, self.left, self.raised = error, fail, 0

    def _once(self, statement: Any, params: Sequence[Any] | None) -> Any:
        if self.left > 0:
            self.left -= 1
            self.raised += 1
            raise self._error()
        return super()._once(statement, params)


def _queue() -> QueueId:
    return QueueId(f"u-{uuid.uuid4().hex[:10]}", "q", 1)


@pytest.mark.parametrize("kind", list(FAILURES))
async def test_a_failed_read_is_tried_again(cassandra_store: CassandraStore, kind: str) -> None:
    queue = _queue()
    assert await cassandra_store.cas_pointer(queue, "reader", 0, 3) is True
    store = FailingReads(cassandra_store, FAILURES[kind], fail=2)
    assert await store.read_pointer(queue, "reader") == 3
    assert store.raised == 2


@pytest.mark.parametrize("kind", list(FAILURES))
async def test_a_read_that_keeps_failing_is_store_unavailable(
    cassandra_store: CassandraStore, kind: str
) -> None:
    store = FailingReads(cassandra_store, FAILURES[kind], fail=1000)
    with pytest.raises(StoreUnavailable, match="did not answer"):
        await store.read_pointer(_queue(), "reader")
    assert store.raised > 1  # tried again before giving up
