"""The engine's store from a job's driver program and from its tasks.

Small, exact work (which queues, their pointers, a monoton reservation, the snapshots)
goes through the same CassandraStore the server uses, so it keeps the engine's meaning
(compare-and-set, unknown LWT outcomes resolved by a SERIAL read). Bulk reads go through
the Spark Cassandra connector.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from cassieq.config import Settings
from cassieq.engine.errors import InvalidArgument
from cassieq.engine.replay import positions
from cassieq.model import QueueDefinition
from cassieq.pipeline.spark import PipelineError
from cassieq.store.cassandra import CassandraStore

T = TypeVar("T")


class StoreAccess:
    """A synchronous handle on the store: one event loop, one driver connection."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._runner = asyncio.Runner()
        self._cluster, self.store = CassandraStore.from_settings(settings)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(coro)

    def close(self) -> None:
        self._runner.close()
        self._cluster.shutdown()

    def __enter__(self) -> StoreAccess:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def queue(self, account: str, name: str) -> QueueDefinition:
        """The active queue ``account/name``, or a PipelineError naming what is missing."""
        found = self.run(self.store.read_queue(account, name))
        if found is None or found.status != "active":
            self._require_account(account)
            raise PipelineError(f"queue {name!r} does not exist in account {account!r}")
        return found

    def subscription_start(self, queue: QueueDefinition, name: str) -> tuple[int, ...]:
        """Where subscription ``name`` of ``queue`` reads next: per partition, the first
        monoton not read yet (its committed position, in the engine's own terms; a shared
        one's: the first message it has not finished, acked or retired). A PipelineError
        when the queue has no such subscription."""
        sub = self.run(self.store.read_subscription(queue.id, name))
        if sub is None:
            raise PipelineError(
                f"subscription {name!r} of queue {queue.name!r} does not exist "
                f"(`cassieq subscription list {queue.name}` lists them)"
            )
        try:
            at = sub.done if sub.mode == "shared" and sub.done else sub.position
            return tuple(positions.decode(at, len(queue.partition_views())))
        except InvalidArgument as exc:  # a row this version cannot read: say so, no trace
            raise PipelineError(f"subscription {name!r}: {exc}") from exc

    def select_queues(self, account: str | None, name: str | None) -> list[QueueDefinition]:
        """One queue, an account's queues, or every account's: active ones only."""
        if name is not None:
            if account is None:
                raise PipelineError("--queue needs --account")
            return [self.queue(account, name)]
        if account is not None:
            self._require_account(account)
            accounts = [account]
        else:
            accounts = [a.name for a in self.run(self.store.list_accounts())]
        return [
            q for a in accounts for q in self.run(self.store.list_queues(a)) if q.status == "active"
        ]

    def _require_account(self, account: str) -> None:
        if self.run(self.store.read_account(account)) is None:
            raise PipelineError(f"account {account!r} does not exist")
