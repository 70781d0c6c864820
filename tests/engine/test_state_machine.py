"""Random put/get/ack/update/expire/repair sequences, checked on every step (acceptance 10).

Guarantees checked: no double delivery within a lease, nothing delivered after its
ack, an unexpired receipt always acks, and no loss (everything put is delivered and
acked by the end, when time runs on and repair is allowed to work).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule, run_state_machine_as_test

from cassieq.engine import FakeClock, QueueEngine, Tuning
from cassieq.engine.errors import StaleReceipt
from cassieq.model import MessageRow, PopReceipt, QueueOptions
from cassieq.store.base import Store
from cassieq.store.cassandra import CassandraStore
from cassieq.store.memory import MemoryStore

T = TypeVar("T")


@dataclass
class Held:
    receipt: PopReceipt
    expires_at: int


def machine_for(make_store: Callable[[], Store]) -> type[RuleBasedStateMachine]:
    class QueueMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.loop = asyncio.new_event_loop()
            self.clock = FakeClock()
            store, tuning = make_store(), Tuning(hole_grace_ms=1_000, lease_ttl_ms=5_000)
            self.engine = QueueEngine(store, self.clock, tuning=tuning, instance_id="a")
            # A second server on the same store: per-server caches and leases must not matter.
            self.other = QueueEngine(store, self.clock, tuning=tuning, instance_id="b")
            self.account = f"sm-{uuid.uuid4().hex[:12]}"
            self.run(self.engine.accounts.create(self.account))
            options = QueueOptions(bucket_size=3, max_delivery_count=10_000, finalize_seconds=5)
            self.run(self.engine.create_queue(self.account, "q", options))
            self.put_count = 0
            self.unacked: set[str] = set()  # message tags put and not yet acked
            self.acked: set[str] = set()
            self.held: dict[str, Held] = {}  # tag -> the latest delivery's receipt and lease
            self.slow_writers: list[int] = []  # monotons taken, not written yet (or ever)

        def run(self, coro: Coroutine[Any, Any, T]) -> T:
            return self.loop.run_until_complete(coro)

        def teardown(self) -> None:
            try:
                self.drain_everything()
            finally:
                self.loop.close()

        # --------------------------------------------------------------- rules

        @rule(initial_invisibility=st.sampled_from([0, 0, 0, 2, 7]))
        def put(self, initial_invisibility: int) -> None:
            self.put_count += 1
            monoton = self.run(
                self.engine.put(self.account, "q", f"m{self.put_count}", initial_invisibility)
            )
            queue = self.run(self.engine.queues.get(self.account, "q"))
            row = self.run(
                self.engine.ctx.store.read_message(queue.id, queue.bucket_of(monoton), monoton)
            )
            assert row is not None
            self.unacked.add(row.tag)

        @rule()
        def slow_writer_takes_a_monoton(self) -> None:
            queue = self.run(self.engine.queues.get(self.account, "q"))
            self.slow_writers.append(self.run(self.engine.publisher.take_monotons(queue.id)))

        @precondition(lambda self: bool(self.slow_writers))
        @rule(data=st.data())
        def slow_writer_lands(self, data: st.DataObject) -> None:
            """A write that may land after the reader sealed its bucket (a late write), or
            after repair finalized it (refused: the writer then puts it again)."""
            monoton = self.slow_writers.pop(data.draw(st.integers(0, len(self.slow_writers) - 1)))
            queue = self.run(self.engine.queues.get(self.account, "q"))
            now = self.clock.now()
            self.put_count += 1
            tag = f"slow-{monoton}"
            row = MessageRow(
                monoton=monoton,
                message=f"m{self.put_count}",
                version=1,
                delivery_count=0,
                acked=False,
                next_visible_on=now,
                tag=tag,
                created_at=now,
                updated_at=now,
                change=tag,
            )
            store = self.engine.ctx.store
            if self.run(store.insert_messages(queue.id, queue.bucket_of(monoton), [row], now)):
                self.unacked.add(tag)
                return
            monoton = self.run(self.engine.put(self.account, "q", row.message))
            written = self.run(store.read_message(queue.id, queue.bucket_of(monoton), monoton))
            assert written is not None
            self.unacked.add(written.tag)

        @rule(invisibility=st.integers(min_value=0, max_value=20), on_other=st.booleans())
        def get(self, invisibility: int, on_other: bool) -> None:
            engine = self.other if on_other else self.engine
            got = self.run(engine.get_next(self.account, "q", invisibility))
            if got is None:
                return
            now = self.clock.now()
            assert got.tag not in self.acked, "delivered after its ack"
            assert got.tag in self.unacked, "delivered a message never put"
            previous = self.held.get(got.tag)
            assert previous is None or previous.expires_at <= now, "delivered twice within a lease"
            self.held[got.tag] = Held(got.receipt, now + invisibility * 1000)

        @precondition(lambda self: bool(self.held))
        @rule(data=st.data())
        def ack(self, data: st.DataObject) -> None:
            tag = self.pick_held(data)
            lease = self.held[tag]
            try:
                self.run(self.engine.ack(self.account, "q", lease.receipt))
            except StaleReceipt:
                assert lease.expires_at <= self.clock.now(), "an unexpired receipt was refused"
                del self.held[tag]
                return
            del self.held[tag]
            self.unacked.discard(tag)
            self.acked.add(tag)

        @precondition(lambda self: bool(self.held))
        @rule(data=st.data(), invisibility=st.integers(min_value=0, max_value=20))
        def update(self, data: st.DataObject, invisibility: int) -> None:
            tag = self.pick_held(data)
            lease = self.held[tag]
            message = data.draw(st.none() | st.just(f"updated-{tag}"))
            try:
                receipt = self.run(
                    self.engine.update(self.account, "q", lease.receipt, message, invisibility)
                )
            except StaleReceipt:
                assert lease.expires_at <= self.clock.now(), "an unexpired receipt was refused"
                del self.held[tag]
                return
            self.held[tag] = Held(receipt, self.clock.now() + invisibility * 1000)

        @rule(seconds=st.sampled_from([1, 3, 8, 21]))
        def time_passes(self, seconds: int) -> None:
            self.clock.advance(seconds)

        @rule(on_other=st.booleans())
        def repair(self, on_other: bool) -> None:
            self.run((self.other if on_other else self.engine).repair(self.account, "q"))

        def pick_held(self, data: st.DataObject) -> str:
            # By position, not by tag: tags are random, positions replay the same.
            held = list(self.held)
            return held[data.draw(st.integers(0, len(held) - 1))]

        # --------------------------------------------------------------- the end

        def drain_everything(self) -> None:
            for _ in range(20):
                self.clock.advance(30)  # every lease, grace and finalize wait is over
                self.run(self.engine.repair(self.account, "q"))
                while (got := self.run(self.engine.get_next(self.account, "q", 30))) is not None:
                    assert got.tag not in self.acked
                    self.run(self.engine.ack(self.account, "q", got.receipt))
                    self.unacked.discard(got.tag)
                    self.acked.add(got.tag)
                if not self.unacked:
                    break
            assert self.unacked == set(), f"lost: {sorted(self.unacked)}"
            stats = self.run(self.engine.statistics(self.account, "q"))
            assert (stats.size, stats.acked) == (0, self.put_count)

    return QueueMachine


def test_guarantees_hold_on_the_memory_store() -> None:
    run_state_machine_as_test(
        machine_for(MemoryStore),
        settings=settings(
            max_examples=int(os.environ.get("CASSIEQ_SM_EXAMPLES", "150")),
            stateful_step_count=40,
            deadline=None,
        ),
    )


def test_guarantees_hold_on_cassandra(cassandra_store: CassandraStore) -> None:
    run_state_machine_as_test(
        machine_for(lambda: cassandra_store),
        settings=settings(
            max_examples=12,
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
