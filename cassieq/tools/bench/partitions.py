"""`cassieq bench partitions` (and `cassieq bench --partitions`): one queue, 1..N partitions.

For each partition count, a queue of its own on a real Cassandra (the single node, or the
cluster ``CASSIEQ_CASSANDRA_HOSTS`` names), served by ``servers`` engines in this process
(each a server: its own caches, put groups and instance id, sharing one driver session),
with ``producers`` clients putting single messages (v1's put) or batches (v2's send) and
``consumers`` clients receiving batches of 10 and acking them, for ``seconds``.

Reported per count: end-to-end messages per second (acked), LWT attempts per message (every
LWT the store sent: applied, not applied, timed out — from the store's LWT observer), CAS
retries per message (attempts not applied), put and end-to-end latency percentiles. The
model these figures feed is in docs/design/capacity-model.md.
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
from cassieq.engine.life.monotons import MonotonStrategy
from cassieq.model import OutgoingMessage, QueueOptions
from cassieq.store.cassandra import CassandraStore
from cassieq.tools.bench.keyspace import fresh_store

NOT_APPLIED = ("lost", "timeout_rejected")


@dataclass(frozen=True)
class PartitionBench:
    counts: tuple[int, ...] = (1, 4, 16)
    servers: int = 3
    producers: int = 32
    consumers: int = 8
    seconds: float = 10.0
    batch: int = 1  # messages per put call (1: v1's put; more: a v2 send)
    # "grouped" (the engine's default) or "per_put": a monoton compare-and-set for every
    # put, the original design, whose contention on one partition partitions divide.
    put_strategy: MonotonStrategy = "grouped"


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


async def _one_count(
    store: CassandraStore, partitions: int, bench: PartitionBench, say: Callable[[str], None]
) -> dict[str, Any]:
    counter = CallCounter()
    engines = [
        QueueEngine(
            store, instance_id=f"bench-{i}", observers=[counter], monotons=bench.put_strategy
        )
        for i in range(bench.servers)
    ]
    account = f"bp-{secrets.token_hex(5)}"
    await engines[0].create_account(account)
    queue = f"p{partitions}"
    await engines[0].create_queue(account, queue, QueueOptions(partitions=partitions))
    for engine in engines[1:]:
        await engine.queue(account, queue)
    sent_at: dict[str, float] = {}
    put_latency: list[float] = []
    e2e_latency: list[float] = []
    acked = 0
    put = 0
    deadline = time.monotonic() + bench.seconds
    counter.reset()

    async def produce(client: int) -> None:
        nonlocal put
        engine = engines[client % len(engines)]
        n = 0
        while time.monotonic() < deadline:
            bodies = [f"{client}-{n + i}" for i in range(bench.batch)]
            n += bench.batch
            start = time.monotonic()
            if bench.batch == 1:
                await engine.put(account, queue, bodies[0])
            else:
                await engine.send(account, queue, [OutgoingMessage(body=b) for b in bodies])
            put_latency.append(time.monotonic() - start)
            for b in bodies:
                sent_at[b] = start
            put += bench.batch

    async def consume(client: int) -> None:
        nonlocal acked
        engine = engines[client % len(engines)]
        while time.monotonic() < deadline:
            got = await engine.receive(account, queue, 10, 60)
            if not got:
                await asyncio.sleep(0.005)
                continue
            await engine.ack_batch(account, queue, [d.receipt for d in got])
            now = time.monotonic()
            acked += len(got)
            e2e_latency.extend(now - sent_at[d.message] for d in got if d.message in sent_at)

    say(f"partitions={partitions}: {bench.producers} producers, {bench.consumers} consumers ...")
    started = time.monotonic()
    await asyncio.gather(
        *(produce(i) for i in range(bench.producers)),
        *(consume(i) for i in range(bench.consumers)),
    )
    elapsed = time.monotonic() - started
    for engine in engines:
        await engine.settle()
    events = counter.lwt_events
    attempts = sum(events.values())
    not_applied = sum(n for (_, e), n in events.items() if e in NOT_APPLIED)
    timed_out = sum(
        n for (_, e), n in events.items() if e.startswith("timeout") or e == "undecided"
    )
    put_lwts = sum(n for (p, _), n in events.items() if p in ("cas_monoton", "insert_messages"))
    monoton_lost = sum(n for (p, e), n in events.items() if p == "cas_monoton" and e == "lost")
    return {
        "partitions": partitions,
        "put_per_s": round(put / elapsed, 1),
        "e2e_per_s": round(acked / elapsed, 1),
        "lwt_attempts_per_message": round(attempts / max(put, 1), 3),
        "put_lwt_attempts_per_put": round(put_lwts / max(put, 1), 3),
        "cas_retries_per_message": round(not_applied / max(put, 1), 3),
        "monoton_cas_retries_per_put": round(monoton_lost / max(put, 1), 3),
        "lwt_timeouts": timed_out,
        "put_p50_ms": _pct(put_latency, 0.5),
        "put_p99_ms": _pct(put_latency, 0.99),
        "e2e_p50_ms": _pct(e2e_latency, 0.5),
        "e2e_p99_ms": _pct(e2e_latency, 0.99),
        "messages_put": put,
        "messages_acked": acked,
        # Per message put: each primitive's LWTs by outcome (where the attempts go).
        "lwt_per_message_by_primitive": {
            primitive: {
                event: round(n / max(put, 1), 4)
                for (p, event), n in sorted(events.items())
                if p == primitive
            }
            for primitive in sorted({p for p, _ in events})
        },
    }


async def run_partitions(
    settings: Settings, *, keyspace: str, bench: PartitionBench, say: Callable[[str], None]
) -> dict[str, Any]:
    with fresh_store(settings, keyspace) as store:
        rows = [await _one_count(store, p, bench, say) for p in bench.counts]
    first = rows[0]
    return {
        "hosts": list(settings.cassandra_hosts),
        "replication": settings.replication,
        "servers": bench.servers,
        "producers": bench.producers,
        "consumers": bench.consumers,
        "batch": bench.batch,
        "put_strategy": bench.put_strategy,
        "seconds": bench.seconds,
        "partitions": rows,
        # Each count against the first (one run: this machine's speed drifts between runs).
        "ratios": [
            {
                "partitions": r["partitions"],
                "e2e": round(r["e2e_per_s"] / max(first["e2e_per_s"], 1e-9), 3),
                "lwt_attempts_per_message": round(
                    r["lwt_attempts_per_message"] / max(first["lwt_attempts_per_message"], 1e-9),
                    3,
                ),
            }
            for r in rows
        ],
    }


def partitions_table(result: dict[str, Any]) -> str:
    head = (
        f"{'parts':>5} {'e2e/s':>8} {'put/s':>8} {'LWT/msg':>8} {'retry/msg':>9} "
        f"{'put p99':>8} {'e2e p99':>8}"
    )
    lines = [
        f"servers {result['servers']}, producers {result['producers']}, consumers "
        f"{result['consumers']}, batch {result['batch']}, puts {result['put_strategy']}, "
        f"{result['seconds']} s each",
        head,
    ]
    for r in result["partitions"]:
        lines.append(
            f"{r['partitions']:>5} {r['e2e_per_s']:>8} {r['put_per_s']:>8} "
            f"{r['lwt_attempts_per_message']:>8} {r['cas_retries_per_message']:>9} "
            f"{r['put_p99_ms']!s:>8} {r['e2e_p99_ms']!s:>8}"
        )
    return "\n".join(lines)
