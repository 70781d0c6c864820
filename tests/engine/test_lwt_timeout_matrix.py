"""The engine through LWT timeouts, on the real Cassandra node: every primitive, before and after.

Every other LWT of one primitive times out (the driver's WriteTimeout, write type CAS),
either before it ran or after it ran, while a workload uses every part of the engine:
accounts and keys, queue create / delete / re-create, grouped puts, takes one at a time
and in batches (v2 receive of N, batch ack, visibility change), redelivery of an expired
lease, an update, a dead-letter move, a late write re-published by repair,
seals, finalizes, pointer moves, leases. Then: every message delivered, none twice
within its lease, every ack of a valid receipt accepted, nothing stalled (the three
pointers within one bucket of each other).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.errors import EngineError, StaleReceipt
from cassieq.model import (
    Account,
    Delivery,
    PopReceipt,
    QueueDefinition,
    QueueOptions,
    VisibilityChange,
)
from cassieq.store.cassandra import CassandraStore, LwtRetry
from tests.engine.test_holes_and_repair import drain, write_late
from tests.lwt_faults import LWT_PRIMITIVES, Mode, TimeoutInjectingStore

LEASE_S = 10
PAYLOADS = [f"m{i:02}" for i in range(14)]
POISON, AGAIN, EDIT = "m03", "m05", "m08"  # never acked / left once / updated


@dataclass
class Ledger:
    """What the consumer saw, on the test's clock."""

    now: FakeClock
    leases: dict[str, int] = field(default_factory=dict)  # message -> its lease's end
    delivered: dict[str, int] = field(default_factory=dict)
    acked: set[str] = field(default_factory=set)
    double: list[str] = field(default_factory=list)
    stale_valid: list[str] = field(default_factory=list)

    def got(self, d: Delivery) -> str:
        key = d.message.removesuffix("-edited")
        now = self.now.now()
        if key in self.acked or now < self.leases.get(key, 0):
            self.double.append(f"{key} at {now} (lease until {self.leases.get(key)})")
        self.leases[key] = now + LEASE_S * 1000
        self.delivered[key] = self.delivered.get(key, 0) + 1
        return key

    def released(self, key: str) -> None:
        self.leases.pop(key, None)


def _acked(ledger: Ledger, key: str, outcome: EngineError | None) -> None:
    if isinstance(outcome, StaleReceipt):
        ledger.stale_valid.append(key)  # its lease is in force: the ack must succeed
        return
    assert outcome is None, outcome
    ledger.acked.add(key)
    ledger.released(key)


async def _take(engine: QueueEngine, account: str, batch: bool) -> list[Delivery]:
    if batch:
        return await engine.receive(account, "q", 3, LEASE_S)
    d = await engine.get_next(account, "q", LEASE_S)
    return [] if d is None else [d]


async def _release(
    engine: QueueEngine, account: str, d: Delivery, batch: bool
) -> PopReceipt | EngineError:
    """Back at once, with a new body (an update, or a v2 visibility change)."""
    body = f"{EDIT}-edited"
    if not batch:
        return await engine.update(account, "q", d.receipt, body, 0)
    change = VisibilityChange(receipt=d.receipt, invisibility_ms=0, body=body)
    (outcome,) = await engine.change_visibility(account, "q", [change])
    return outcome


async def _consume(engine: QueueEngine, account: str, ledger: Ledger) -> None:
    """Take and ack until empty, by turns one message at a time (v1) and in batches (v2)."""
    batch = False
    while got := await _take(engine, account, batch):
        to_ack: list[tuple[Delivery, str]] = []
        for d in got:
            key = ledger.got(d)
            first = ledger.delivered[key] == 1
            if key == POISON or (key == AGAIN and first):
                continue  # left unacked: it must come back when its lease ends
            if key == EDIT and first:
                assert isinstance(await _release(engine, account, d, batch), PopReceipt)
                ledger.released(key)  # visible again at once, with the new body
                continue
            to_ack.append((d, key))
        for (_, key), outcome in zip(
            to_ack, await _acks(engine, account, to_ack, batch), strict=True
        ):
            _acked(ledger, key, outcome)
        batch = not batch


async def _acks(
    engine: QueueEngine, account: str, to_ack: list[tuple[Delivery, str]], batch: bool
) -> list[EngineError | None]:
    if batch:
        return await engine.ack_batch(account, "q", [d.receipt for d, _ in to_ack])
    outcomes: list[EngineError | None] = []
    for d, _ in to_ack:
        try:
            await engine.ack(account, "q", d.receipt)
        except StaleReceipt as exc:
            outcomes.append(exc)
        else:
            outcomes.append(None)
    return outcomes


async def _housekeeping(engine: QueueEngine, clock: FakeClock, account: str) -> None:
    await engine.settle()
    await engine.repair(account, "q")
    await engine.deleter.run_once()


async def _accounts_and_queue_lifecycle(engine: QueueEngine, clock: FakeClock) -> str:
    account = f"m-{uuid.uuid4().hex[:10]}"
    await engine.accounts.create(account)
    await engine.accounts.add_key(account, "extra")
    await engine.create_queue(account, "tmp", QueueOptions(bucket_size=2))
    await engine.put(account, "tmp", "old")
    await engine.queues.delete(account, "tmp")
    await engine.create_queue(account, "tmp", QueueOptions(bucket_size=2))
    assert await drain(engine, account, "tmp") == []  # the re-created queue starts empty
    # A deleted account takes its queues with it: one re-created under its name starts empty.
    await engine.put(account, "tmp", "the old account's")
    await engine.accounts.delete(account)
    clock.advance(engine.accounts.recreate_after_ms / 1000)
    await engine.accounts.create(account)
    assert await engine.queues.list(account) == []
    await engine.create_queue(account, "tmp", QueueOptions(bucket_size=2))
    assert await drain(engine, account, "tmp") == []
    await _secrets_and_sealing(engine, clock)
    return account


async def _secrets_and_sealing(engine: QueueEngine, clock: FakeClock) -> None:
    """A keyspace secret made and rotated; a plaintext key (an older row) sealed on read."""
    name = f"s-{uuid.uuid4().hex[:10]}"
    made = await engine.secrets.get_or_create(name)
    assert await engine.secrets.get_or_create(name) == made
    rotated = await engine.secrets.rotate(name, grace_ms=1000)
    assert rotated.previous == made.value and rotated.version == 2
    plain = f"p-{uuid.uuid4().hex[:10]}"
    old_row = Account(name=plain, keys={"k": "plaintext-key"}, created_at=clock.now())
    assert await engine.ctx.store.insert_account(old_row)
    assert (await engine.accounts.get(plain)).keys == {"k": "plaintext-key"}
    stored = await engine.ctx.store.read_account(plain)
    assert stored is not None and stored.keys["k"].startswith("v1:")


async def workload(engine: QueueEngine, clock: FakeClock) -> tuple[Ledger, str, QueueDefinition]:
    account = await _accounts_and_queue_lifecycle(engine, clock)
    await engine.create_queue(account, "dlq", QueueOptions(bucket_size=4))
    options = QueueOptions(bucket_size=3, max_delivery_count=3, dlq_name="dlq", finalize_seconds=2)
    queue, _ = await engine.create_queue(account, "q", options)
    await asyncio.gather(*(engine.put(account, "q", p) for p in PAYLOADS[:4]))
    slow = await engine.publisher.take_monotons(queue.id)  # a writer that stalls
    for p in PAYLOADS[4:]:
        await engine.put(account, "q", p)
    ledger = Ledger(clock)
    late_written = False
    for _ in range(12):
        await _consume(engine, account, ledger)
        clock.advance(engine.ctx.tuning.hole_grace_ms / 1000)  # the slow writer's hole
        await _consume(engine, account, ledger)
        await engine.settle()
        if not late_written and (await engine.ctx.store.read_bucket(queue.id, 1)).sealed_at:
            assert await write_late(engine, queue, slow, "late")  # into the sealed bucket
            late_written = True
        clock.advance(LEASE_S + 1)  # every lease left open ends
        await _housekeeping(engine, clock, account)
        if ledger.acked >= {*PAYLOADS, "late"} - {POISON} and POISON not in ledger.leases:
            break
    await _consume(engine, account, ledger)
    for _ in range(3):  # let repair and the invisibility side catch up with the reader
        clock.advance(3)
        await _housekeeping(engine, clock, account)
        await _consume(engine, account, ledger)
    assert late_written
    return ledger, account, queue


async def _pointers(store: CassandraStore, queue: QueueDefinition) -> tuple[int, int, int]:
    return (
        await store.read_pointer(queue.id, "reader"),
        (await store.read_invisibility(queue.id)).bucket,
        await store.read_pointer(queue.id, "repair"),
    )


@pytest.mark.parametrize("mode", ["before", "after"])
@pytest.mark.parametrize("primitive", LWT_PRIMITIVES)
async def test_every_lwt_primitive_through_timeouts(
    cassandra_store: CassandraStore, primitive: str, mode: Mode
) -> None:
    store = TimeoutInjectingStore.beside(cassandra_store, lwt_retry=LwtRetry(base_s=0.001))
    clock = FakeClock()
    engine = QueueEngine(store, clock)
    store.inject(primitive, mode, every=2)
    ledger, account, queue = await workload(engine, clock)
    store.stop()

    assert store.injected[primitive] > 0, f"the workload never sent {primitive}"
    assert ledger.double == [], "delivered again within its lease or after its ack"
    assert ledger.stale_valid == [], "a valid receipt was called stale"
    assert ledger.acked == {*PAYLOADS, "late"} - {POISON}, "a message was lost"
    assert ledger.delivered[POISON] == 3
    assert await drain(engine, account, "dlq") == [POISON]
    assert await drain(engine, account, "q") == []
    reader, invisibility, repair = await _pointers(store, queue)
    assert reader - invisibility <= 1 and reader - repair <= 1, (reader, invisibility, repair)
    stats = await engine.statistics(account, "q")
    assert stats.size == 0
