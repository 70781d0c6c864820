"""Purge: every message put before the call is gone, on any server; later puts stay.

Both stores (the engine suite's fixtures); time is the FakeClock's.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import msgspec
import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.errors import StaleReceipt
from cassieq.store.base import Store
from cassieq.store.cassandra import CassandraStore
from cassieq.tokens import new_token
from tests.engine.conftest import make_queue
from tests.engine.test_holes_and_repair import drain
from tests.lwt_faults import Mode, TimeoutInjectingStore

LEASE_S = 30


async def test_purge_retires_every_earlier_message_and_keeps_later_ones(
    engine: QueueEngine, other: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, "q", bucket_size=3)
    for i in range(8):
        await engine.put(account, "q", f"old-{i}")
    # Two in flight, one of them on another server (its definition cached there).
    first = await engine.get_next(account, "q", LEASE_S)
    second = await other.get_next(account, "q", LEASE_S)
    assert first is not None and second is not None
    assert await engine.purge(account, "q") == 8
    assert await engine.get_next(account, "q", LEASE_S) is None
    assert await other.get_next(account, "q", LEASE_S) is None
    for delivery in (first, second):  # the receipts of purged messages are stale
        with pytest.raises(StaleReceipt):
            await engine.ack(account, "q", delivery.receipt)
    clock.advance(LEASE_S + 1)  # leases ended: still nothing comes back
    assert await other.get_next(account, "q", LEASE_S) is None
    stats = await engine.statistics(account, "q")
    assert (stats.size, stats.published, stats.acked, stats.expired, stats.in_flight) == (
        0, 8, 0, 8, 0,
    )  # fmt: skip
    await engine.put(account, "q", "new")
    assert await drain(other, account, "q") == ["new"]
    stats = await engine.statistics(account, "q")
    assert (stats.size, stats.published, stats.acked, stats.expired) == (0, 9, 1, 8)


async def test_purge_of_an_empty_queue_and_a_second_purge(
    engine: QueueEngine, account: str
) -> None:
    await make_queue(engine, account, "q")
    assert await engine.purge(account, "q") == 0
    await engine.put(account, "q", "m")
    assert await engine.purge(account, "q") == 1
    assert await engine.purge(account, "q") == 0  # idempotent: nothing left to retire
    assert (await engine.statistics(account, "q")).expired == 1


class _CutSignal:
    """Sets ``cut`` once the purge has read the monoton it purges below."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.cut = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def read_monoton(self, queue: Any) -> int:
        value: int = await self.inner.read_monoton(queue)
        self.cut.set()
        return value


async def test_purge_racing_puts_keeps_every_later_put(
    store: Store, clock: FakeClock, account: str, engine: QueueEngine
) -> None:
    signal = _CutSignal(store)
    server = QueueEngine(signal, clock, instance_id="racing")
    await make_queue(server, account, "q", bucket_size=4)
    before = [await server.put(account, "q", f"before-{i}") for i in range(10)]

    async def racing(i: int) -> tuple[str, int]:
        await asyncio.sleep(0)
        return f"racing-{i}", await server.put(account, "q", f"racing-{i}")

    async def after_cut(i: int) -> tuple[str, int]:
        await signal.cut.wait()
        return f"after-{i}", await server.put(account, "q", f"after-{i}")

    signal.cut.clear()
    purging = asyncio.ensure_future(server.purge(account, "q"))
    puts = await asyncio.gather(*(racing(i) for i in range(10)), *(after_cut(i) for i in range(10)))
    purged = await purging
    delivered = await drain(engine, account, "q")
    assert len(delivered) == len(set(delivered))  # none twice
    assert not [m for m in delivered if m.startswith("before-")]  # all before the call gone
    after = {body for body, _ in puts if body.startswith("after-")}
    assert after <= set(delivered)  # started after the purge began: never lost
    # A put racing the call's start is either purged or delivered: never both, never lost.
    assert purged + len(delivered) == len(before) + len(puts)


@pytest.mark.parametrize("mode", ["before", "after"])
async def test_purge_through_lwt_timeouts_loses_no_later_put(
    cassandra_store: CassandraStore, mode: Mode, clock: FakeClock
) -> None:
    faulty = TimeoutInjectingStore.beside(cassandra_store)
    server = QueueEngine(faulty, clock)
    account = f"t-{uuid.uuid4().hex[:12]}"
    await server.accounts.create(account)
    await make_queue(server, account, "q", bucket_size=4)
    for i in range(9):
        await server.put(account, "q", f"old-{i}")
    later: list[str] = []

    async def a_put_meanwhile() -> None:  # another client puts while the answer is lost
        later.append(f"later-{len(later)}")
        await server.put(account, "q", later[-1])

    faulty.inject("cas_messages", mode, every=2, meanwhile=a_put_meanwhile)
    assert await server.purge(account, "q") == 9
    faulty.stop()
    assert faulty.injected["cas_messages"] >= 1
    assert sorted(await drain(server, account, "q")) == sorted(later)
    assert (await server.statistics(account, "q")).expired == 9


async def test_purge_retires_the_copy_of_a_repair_move_begun_before_it(
    engine: QueueEngine, account: str
) -> None:
    """A repair move claimed (target monoton taken past the cut) but not yet written: the
    purge holds the target's place, so the move's copy is never written nor delivered."""
    queue = await make_queue(engine, account, "q", bucket_size=2)
    monoton = await engine.put(account, "q", "late")
    row = await engine.ctx.store.read_message(queue.id, queue.bucket_of(monoton), monoton)
    assert row is not None
    target = await engine.publisher.take_monotons(queue.id)
    claim = msgspec.structs.replace(
        row, version=row.version + 1, republished_to=target, change=new_token()
    )
    assert await engine.ctx.store.cas_message(queue.id, queue.bucket_of(monoton), 1, claim)
    assert await engine.purge(account, "q") == 1
    # The move goes on: its copy's insert finds the place taken (and does nothing).
    copy = msgspec.structs.replace(claim, monoton=target, republished_to=None, version=1)
    now = engine.ctx.clock.now()
    assert await engine.ctx.store.insert_messages(queue.id, queue.bucket_of(target), [copy], now)
    assert await drain(engine, account, "q") == []
    assert (await engine.statistics(account, "q")).size == 0
