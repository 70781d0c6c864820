"""`cassieq bench subscriptions`: what a put costs with 0 and with N subscriptions.

A subscription reads the queue's own rows (no copy), so a put must cost the same LWTs and
writes whatever the number of subscriptions (issue 36). For each count, on a real Cassandra
(the single node, or the cluster ``CASSIEQ_CASSANDRA_HOSTS`` names): a queue of its own with
that many subscriptions (every other one shared, the rest ordered), ``messages`` puts by
``producers`` clients through one engine whose store calls are counted, while each
subscription is consumed by another engine (its calls not counted: they are the
subscriptions' own): an ordered one read and committed, a shared one received and acked.
Reported per count: store calls per put by primitive (the queue definition's cache
refreshes apart: they follow the run's length), LWT calls and LWT attempts (every try:
applied, not applied, timed out) per put, puts per second, and what each subscription read.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cassieq.config import Settings
from cassieq.engine import CallCounter, QueueEngine
from cassieq.model import QueueOptions
from cassieq.model_subscriptions import SubscriptionMode
from cassieq.store.cassandra import CassandraStore
from cassieq.tools.bench.keyspace import fresh_store


@dataclass(frozen=True)
class SubscriptionBench:
    counts: tuple[int, ...] = (0, 10)
    messages: int = 500
    producers: int = 1  # one: every put its own monoton and insert, so counts compare exactly


async def _one_count(
    store: CassandraStore, count: int, bench: SubscriptionBench, say: Callable[[str], None]
) -> dict[str, Any]:
    counter = CallCounter()
    putter = QueueEngine(store, instance_id="bench-put", observers=[counter])
    # The readers' store is another object on the same session: the counter hears the LWT
    # outcomes of its own store only (the subscriptions' commits are theirs, not a put's).
    readers_store = CassandraStore(store._session, store.keyspace)
    reader = QueueEngine(readers_store, instance_id="bench-read")
    account = f"bs-{secrets.token_hex(5)}"
    await putter.create_account(account)
    await putter.create_queue(account, "q", QueueOptions())
    names = [f"s{n}" for n in range(count)]
    for n, name in enumerate(names):
        mode: SubscriptionMode = "shared" if n % 2 else "ordered"
        await reader.subscriptions.create(account, "q", name, mode, "earliest")
    await putter.put(account, "q", "warm")  # the caches a first put fills
    counter.reset()
    done = asyncio.Event()
    read = dict.fromkeys(names, 0)

    async def produce(client: int) -> None:
        for i in range(client, bench.messages, bench.producers):
            await putter.put(account, "q", f"m{i}")

    async def subscribe(name: str) -> None:
        subs, shared = reader.subscriptions, names.index(name) % 2 == 1
        while True:
            if shared:
                got = await subs.receive(account, "q", name, 100, 60)
                if got:
                    await subs.ack_batch(account, "q", name, [d.receipt for d in got])
                count = len(got)
            else:
                batch = await subs.read(account, "q", name, 100)
                if batch.messages:
                    await subs.commit(account, "q", name, batch.next, None)
                count = len(batch.messages)
            read[name] += count
            if count:
                continue
            if done.is_set() and (await subs.get(account, "q", name)).lag == 0:
                return
            await asyncio.sleep(0.02)  # a reader's poll interval

    async def producers() -> None:
        await asyncio.gather(*(produce(c) for c in range(bench.producers)))
        done.set()

    started = time.monotonic()
    await asyncio.gather(producers(), *(subscribe(n) for n in names))
    seconds = time.monotonic() - started
    await putter.settle()
    puts = bench.messages
    attempts = sum(counter.lwt_events.values())
    # The queue's definition is re-read when this server's cached copy ages out: that count
    # follows the run's length, not the puts (a slower run re-reads more often).
    refreshes = counter.calls.pop("read_queue", 0)
    row = {
        "subscriptions": count,
        "puts": puts,
        "puts_per_s": round(puts / seconds, 1),
        "store_calls_per_put": round(sum(counter.calls.values()) / puts, 4),
        "lwt_calls_per_put": round(counter.lwts / puts, 4),
        "lwt_attempts_per_put": round(attempts / puts, 4),
        "calls_by_primitive": dict(sorted(counter.calls.items())),
        "queue_definition_refreshes": refreshes,
        "read_by_each_subscription": sorted(set(read.values())),
    }
    say(
        f"{count} subscriptions: {row['store_calls_per_put']} store calls, "
        f"{row['lwt_attempts_per_put']} LWT attempts per put"
    )
    return row


async def run_subscriptions(
    settings: Settings, *, keyspace: str, bench: SubscriptionBench, say: Callable[[str], None]
) -> dict[str, Any]:
    with fresh_store(settings, keyspace) as store:
        rows = [await _one_count(store, c, bench, say) for c in bench.counts]
    first = rows[0]
    return {
        "hosts": list(settings.cassandra_hosts),
        "replication": settings.replication,
        "producers": bench.producers,
        "subscriptions": rows,
        # Each count against the first, in this one run.
        "ratios": [
            {
                "subscriptions": r["subscriptions"],
                "store_calls_per_put": round(
                    r["store_calls_per_put"] / max(first["store_calls_per_put"], 1e-9), 4
                ),
                "lwt_attempts_per_put": round(
                    r["lwt_attempts_per_put"] / max(first["lwt_attempts_per_put"], 1e-9), 4
                ),
                "same_calls_by_primitive": r["calls_by_primitive"] == first["calls_by_primitive"],
            }
            for r in rows
        ],
    }


def subscriptions_table(result: dict[str, Any]) -> str:
    lines = [
        f"producers {result['producers']}",
        f"{'subs':>4} {'puts/s':>8} {'calls/put':>9} {'LWT/put':>8} {'attempts/put':>12} read",
    ]
    for r in result["subscriptions"]:
        lines.append(
            f"{r['subscriptions']:>4} {r['puts_per_s']:>8} {r['store_calls_per_put']:>9} "
            f"{r['lwt_calls_per_put']:>8} {r['lwt_attempts_per_put']:>12} "
            f"{r['read_by_each_subscription']}"
        )
    for ratio in result["ratios"]:
        lines.append(
            f"{ratio['subscriptions']} ÷ {result['subscriptions'][0]['subscriptions']}: calls "
            f"{ratio['store_calls_per_put']}, LWT attempts {ratio['lwt_attempts_per_put']}, "
            f"same calls by primitive: {ratio['same_calls_by_primitive']}"
        )
    return "\n".join(lines)
