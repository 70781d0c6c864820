"""Shared subscriptions through LWT timeouts, on the real Cassandra node (issue 36).

A shared subscription adds three compare-and-sets: a first delivery (INSERT IF NOT EXISTS of
its delivery row), every later change of that row (a redelivery, an ack, a new lease, a
retirement: IF version = ? AND tag = ?) and the move of the subscription's cursor, done
position and generation (IF revision = ?). Each times out here before it ran (not applied)
and after it ran (applied, the answer lost), every other time, while two receivers on two
servers consume two shared subscriptions of a partitioned queue, let some leases run out,
renew one, and one subscription is sought back to the start. Then: each subscription acked
every message (after the seek: again), none was delivered twice within a lease, and every
timed-out call was settled, never assumed.
"""

from __future__ import annotations

import uuid
import zlib

import msgspec
import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.model import OutgoingMessage, QueueOptions, VisibilityChange
from cassieq.model_subscriptions import SeekTarget
from cassieq.store.cassandra import CassandraStore, LwtRetry
from tests.lwt_faults import Mode, TimeoutInjectingStore

PRIMITIVES = ("insert_sub_deliveries", "cas_sub_deliveries", "cas_subscription")
MESSAGES = 24
LEASE_S = 10


async def _consume(
    servers: list[QueueEngine], account: str, name: str, clock: FakeClock
) -> list[str]:
    """Receive from alternate servers until every message is acked; a delivery in five is
    left to run out its lease, one is renewed. The bodies acked, in order."""
    acked: list[str] = []
    leased_until: dict[str, int] = {}
    for turn in range(400):  # bounds a test that would loop; a pass needs far fewer
        subs = servers[turn % 2].subscriptions
        got = await subs.receive(account, "q", name, 4, LEASE_S)
        if not got:
            if len(acked) >= MESSAGES:
                return acked
            clock.advance(LEASE_S + 1)  # the leases left to run out end
            continue
        now = clock.now()
        for d in got:
            assert leased_until.get(d.message, 0) <= now, f"{d.message} twice within a lease"
            leased_until[d.message] = now + LEASE_S * 1000
        keep = [d for d in got if d.delivery_count > 0 or zlib.crc32(d.message.encode()) % 5]
        if turn == 1 and keep:  # one renewed lease, then acked on its new receipt
            [renewed] = await subs.change_visibility(
                account,
                "q",
                name,
                [VisibilityChange(receipt=keep[0].receipt, invisibility_ms=5000)],
            )
            assert not isinstance(renewed, Exception), renewed
            leased_until[keep[0].message] = now + 5000
            keep[0] = msgspec.structs.replace(keep[0], receipt=renewed)
        outcomes = await subs.ack_batch(account, "q", name, [d.receipt for d in keep])
        assert outcomes == [None] * len(keep), outcomes
        acked += [d.message for d in keep]
    raise AssertionError(f"{name} did not finish: {sorted(acked)}")


@pytest.mark.parametrize("mode", ["before", "after"])
@pytest.mark.parametrize("primitive", PRIMITIVES)
async def test_shared_subscriptions_through_lwt_timeouts(
    cassandra_store: CassandraStore, primitive: str, mode: Mode
) -> None:
    store = TimeoutInjectingStore.beside(cassandra_store, lwt_retry=LwtRetry(base_s=0.001))
    clock = FakeClock()
    servers = [QueueEngine(store, clock, instance_id=f"s{n}") for n in range(2)]
    account = f"sh-{uuid.uuid4().hex[:10]}"
    await servers[0].accounts.create(account)
    await servers[0].create_queue(account, "q", QueueOptions(bucket_size=4, partitions=2))
    for name in ("a", "b"):
        await servers[0].subscriptions.create(account, "q", name, "shared", "earliest")
    await servers[0].send(account, "q", [OutgoingMessage(body=f"m{i}") for i in range(MESSAGES)])
    store.inject(primitive, mode, every=2)

    first_a = await _consume(servers, account, "a", clock)
    first_b = await _consume(servers, account, "b", clock)
    await servers[1].subscriptions.seek(account, "q", "a", SeekTarget(to="earliest"))
    again_a = await _consume(servers, account, "a", clock)
    store.stop()

    assert store.injected[primitive] > 0, f"the workload never sent {primitive}"
    bodies = sorted(f"m{i}" for i in range(MESSAGES))
    for got in (first_a, first_b, again_a):
        assert sorted(got) == bodies  # each acked once: none lost, none acked twice
