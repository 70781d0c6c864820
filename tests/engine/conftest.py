"""One engine suite, two stores: every test runs on memory and on the real Cassandra."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from cassieq.engine import CallCounter, FakeClock, QueueEngine, Tuning
from cassieq.model import QueueDefinition, QueueOptions
from cassieq.store.base import Store
from tests.engine.jobs import own_jobs_queue


@pytest.fixture
def calls() -> CallCounter:
    """Counts the store calls (and LWT outcomes) of ``engine`` and ``other``: the observer
    tests of costs install (engine/observe.py)."""
    return CallCounter()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def tuning() -> Tuning:
    """The defaults, but deletion jobs in a jobs queue of the test's own (tests/engine/jobs.py)."""
    return own_jobs_queue()


@pytest.fixture
def engine(store: Store, clock: FakeClock, tuning: Tuning, calls: CallCounter) -> QueueEngine:
    return QueueEngine(store, clock, tuning=tuning, observers=[calls])


@pytest.fixture
def other(store: Store, clock: FakeClock, tuning: Tuning, calls: CallCounter) -> QueueEngine:
    """A second server on the same store (its own caches, leases and instance id)."""
    return QueueEngine(store, clock, tuning=tuning, instance_id="other", observers=[calls])


@pytest.fixture
async def account(engine: QueueEngine) -> str:
    # A fresh account per test keeps tests apart on the shared Cassandra keyspace.
    name = f"t-{uuid.uuid4().hex[:12]}"
    await engine.accounts.create(name)
    return name


async def make_queue(
    engine: QueueEngine, account: str, name: str = "q", **options: object
) -> QueueDefinition:
    queue, created = await engine.create_queue(account, name, QueueOptions(**options))  # type: ignore[arg-type]
    assert created
    return queue


def hold_redrives(engine: QueueEngine, until: asyncio.Event | None = None) -> asyncio.Event:
    """Make the engine's redrive tasks wait at their rate limiter's first wait (before
    their second move) until ``until`` is set (without it: until they are cancelled); the
    event returned is set once one waits there."""
    waiting = asyncio.Event()

    async def held(_: float) -> None:
        waiting.set()
        await (until or asyncio.Event()).wait()

    engine.redriver.sleep = held
    return waiting


async def consume_all_and_repair(engine: QueueEngine, account: str, clock: FakeClock) -> None:
    """The queue's own consumers take and ack every message; past the finalize wait, repair
    finishes every bucket (and sweeps what retention lets go)."""
    while batch := await engine.receive(account, "q", 4, 30):
        await engine.ack_batch(account, "q", [d.receipt for d in batch])
    await engine.settle()
    clock.advance(5)
    while await engine.repair(account, "q"):
        pass
