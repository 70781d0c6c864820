"""Statistics cost a bounded number of bucket reads, however deep the backlog."""

from __future__ import annotations

import asyncio

from cassieq.engine import CallCounter, QueueEngine
from cassieq.engine.stats import AHEAD_EXACT_BUCKETS
from cassieq.store.base import Store
from tests.engine.conftest import make_queue


async def test_a_deep_backlog_is_counted_without_reading_every_bucket(
    calls: CallCounter, engine: QueueEngine, store: Store, account: str
) -> None:
    await make_queue(engine, account, bucket_size=1)
    backlog = AHEAD_EXACT_BUCKETS * 2
    await asyncio.gather(*(engine.put(account, "q", f"m{i}") for i in range(backlog)))
    for _ in range(3):  # some delivered (one acked): the reader has moved on a little
        got = await engine.get_next(account, "q", 60)
        assert got is not None
        receipt = got.receipt
    await engine.ack(account, "q", receipt)
    calls.reset()
    stats = await engine.statistics(account, "q")
    assert (stats.published, stats.size, stats.in_flight, stats.acked) == (
        backlog,
        backlog - 1,
        2,
        1,
    )
    assert stats.delivered == 3
    # The buckets up to AHEAD_EXACT_BUCKETS past the reader (and the one past the monoton's),
    # read again if a pointer moved meanwhile: never one per message of the backlog.
    assert calls.calls["read_bucket"] <= AHEAD_EXACT_BUCKETS + 8
