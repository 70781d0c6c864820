"""Ordered subscriptions through LWT timeouts, on the real Cassandra node (issue 36).

Subscriptions add two compare-and-sets — a subscription's creation (INSERT IF NOT EXISTS)
and the move of its committed position (IF revision = ?) — and two new uses of the
engine's own: a reader finalizing a bucket it found a hole in (finalize_bucket), and the
retention mark and sweep (cas_pointer on the ``retention`` pointer). Each times out here
before it ran (not applied) and after it ran (applied, the answer lost), every other time,
while two subscriptions read a partitioned queue with a hole in it, commit as they go
(one with ``expected``), seek back, and the queue's consumers take and ack every message
and repair sweeps. Then: each subscription read every message exactly once per pass, in
monoton order within each partition, its creation answered "created" once, and no commit
was called a conflict that was not one.
"""

from __future__ import annotations

import uuid

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.model import QueueOptions
from cassieq.model_subscriptions import SeekTarget
from cassieq.store.cassandra import CassandraStore, LwtRetry
from tests.engine.conftest import consume_all_and_repair
from tests.lwt_faults import Mode, TimeoutInjectingStore

PRIMITIVES = (
    "insert_subscription",
    "cas_subscription_position",
    "finalize_bucket",
    "cas_pointer",
)
MESSAGES = 24


async def _read_through(
    engine: QueueEngine, account: str, name: str, clock: FakeClock, *, expected: bool
) -> list[tuple[int, int, str]]:
    """Read and commit until nothing is left; the (partition, monoton, body) read."""
    subs = engine.subscriptions
    got: list[tuple[int, int, str]] = []
    committed = None
    for _ in range(200):  # bounds a test that would loop; a pass needs far fewer reads
        batch = await subs.read(account, "q", name, 5)
        if not batch.messages:
            info = await subs.get(account, "q", name)
            if info.lag == 0:
                return got
            clock.advance(2)  # a hole: found, then waited for past finalize_seconds
            continue
        got += [(m.partition, m.monoton, m.body) for m in batch.messages]
        stored = await subs.commit(account, "q", name, batch.next, committed if expected else None)
        committed = stored.position
    raise AssertionError(f"{name} did not reach the end: {got}")


@pytest.mark.parametrize("mode", ["before", "after"])
@pytest.mark.parametrize("primitive", PRIMITIVES)
async def test_ordered_subscriptions_through_lwt_timeouts(
    cassandra_store: CassandraStore, primitive: str, mode: Mode
) -> None:
    store = TimeoutInjectingStore.beside(cassandra_store, lwt_retry=LwtRetry(base_s=0.001))
    clock = FakeClock()
    engine = QueueEngine(store, clock)
    account = f"st-{uuid.uuid4().hex[:10]}"
    await engine.accounts.create(account)
    queue, _ = await engine.create_queue(
        account, "q", QueueOptions(bucket_size=4, partitions=2, finalize_seconds=1)
    )
    store.inject(primitive, mode, every=2)
    created = [
        (await engine.subscriptions.create(account, "q", name, "ordered", "earliest"))[1]
        for name in ("a", "b", "a")
    ]
    assert created == [True, True, False]
    for i in range(MESSAGES // 2):
        await engine.put(account, "q", f"m{i}")
    await engine.publisher.take_monotons(queue.in_partition(0).id)  # a writer that died
    for i in range(MESSAGES // 2, MESSAGES):
        await engine.put(account, "q", f"m{i}")
    clock.advance(0.001)

    first_a = await _read_through(engine, account, "a", clock, expected=True)
    first_b = await _read_through(engine, account, "b", clock, expected=False)
    await consume_all_and_repair(engine, account, clock)  # the queue's consumers; repair
    await engine.subscriptions.seek(account, "q", "a", SeekTarget(to="earliest"))
    again_a = await _read_through(engine, account, "a", clock, expected=True)
    store.stop()

    assert store.injected[primitive] > 0, f"the workload never sent {primitive}"
    bodies = sorted(f"m{i}" for i in range(MESSAGES))
    for got in (first_a, first_b, again_a):
        assert sorted(body for _, _, body in got) == bodies  # each once: none lost, none twice
        for p in (0, 1):
            monotons = [m for part, m, _ in got if part == p]
            assert monotons == sorted(monotons)
