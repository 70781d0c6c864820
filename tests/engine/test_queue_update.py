"""Changing a queue's options (v2 PATCH): one compare-and-set on the queue row."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cassieq.engine import CallCounter, FakeClock, QueueEngine
from cassieq.engine.errors import InvalidArgument, QueueNotFound
from cassieq.model import QueueDefinition
from cassieq.store.base import Store
from tests.engine.conftest import make_queue


async def test_an_update_is_seen_at_once_here_and_within_the_cache_time_elsewhere(
    engine: QueueEngine, other: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account)
    assert (await other.queues.get(account, "q")).options.max_delivery_count == 5  # cached
    updated = await engine.update_queue(
        account, "q", {"max_delivery_count": 9, "visibility_timeout_seconds": 45}
    )
    assert updated.options.max_delivery_count == 9
    assert updated.options.visibility_timeout_seconds == 45
    assert updated.options.bucket_size == 20  # the rest stays
    assert (await engine.queues.get(account, "q")).options.max_delivery_count == 9
    assert (await other.queues.get(account, "q")).options.max_delivery_count == 5
    clock.advance(engine.ctx.tuning.queue_cache_ms / 1000 + 0.001)
    assert (await other.queues.get(account, "q")).options.max_delivery_count == 9


async def test_an_update_that_changes_nothing_writes_nothing(
    calls: CallCounter, engine: QueueEngine, account: str, store: Store
) -> None:
    queue = await make_queue(engine, account)
    calls.reset()
    assert await engine.update_queue(account, "q", {"max_delivery_count": 5}) == queue
    assert calls.lwts == 0


async def test_bad_updates_are_refused(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account)
    with pytest.raises(InvalidArgument, match="bucketSize cannot change"):
        await engine.update_queue(account, "q", {"bucket_size": 7})
    with pytest.raises(InvalidArgument, match="must name an existing queue"):
        await engine.update_queue(account, "q", {"dlq_name": "missing"})
    with pytest.raises(InvalidArgument, match="messageRetentionSeconds"):
        await engine.update_queue(account, "q", {"message_retention_seconds": 59})
    with pytest.raises(InvalidArgument, match="no field"):
        await engine.update_queue(account, "q", {"nope": 1})
    with pytest.raises(QueueNotFound):
        await engine.update_queue(account, "missing", {"max_delivery_count": 2})
    await make_queue(engine, account, "dlq")
    updated = await engine.update_queue(account, "q", {"dlq_name": "dlq"})
    assert updated.options.dlq_name == "dlq"


async def test_an_update_never_lands_on_a_deleted_queue(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account)
    await engine.queues.delete(account, "q")
    with pytest.raises(QueueNotFound):
        await engine.update_queue(account, "q", {"max_delivery_count": 2})
    again, created = await engine.create_queue(
        account, "q", (await make_queue(engine, account, "other")).options
    )
    assert created and again.options.max_delivery_count == 5


class _ReadTogether:
    """The store, with the first ``n`` reads of a queue row answered only once all ``n``
    have been made: so that many updates surely read the same definition."""

    def __init__(self, inner: Store, n: int) -> None:
        self._inner, self._waiting, self._all_in = inner, n, asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def read_queue(self, account: str, name: str) -> QueueDefinition | None:
        row: QueueDefinition | None = await self._inner.read_queue(account, name)
        if self._waiting > 0:
            self._waiting -= 1
            if self._waiting == 0:
                self._all_in.set()
            await self._all_in.wait()
        return row


async def test_racing_updates_both_apply(
    engine: QueueEngine, account: str, store: Store, clock: FakeClock
) -> None:
    await make_queue(engine, account)
    together = _ReadTogether(store, 2)
    one, two = (QueueEngine(together, clock, instance_id=i) for i in ("one", "two"))
    # Both read the same definition; the one whose compare-and-set loses reads again and
    # applies its change on top of the other's (without the options_rev condition, the
    # later write would silently undo the earlier one's change).
    first, second = await asyncio.gather(
        one.update_queue(account, "q", {"max_delivery_count": 9}),
        two.update_queue(account, "q", {"delay_seconds": 7}),
    )
    stored = await store.read_queue(account, "q")
    assert stored is not None and stored.options_rev == 2
    assert (stored.options.max_delivery_count, stored.options.delay_seconds) == (9, 7)
    assert stored in (first, second)
