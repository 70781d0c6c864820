"""Engine batches through LWT timeouts, per entry, on the real Cassandra node.

A batch round times out before it ran or after it ran while another server changes
one of its entries meanwhile: the read back decides each entry on its own. Whoever won
an entry, exactly one did: no message delivered twice within a lease, none lost, no
receipt acked twice, a valid receipt never called stale.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.errors import StaleReceipt
from cassieq.model import Delivery, OutgoingMessage, PopReceipt, QueueOptions, VisibilityChange
from cassieq.store.cassandra import CassandraStore, LwtRetry
from tests.lwt_faults import Mode, TimeoutInjectingStore

MODES = ["before", "after"]
BODIES = ["m0", "m1", "m2", "m3"]


async def _servers(
    cassandra_store: CassandraStore,
) -> tuple[TimeoutInjectingStore, QueueEngine, QueueEngine, str]:
    """A server whose LWTs time out, a rival server on the plain store, a queue of four."""
    lossy = TimeoutInjectingStore.beside(cassandra_store, lwt_retry=LwtRetry(base_s=0.001))
    clock = FakeClock()
    engine = QueueEngine(lossy, clock)
    rival = QueueEngine(cassandra_store, clock, instance_id="rival")
    account = f"b-{uuid.uuid4().hex[:10]}"
    await engine.accounts.create(account)
    await engine.create_queue(account, "q", QueueOptions(bucket_size=10))
    await engine.send(account, "q", [OutgoingMessage(body=b) for b in BODIES])
    return lossy, engine, rival, account


def _rival_ack(
    rival: QueueEngine, account: str, receipt: PopReceipt, outcomes: list[bool]
) -> Callable[[], Awaitable[None]]:
    """The rival server's ack of ``receipt``, run while an answer is on its way; whether
    it was accepted goes into ``outcomes``."""

    async def ack() -> None:
        try:
            await rival.ack(account, "q", receipt)
        except StaleReceipt:
            outcomes.append(False)
        else:
            outcomes.append(True)

    return ack


def _once(lossy: TimeoutInjectingStore, primitive: str) -> None:
    assert lossy.injected[primitive] == 1, f"no timeout was injected into {primitive}"
    lossy.stop()


@pytest.mark.parametrize("mode", MODES)
async def test_a_receive_of_n_through_a_timeout_shares_nothing(
    cassandra_store: CassandraStore, mode: Mode
) -> None:
    lossy, engine, rival, account = await _servers(cassandra_store)
    rivals: list[Delivery] = []

    async def rival_takes() -> None:
        if (d := await rival.get_next(account, "q", 30)) is not None:
            rivals.append(d)

    lossy.inject("cas_messages", mode, times=1, meanwhile=rival_takes)
    got = await engine.receive(account, "q", 4, 30)
    _once(lossy, "cas_messages")
    mine = [d.message for d in got]
    theirs = [d.message for d in rivals]
    assert sorted(mine + theirs) == BODIES, (mine, theirs)  # each once, none lost
    # Before: the rival took the oldest first, the rest were still ours to take. After: the
    # batch had applied, every message was leased when the rival looked.
    assert theirs == (["m0"] if mode == "before" else [])
    outcomes = await engine.ack_batch(account, "q", [d.receipt for d in got])
    assert outcomes == [None] * len(got)  # each receipt the read back gave is valid


@pytest.mark.parametrize("stale_in_batch", [False, True])
@pytest.mark.parametrize("mode", MODES)
async def test_a_batch_ack_through_a_timeout_acks_each_once(
    cassandra_store: CassandraStore, mode: Mode, stale_in_batch: bool
) -> None:
    lossy, engine, rival, account = await _servers(cassandra_store)
    got = await rival.receive(account, "q", 4, 30)
    receipts = [d.receipt for d in got]
    if stale_in_batch:
        await rival.ack(account, "q", receipts[0])
    rival_acked: list[bool] = []
    rival_acks = _rival_ack(rival, account, receipts[2], rival_acked)

    lossy.inject("ack_messages", mode, times=1, meanwhile=rival_acks)
    outcomes = await engine.ack_batch(account, "q", receipts)
    _once(lossy, "ack_messages")
    assert isinstance(outcomes[0], StaleReceipt) == stale_in_batch
    assert outcomes[1] is None and outcomes[3] is None
    # m2: acked by exactly one of the two, whichever got there first. A round applies all
    # or nothing: with a stale entry in it, the first round applied nothing, even "after".
    ours_first = mode == "after" and not stale_in_batch
    assert rival_acked == [not ours_first]
    assert (outcomes[2] is None) == ours_first
    again = await engine.ack_batch(account, "q", receipts)
    assert all(isinstance(o, StaleReceipt) for o in again)  # nothing acked twice
    stats = await engine.statistics(account, "q")
    assert (stats.acked, stats.size) == (4, 0)


@pytest.mark.parametrize("mode", MODES)
async def test_a_visibility_change_through_a_timeout_is_decided_per_entry(
    cassandra_store: CassandraStore, mode: Mode
) -> None:
    lossy, engine, rival, account = await _servers(cassandra_store)
    got = await rival.receive(account, "q", 3, 30)
    receipts = [d.receipt for d in got]
    rival_acked: list[bool] = []
    rival_acks = _rival_ack(rival, account, receipts[1], rival_acked)

    changes = [VisibilityChange(receipt=r, invisibility_ms=60_000, body="new") for r in receipts]
    lossy.inject("cas_messages", mode, times=1, meanwhile=rival_acks)
    outcomes = await engine.change_visibility(account, "q", changes)
    _once(lossy, "cas_messages")
    assert isinstance(outcomes[0], PopReceipt) and isinstance(outcomes[2], PopReceipt)
    assert rival_acked == [mode == "before"]
    assert isinstance(outcomes[1], PopReceipt if mode == "after" else StaleReceipt)
    # The new receipts hold, the old ones are stale.
    renewed = [o for o in outcomes if isinstance(o, PopReceipt)]
    assert await engine.ack_batch(account, "q", renewed) == [None] * len(renewed)
    old = await engine.ack_batch(account, "q", receipts)
    assert all(isinstance(o, StaleReceipt) for o in old)
    assert [d.message for d in await engine.receive(account, "q", 4, 30)] == ["m3"]
