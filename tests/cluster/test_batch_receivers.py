"""Concurrent v2 batch receivers on the three-node cluster (RF 3): nothing lost, nothing
delivered twice within its lease, every valid receipt acked.

Three servers (engines with their own caches) on one RF 3 keyspace: two producers send
batches of 10 while eight consumers receive up to 10 and ack them in one batch. Paxos
contention between the servers' conditional batches on one bucket partition makes LWT
timeouts common here, unlike on the single node: each is resolved, never assumed.
Needs the cluster started by `cassieq cassandra start --nodes 3`; fails (never skips)
when it does not answer. Well under a minute.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter

import pytest

from cassieq.engine import QueueEngine
from cassieq.model import OutgoingMessage, QueueOptions
from cassieq.store.cassandra import CassandraStore

pytestmark = pytest.mark.cluster

SERVERS, PRODUCERS, CONSUMERS = 3, 2, 8
MESSAGES, BATCH, LEASE_S = 300, 10, 60  # the lease outlasts the test: no redelivery in it
BOUND_S = 50


async def test_concurrent_batch_receivers_on_three_servers(cluster_store: CassandraStore) -> None:
    servers = [QueueEngine(cluster_store, instance_id=f"s{n}") for n in range(SERVERS)]
    account = f"c-{secrets.token_hex(5)}"
    await servers[0].accounts.create(account)
    await servers[0].create_queue(account, "q", QueueOptions(strict_fifo=False))
    delivered: Counter[str] = Counter()
    stale: list[str] = []
    sent = 0
    deadline = time.monotonic() + BOUND_S

    async def produce(p: int) -> None:
        nonlocal sent
        server = servers[p % SERVERS]
        for b in range(MESSAGES // PRODUCERS // BATCH):
            bodies = [f"p{p}-{b}-{i}" for i in range(BATCH)]
            await server.send(account, "q", [OutgoingMessage(body=x) for x in bodies])
            sent += BATCH

    async def consume(c: int) -> None:
        server = servers[c % SERVERS]
        while sum(delivered.values()) < MESSAGES and time.monotonic() < deadline:
            got = await server.receive(account, "q", BATCH, LEASE_S)
            if not got:
                await asyncio.sleep(0.05)  # a poll interval, as a client's: not a sync
                continue
            delivered.update(d.message for d in got)
            outcomes = await server.ack_batch(account, "q", [d.receipt for d in got])
            stale.extend(d.message for d, o in zip(got, outcomes, strict=True) if o is not None)

    await asyncio.gather(
        *(produce(p) for p in range(PRODUCERS)), *(consume(c) for c in range(CONSUMERS))
    )
    for server in servers:
        await server.settle()

    assert sent == MESSAGES
    assert [m for m, n in delivered.items() if n > 1] == [], "delivered twice within a lease"
    batches = range(MESSAGES // PRODUCERS // BATCH)
    expected = {f"p{p}-{b}-{i}" for p in range(PRODUCERS) for b in batches for i in range(BATCH)}
    assert set(delivered) == expected, f"lost: {sorted(expected - set(delivered))[:10]}"
    assert stale == [], "a valid receipt was called stale"
    stats = await servers[0].statistics(account, "q")
    assert (stats.size, stats.acked) == (0, MESSAGES)
