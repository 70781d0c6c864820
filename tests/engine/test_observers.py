"""The engine's observers (engine/observe.py): each hook fires once per event, on each store.

An event log observer records every hook call; the store's own view (a recording wrapper,
an LWT tally registered with the store) is what each is compared with.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from cassieq.engine import CallCounter, FakeClock, Observer, QueueEngine, Tuning
from cassieq.model import QueueDefinition
from cassieq.store.base import Store
from cassieq.store.cassandra import CassandraStore
from cassieq.store.observer import LwtEvent, LwtTally
from tests.engine.conftest import make_queue
from tests.engine.test_holes_and_repair import drain, sealed_bucket_with_late_write


class EventLog(Observer):
    """Every delivery, dead letter and repair move heard, in order, as (hook, queue, n)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, int]] = []

    def delivered(self, queue: QueueDefinition, count: int) -> None:
        self.events.append(("delivered", queue.name, count))

    def dead_lettered(self, queue: QueueDefinition, count: int) -> None:
        self.events.append(("dead_lettered", queue.name, count))

    def repair_moved(self, queue: QueueDefinition, count: int) -> None:
        self.events.append(("repair_moved", queue.name, count))

    def of(self, hook: str) -> list[tuple[str, int]]:
        return [(queue, n) for h, queue, n in self.events if h == hook]


class Received:
    """The store, noting each call of a primitive it receives (what store_call reports)."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if not callable(target) or name == "add_lwt_observer":
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return target(*args, **kwargs)

        return call


def _engine(store: Any, clock: FakeClock, tuning: Tuning, *observers: Observer) -> QueueEngine:
    return QueueEngine(store, clock, tuning=tuning, observers=list(observers))


async def test_store_call_fires_once_per_call_the_store_receives(
    store: Store, clock: FakeClock, tuning: Tuning, account: str
) -> None:
    received, counter = Received(store), CallCounter()
    engine = _engine(received, clock, tuning, counter)
    await make_queue(engine, account, bucket_size=2)
    for i in range(5):
        await engine.put(account, "q", f"m{i}")
    assert len(await drain(engine, account, "q")) == 5
    await engine.settle()
    assert counter.calls == received.calls
    # Five puts (a monoton and an insert each), five takes, five acks.
    assert counter.calls["cas_monoton"] == counter.calls["insert_messages"] == 5
    assert counter.calls["cas_messages"] == counter.calls["ack_message"] == 5


async def test_without_a_store_call_observer_the_engine_talks_to_the_store_itself(
    store: Store, clock: FakeClock, tuning: Tuning
) -> None:
    assert _engine(store, clock, tuning, EventLog()).ctx.store is store
    assert _engine(store, clock, tuning, CallCounter()).ctx.store is not store


async def test_lwt_outcome_fires_once_per_outcome_the_store_reports(
    store: Store, clock: FakeClock, tuning: Tuning, account: str
) -> None:
    counter, tally = CallCounter(), LwtTally()
    store.add_lwt_observer(tally)
    # One observer on two engines of one store: still told each outcome once.
    engine, other = (_engine(store, clock, tuning, counter) for _ in range(2))
    await make_queue(engine, account)
    await engine.put(account, "q", "m")
    got = await other.get_next(account, "q", 30)
    assert got is not None
    await other.ack(account, "q", got.receipt)
    assert counter.lwt_events == tally.counts
    applied: Counter[tuple[str, LwtEvent]] = Counter(
        {k: n for k, n in counter.lwt_events.items() if k[1] == "applied"}
    )
    if isinstance(store, CassandraStore):
        # At least one outcome per LWT call (a timed-out one may report more).
        assert applied[("ack_message", "applied")] >= 1
        assert sum(counter.lwt_events.values()) >= counter.lwts
    else:
        assert counter.lwt_events == {}  # the memory store reports none


async def test_delivered_fires_once_per_consuming_batch_with_its_count(
    engine: QueueEngine, store: Store, clock: FakeClock, tuning: Tuning, account: str
) -> None:
    log = EventLog()
    server = _engine(store, clock, tuning, log)
    await make_queue(server, account, bucket_size=10, strict_fifo=False)
    for i in range(4):
        await server.put(account, "q", f"m{i}")
    assert len(await server.receive(account, "q", 3, 5)) == 3
    assert await server.get_next(account, "q", 30) is not None
    assert await server.get_next(account, "q", 30) is None  # nothing delivered: no event
    assert log.of("delivered") == [("q", 3), ("q", 1)]
    clock.advance(6)  # the three leases end: redelivered
    assert len(await server.receive(account, "q", 10, 30)) == 3
    assert log.of("delivered") == [("q", 3), ("q", 1), ("q", 3)]
    # Deliveries of another engine are its observers' business.
    await engine.put(account, "q", "theirs")
    assert await engine.get_next(account, "q", 30) is not None
    assert len(log.of("delivered")) == 3


async def test_dead_lettered_fires_once_per_message_moved_or_dropped(
    store: Store, clock: FakeClock, tuning: Tuning, account: str
) -> None:
    log = EventLog()
    engine = _engine(store, clock, tuning, log)
    await make_queue(engine, account, "dlq")
    await make_queue(engine, account, "q", max_delivery_count=1, dlq_name="dlq")
    await make_queue(engine, account, "dropping", max_delivery_count=1)
    for queue in ("q", "dropping"):
        await engine.put(account, queue, f"to {queue}")
        assert await engine.get_next(account, queue, 1) is not None  # its one delivery
    clock.advance(2)
    for queue in ("q", "dropping"):
        assert await engine.get_next(account, queue, 30) is None  # dead-lettered now
        assert await engine.get_next(account, queue, 30) is None  # and not again
    assert log.of("dead_lettered") == [("q", 1), ("dropping", 1)]
    moved = await engine.get_next(account, "dlq", 30)
    assert moved is not None and moved.message == "to q"
    assert log.of("delivered") == [("q", 1), ("dropping", 1), ("dlq", 1)]


async def test_repair_moved_fires_once_per_late_write_republished(
    store: Store, clock: FakeClock, tuning: Tuning, account: str
) -> None:
    log = EventLog()
    engine, other = _engine(store, clock, tuning, log), _engine(store, clock, tuning, log)
    await sealed_bucket_with_late_write(engine, account, clock)
    assert await engine.repair(account, "q") == 0  # the finalize wait: nothing moved yet
    assert log.of("repair_moved") == []
    clock.advance(16)
    assert await engine.repair(account, "q") == 1
    assert await other.repair(account, "q") in (0, None)  # nothing left to move
    assert log.of("repair_moved") == [("q", 1)]
    assert await drain(engine, account, "q") == ["late"]
