"""A queue whose reader pointer passed unsealed buckets heals; a stall that stays is logged."""

from __future__ import annotations

from typing import Any

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.context import EngineContext
from cassieq.engine.upkeep.stall import StallWatch
from cassieq.model import InvisibilityState
from cassieq.store.base import Store
from tests.engine.conftest import make_queue
from tests.engine.test_holes_and_repair import drain


async def test_buckets_left_unsealed_behind_the_reader_are_sealed_and_nothing_is_lost(
    engine: QueueEngine, other: QueueEngine, store: Store, clock: FakeClock, account: str
) -> None:
    """What a seal assumed stored once did: the reader pointer moved past eleven buckets
    whose seal was never written. The invisibility side never passes an unsealed bucket
    and repair stops at one, so before the fix buckets 8-10 (past the invisibility
    side's window) were never delivered."""
    queue = await make_queue(engine, account, bucket_size=2, finalize_seconds=1)
    payloads = [f"m{i:02}" for i in range(24)]
    for payload in payloads:
        await engine.put(account, "q", payload)
    assert await store.cas_pointer(queue.id, "reader", 0, 11)  # by hand: no seals

    async def pointers() -> tuple[int, int, int]:
        return (
            await store.read_pointer(queue.id, "reader"),
            (await store.read_invisibility(queue.id)).bucket,
            await store.read_pointer(queue.id, "repair"),
        )

    seen: list[str] = []
    for _ in range(60):
        seen += await drain(engine, account, "q")
        await engine.settle()
        clock.advance(2)
        await other.repair(account, "q")  # whichever server finds it heals it
        reader, invisibility, repair = await pointers()
        if len(seen) == len(payloads) and reader - min(invisibility, repair) <= 1:
            break
    assert sorted(seen) == payloads  # every message, once
    reader, invisibility, repair = await pointers()
    assert reader - invisibility <= 1 and reader - repair <= 1, (reader, invisibility, repair)
    for bucket in range(11):
        assert (await store.read_bucket(queue.id, bucket)).sealed_at is not None


class _Recorder:
    """A logger that keeps what it was told."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict[str, Any]]] = []

    def __getattr__(self, level: str) -> Any:
        def log(event: str, **fields: Any) -> None:
            self.events.append((level, event, fields))

        return log


async def test_a_pointer_blocked_for_longer_than_finalize_plus_a_minute_is_logged_once_a_minute(
    engine: QueueEngine, store: Store, clock: FakeClock, account: str
) -> None:
    queue = await make_queue(engine, account, bucket_size=2, finalize_seconds=5)
    await engine.put(account, "q", "held")
    delivery = await engine.get_next(account, "q", 3600)  # a lease of an hour in bucket 0
    assert delivery is not None
    await store.seal_bucket(queue.id, 0, clock.now())
    assert await store.cas_pointer(queue.id, "reader", 0, 6)
    log = _Recorder()
    watch = StallWatch(EngineContext(store, clock, log=log))

    def stalls() -> list[dict[str, Any]]:
        return [f for level, e, f in log.events if e == "queue_pointer_stalled"]

    await watch.check(queue, 0, "test blocker")  # first sight: not blocked yet
    clock.advance(61)
    await watch.check(queue, 0, "test blocker")
    assert stalls() == []  # 61 s: not past finalize (5 s) plus a minute
    clock.advance(10)
    await watch.check(queue, 0, "test blocker")
    assert stalls() == []  # checked at most once a minute (two reads)
    clock.advance(50)
    await watch.check(queue, 0, "test blocker")
    found = {f["pointer"]: f for f in stalls()}
    assert set(found) == {"repair", "invisibility"}
    assert found["repair"]["bucket"] == 0 and found["repair"]["blocker"] == "test blocker"
    assert found["invisibility"]["behind"] == 6
    assert "1 unacked message" in found["invisibility"]["blocker"]
    clock.advance(30)
    await watch.check(queue, 0, "test blocker")
    assert len(stalls()) == 2  # once a minute, not on every repair run
    clock.advance(31)
    await watch.check(queue, 0, "test blocker")
    assert len(stalls()) == 4
    # Moving on clears it.
    await store.cas_invisibility(queue.id, 0, InvisibilityState(bucket=5, rev=1))
    clock.advance(61)
    await watch.check(queue, 5, "test blocker")
    clock.advance(61)
    await watch.check(queue, 5, "test blocker")
    assert len(stalls()) == 4
