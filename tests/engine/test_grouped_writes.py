"""Concurrent single takes and acks of one bucket go as grouped conditional batches
(engine/life/bucket_groups.py), each answered on its own (both stores); and through an LWT
timeout of the grouped batch, applied or not, on the real Cassandra node."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from cassieq.engine import CallCounter, FakeClock, QueueEngine
from cassieq.engine.errors import StaleReceipt
from cassieq.model import Delivery, OutgoingMessage, QueueOptions
from cassieq.store.base import Store
from cassieq.store.cassandra import CassandraStore, LwtRetry
from tests.engine.conftest import make_queue
from tests.lwt_faults import Mode, TimeoutInjectingStore

N = 10


async def _filled(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account, bucket_size=20, strict_fifo=False)
    await engine.send(account, "q", [OutgoingMessage(body=f"m{i}") for i in range(N)])


async def _gets(engine: QueueEngine, account: str, n: int) -> list[Delivery]:
    got = await asyncio.gather(*(engine.get_next(account, "q", 30) for _ in range(n)))
    return [d for d in got if d is not None]


async def test_concurrent_gets_of_one_bucket_deliver_each_message_once(
    calls: CallCounter, engine: QueueEngine, store: Store, account: str, clock: FakeClock
) -> None:
    await _filled(engine, account)
    calls.reset()
    got = await _gets(engine, account, N)
    assert sorted(d.message for d in got) == sorted(f"m{i}" for i in range(N))
    assert len({d.receipt.monoton for d in got}) == N
    if isinstance(store, CassandraStore):
        # The gets that came while the first take was out went together.
        assert calls.calls["cas_messages"] < N, calls.calls
    assert await engine.get_next(account, "q", 30) is None  # all leased
    clock.advance(31_000)
    again = await _gets(engine, account, N)
    assert sorted(d.message for d in again) == sorted(f"m{i}" for i in range(N))  # none lost


async def test_concurrent_acks_of_one_bucket_are_answered_each_on_its_own(
    calls: CallCounter, engine: QueueEngine, store: Store, account: str, clock: FakeClock
) -> None:
    await _filled(engine, account)
    got = [await engine.get_next(account, "q", 30) for _ in range(N)]
    receipts = [d.receipt for d in got if d is not None]
    assert len(receipts) == N
    # The first receipt acked already: sent again among the others it is stale, alone.
    await engine.ack(account, "q", receipts[0])
    calls.reset()
    outcomes = await asyncio.gather(
        *(engine.ack(account, "q", r) for r in [receipts[0], *receipts[1:], receipts[1]]),
        return_exceptions=True,
    )
    stale = [i for i, o in enumerate(outcomes) if isinstance(o, StaleReceipt)]
    assert [o for o in outcomes if not (o is None or isinstance(o, StaleReceipt))] == []
    # The old receipt, and one of the two acks of receipts[1] (the other applied it).
    assert stale[0] == 0 and len(stale) == 2 and stale[1] in (1, N), outcomes
    if isinstance(store, CassandraStore):
        assert calls.calls["ack_message"] + calls.calls["ack_messages"] < N, calls.calls
    clock.advance(31_000)
    assert await engine.get_next(account, "q", 30) is None  # every message acked


MODES = ["before", "after"]


async def _lossy(
    cassandra_store: CassandraStore, clock: FakeClock
) -> tuple[TimeoutInjectingStore, QueueEngine, str]:
    lossy = TimeoutInjectingStore.beside(cassandra_store, lwt_retry=LwtRetry(base_s=0.001))
    engine = QueueEngine(lossy, clock)
    account = f"g-{uuid.uuid4().hex[:10]}"
    await engine.accounts.create(account)
    await engine.create_queue(account, "q", QueueOptions(bucket_size=20, strict_fifo=False))
    await engine.send(account, "q", [OutgoingMessage(body=f"m{i}") for i in range(N)])
    return lossy, engine, account


@pytest.mark.parametrize("mode", MODES)
async def test_grouped_takes_through_a_timeout_deliver_each_message_once(
    cassandra_store: CassandraStore, clock: FakeClock, mode: Mode
) -> None:
    lossy, engine, account = await _lossy(cassandra_store, clock)
    # The first take (alone) and the grouped batch behind it both time out once.
    lossy.inject("cas_messages", mode, times=2)
    got = await _gets(engine, account, N)
    assert lossy.injected["cas_messages"] == 2, "no timeout reached the grouped batch"
    lossy.stop()
    rest = await _gets(engine, account, N)
    # Each message once within the lease: a take that applied before its answer was lost
    # is delivered (read back), one that did not is taken again, never both.
    bodies = [d.message for d in got + rest]
    assert sorted(bodies) == sorted(f"m{i}" for i in range(N)), bodies


@pytest.mark.parametrize("mode", MODES)
async def test_grouped_acks_through_a_timeout_ack_each_valid_receipt(
    cassandra_store: CassandraStore, clock: FakeClock, mode: Mode
) -> None:
    lossy, engine, account = await _lossy(cassandra_store, clock)
    got = [await engine.get_next(account, "q", 30) for _ in range(N)]
    receipts = [d.receipt for d in got if d is not None]
    lossy.inject("ack_messages", mode, times=1)
    outcomes = await asyncio.gather(
        *(engine.ack(account, "q", r) for r in receipts), return_exceptions=True
    )
    assert lossy.injected["ack_messages"] == 1, "the acks were not grouped"
    lossy.stop()
    assert outcomes == [None] * N  # a valid receipt is never called stale
    clock.advance(31_000)
    assert await engine.get_next(account, "q", 30) is None  # all acked, none redelivered
