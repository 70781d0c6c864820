"""A partitioned queue through LWT timeouts, on the real Cassandra node (issue 35).

Each partition runs the engine's own compare-and-set paths on its own rows; the paths that
partitions add are the fan-outs around them (a receive over several partitions, batches of
acks and visibility changes split by the partition their receipts name, sends split by key)
and a growth of the queue (a replace of its row). Every LWT primitive these use times out,
before it ran (not applied) and after it ran (applied, the answer lost), every other time,
while a workload sends keyed and unkeyed messages, receives in batches across partitions,
lets leases run out, changes visibility, grows the queue from 3 to 5 partitions and drains
it. Then: every message acked, none delivered twice within its lease, no valid receipt
called stale. (``cas_message``, a repair's re-publish of one late write, runs in one
partition as in a queue of one: test_lwt_timeout_matrix covers it.)
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.errors import EngineError, StaleReceipt
from cassieq.model import Delivery, OutgoingMessage, PopReceipt, QueueOptions, VisibilityChange
from cassieq.store.cassandra import CassandraStore, LwtRetry
from tests.lwt_faults import Mode, TimeoutInjectingStore

LEASE_S = 10
POISON = "m011"  # never acked: dead-lettered after its third delivery (a move's LWTs)
PRIMITIVES = (
    "cas_monoton",
    "insert_messages",
    "cas_messages",
    "ack_messages",
    "ack_message",
    "seal_bucket",
    "cas_pointer",
    "cas_invisibility",
    "replace_queue",
)


@dataclass
class Ledger:
    clock: FakeClock
    leases: dict[str, int] = field(default_factory=dict)
    delivered: dict[str, int] = field(default_factory=dict)
    acked: set[str] = field(default_factory=set)
    double: list[str] = field(default_factory=list)
    stale_valid: list[str] = field(default_factory=list)

    def got(self, d: Delivery) -> str:
        now = self.clock.now()
        key = d.message.removesuffix("+")
        if key in self.acked or now < self.leases.get(key, 0):
            self.double.append(f"{key} at {now} (lease until {self.leases.get(key)})")
        self.leases[key] = now + LEASE_S * 1000
        self.delivered[key] = self.delivered.get(key, 0) + 1
        return key


async def _send(engine: QueueEngine, account: str, first: int, count: int) -> list[str]:
    bodies = [f"m{i:03}" for i in range(first, first + count)]
    # Half keyed (a send split over the keys' partitions), half not (one partition).
    keyed = [OutgoingMessage(body=b, partition_key=f"k{i % 7}") for i, b in enumerate(bodies)]
    half = count // 2
    await engine.send(account, "q", keyed[:half])
    await engine.send(account, "q", [OutgoingMessage(body=b) for b in bodies[half:]])
    return bodies


async def _round(engine: QueueEngine, account: str, ledger: Ledger, leave: set[str]) -> None:
    """Receive batches until empty: leave the messages in ``leave`` once (their lease runs
    out), give one back at once with a new body, ack the rest in one batch."""
    while got := await engine.receive(account, "q", 7, LEASE_S):
        to_ack: list[tuple[Delivery, str]] = []
        changes: list[tuple[Delivery, str]] = []
        for d in got:
            key = ledger.got(d)
            if key == POISON or (key in leave and ledger.delivered[key] == 1):
                continue
            if key.endswith("5") and ledger.delivered[key] == 1 and not d.message.endswith("+"):
                changes.append((d, key))
                continue
            if key.endswith("3") and ledger.delivered[key] == 1 and not d.message.endswith("+"):
                # v1's update: back at once with a new body (one message's compare-and-set).
                await engine.update(account, "q", d.receipt, f"{key}+", 0)
                ledger.leases.pop(key, None)
                continue
            to_ack.append((d, key))
        if changes:
            outcomes = await engine.change_visibility(
                account,
                "q",
                [
                    VisibilityChange(receipt=d.receipt, invisibility_ms=0, body=f"{k}+")
                    for d, k in changes
                ],
            )
            for (_, key), changed in zip(changes, outcomes, strict=True):
                assert isinstance(changed, PopReceipt), changed
                ledger.leases.pop(key, None)  # visible again at once
        # Those ending in 7 acked alone (v1's ack), the rest in one batch.
        alone = [(d, k) for d, k in to_ack if k.endswith("7")]
        batch = [(d, k) for d, k in to_ack if not k.endswith("7")]
        for d, key in alone:
            try:
                await engine.ack(account, "q", d.receipt)
            except StaleReceipt as exc:
                _acked(ledger, key, exc)
            else:
                _acked(ledger, key, None)
        if batch:
            acks = await engine.ack_batch(account, "q", [d.receipt for d, _ in batch])
            for (_, key), outcome in zip(batch, acks, strict=True):
                _acked(ledger, key, outcome)


def _acked(ledger: Ledger, key: str, outcome: EngineError | None) -> None:
    if isinstance(outcome, StaleReceipt):
        ledger.stale_valid.append(key)
        return
    assert outcome is None, outcome
    ledger.acked.add(key)
    ledger.leases.pop(key, None)


@pytest.mark.parametrize("mode", ["before", "after"])
@pytest.mark.parametrize("primitive", PRIMITIVES)
async def test_a_partitioned_queue_through_lwt_timeouts(
    cassandra_store: CassandraStore, primitive: str, mode: Mode
) -> None:
    store = TimeoutInjectingStore.beside(cassandra_store, lwt_retry=LwtRetry(base_s=0.001))
    clock = FakeClock()
    engine = QueueEngine(store, clock)
    account = f"pt-{uuid.uuid4().hex[:10]}"
    await engine.accounts.create(account)
    await engine.create_queue(account, "dlq", QueueOptions(bucket_size=4))
    options = QueueOptions(
        bucket_size=3, partitions=3, finalize_seconds=2, max_delivery_count=3, dlq_name="dlq"
    )
    await engine.create_queue(account, "q", options)
    store.inject(primitive, mode, every=2)
    ledger = Ledger(clock)
    sent = await _send(engine, account, 0, 24)
    await _round(engine, account, ledger, leave={"m004", "m013"})
    grown = await engine.update_queue(account, "q", {"partitions": 5})
    assert grown.options.partitions == 5
    sent += await _send(engine, account, 24, 16)
    for _ in range(8):
        await _round(engine, account, ledger, leave={"m030"})
        await engine.settle()
        clock.advance(LEASE_S + 1)  # every lease left open ends
        await engine.repair(account, "q")
        if ledger.acked >= set(sent) - {POISON} and ledger.delivered.get(POISON) == 3:
            break
    store.stop()

    assert store.injected[primitive] > 0, f"the workload never sent {primitive}"
    assert ledger.double == [], "delivered again within its lease or after its ack"
    assert ledger.stale_valid == [], "a valid receipt was called stale"
    assert ledger.acked == set(sent) - {POISON}, sorted(set(sent) - ledger.acked)
    assert ledger.delivered[POISON] == 3
    await engine.repair(account, "q")
    assert await engine.receive(account, "q", 10, LEASE_S) == []
    assert [d.message for d in await engine.receive(account, "dlq", 10, LEASE_S)] == [POISON]
    assert (await engine.statistics(account, "q")).size == 0
