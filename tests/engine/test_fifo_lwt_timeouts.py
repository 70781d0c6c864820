"""A FIFO queue through LWT timeouts, on the real Cassandra node (issue 37).

FIFO adds two compare-and-sets: a send's claim of its deduplication id (INSERT IF NOT
EXISTS; with deduplication by message group, one conditional batch of a group's ids) and
the replacement of a claim older than the 5-minute interval (or of one whose message was
never written). Each times out here before it ran (not applied) and after it
ran (applied, the answer lost), every other time — and so do the engine's own LWTs that a
FIFO send and receive run through (the monoton, the insert, the takes, the acks) — while a
workload sends four groups over two partitions with every send retried once with its
deduplication id, lets leases run out, and sends the first ids again once the interval is
over. Then: every message stored once per interval, each group delivered in send order (a
receive's answer may hold several of a group, in order), no message delivered while an
earlier one of its group was in flight from another answer, every message acked.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.life.fifo_dedup import DEDUP_INTERVAL_MS
from cassieq.model import DeduplicationScope, Delivery, OutgoingMessage, QueueOptions
from cassieq.store.cassandra import CassandraStore, LwtRetry
from tests.lwt_faults import Mode, TimeoutInjectingStore

LEASE_S = 10
GROUPS = ("g0", "g1", "g2", "g3")
PRIMITIVES = (
    "claim_dedup",
    "replace_dedup",
    "cas_monoton",
    "insert_messages",
    "cas_messages",
    "ack_messages",
)
# A queue deduplicated by message group claims in its own table (schema 0017): its claims
# (one conditional batch per group), their replacement, and the put's own LWTs beside them.
CASES: list[tuple[str, DeduplicationScope]] = [(p, "queue") for p in PRIMITIVES] + [
    (p, "messageGroup")
    for p in ("claim_group_dedup", "replace_group_dedup", "cas_monoton", "insert_messages")
]


@dataclass
class Ledger:
    clock: FakeClock
    # A message is (partition, monoton): each partition has monotons of its own.
    sent: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # in send order
    # group -> message -> its lease end, of the deliveries not acked
    in_flight: dict[str, dict[tuple[int, int], int]] = field(default_factory=dict)
    acked: set[tuple[int, int]] = field(default_factory=set)
    violations: list[str] = field(default_factory=list)

    def got(self, answer: list[Delivery]) -> None:
        """One receive's answer: several messages of a group may come in it, in order (as
        SQS answers), none while an earlier one of its group is in flight from another."""
        now = self.clock.now()
        here: set[tuple[int, int]] = set()
        for d in answer:
            group = d.group or ""
            m = (d.receipt.partition, d.receipt.monoton)
            if m in self.acked:
                self.violations.append(f"{m} delivered after its ack")
            held = self.in_flight.setdefault(group, {})
            flying = [x for x, end in held.items() if x < m and x not in here and now < end]
            if flying:
                self.violations.append(f"{m} of {group} while {flying} were in flight")
            earlier = [
                x for x in self.sent[group] if x < m and x not in self.acked and x not in here
            ]
            if earlier:
                self.violations.append(f"{m} of {group} before {earlier}")
            here.add(m)
        for d in answer:
            m = (d.receipt.partition, d.receipt.monoton)
            self.in_flight[d.group or ""][m] = now + LEASE_S * 1000


async def _send_round(engine: QueueEngine, account: str, ledger: Ledger, tag: str) -> None:
    for n in range(3):
        batch = [
            OutgoingMessage(body=f"{g}/{tag}{n}", group=g, dedup_id=f"{g}-{tag}{n}") for g in GROUPS
        ]
        first = await engine.send(account, "q", batch)
        again = await engine.send(account, "q", batch)  # the retry of a send whose answer was lost
        for m, a, b in zip(batch, first, again, strict=True):
            assert b.duplicate and (b.monoton, b.partition) == (a.monoton, a.partition), (m, a, b)
            ledger.sent.setdefault(m.group or "", []).append((a.partition, a.monoton))
        engine.ctx.clock.advance(0.001)  # type: ignore[attr-defined]


async def _consume(engine: QueueEngine, account: str, ledger: Ledger, rounds: int) -> None:
    for r in range(rounds):
        while got := await engine.receive(account, "q", 4, LEASE_S):
            ledger.got(got)
            keep = [d for d in got if (d.receipt.monoton + r) % 5 != 0 or d.delivery_count > 0]
            outcomes = await engine.ack_batch(account, "q", [d.receipt for d in keep])
            for d, outcome in zip(keep, outcomes, strict=True):
                assert outcome is None, outcome
                ledger.acked.add((d.receipt.partition, d.receipt.monoton))
                ledger.in_flight[d.group or ""].pop((d.receipt.partition, d.receipt.monoton))
        await engine.settle()
        ledger.clock.advance(LEASE_S + 1)  # the leases left open end
        await engine.repair(account, "q")


@pytest.mark.parametrize("mode", ["before", "after"])
@pytest.mark.parametrize(("primitive", "scope"), CASES)
async def test_a_fifo_queue_through_lwt_timeouts(
    cassandra_store: CassandraStore, primitive: str, scope: DeduplicationScope, mode: Mode
) -> None:
    store = TimeoutInjectingStore.beside(cassandra_store, lwt_retry=LwtRetry(base_s=0.001))
    clock = FakeClock()
    engine = QueueEngine(store, clock)
    account = f"ft-{uuid.uuid4().hex[:10]}"
    await engine.accounts.create(account)
    await engine.create_queue(
        account,
        "q",
        QueueOptions(fifo=True, bucket_size=3, partitions=2, deduplication_scope=scope),
    )
    store.inject(primitive, mode, every=2)
    ledger = Ledger(clock)
    await _send_round(engine, account, ledger, "a")
    await _consume(engine, account, ledger, 3)
    # The interval is over (the claims' rows are still kept: their TTL is longer): the
    # first ids are new messages again, each claim replaced.
    clock.advance(DEDUP_INTERVAL_MS / 1000 + 1)
    await _send_round(engine, account, ledger, "a")
    await _send_round(engine, account, ledger, "b")
    await _consume(engine, account, ledger, 4)
    store.stop()

    assert store.injected[primitive] > 0, f"the workload never sent {primitive}"
    assert ledger.violations == []
    stored = {m for monotons in ledger.sent.values() for m in monotons}
    assert len(stored) == 3 * 3 * len(GROUPS)  # each id once per interval
    assert ledger.acked == stored, sorted(stored - ledger.acked)
    assert await engine.receive(account, "q", 10, LEASE_S) == []
