"""`cassieq bench fifo`: a FIFO queue's end-to-end throughput against a standard queue's, in
the same run (issue 37: FIFO e2e with 16 groups at least 0.5x a standard queue's).

Turns alternate standard, FIFO, FIFO, standard (``rounds`` times), each on a new queue of its
own on a real Cassandra (the single node, or the hosts ``CASSIEQ_CASSANDRA_HOSTS`` names),
served by ``servers`` engines in this process (as `cassieq bench partitions`), for
``seconds``: ``producers`` clients send batches of ``batch`` (on the FIFO queue a producer
owns some of the groups and sends a batch to each in turn, so each group's messages go in
order; the dedup id is the body), ``consumers`` clients
receive up to ``batch`` and ack what they got in one batch. Reported per turn and per kind:
messages acked per second (e2e), sent per second, e2e latency, sends refused for contention
(sent again, as a client does after a 503), store calls and LWT rounds
per message sent (where a turn's work went); the ratio FIFO / standard of
the kinds' mean e2e.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from cassieq.config import Settings
from cassieq.engine import CallCounter, QueueEngine
from cassieq.engine.errors import Contention
from cassieq.model import DeduplicationScope, OutgoingMessage, QueueOptions
from cassieq.store.cassandra import (
    CassandraStore,
    apply_schema,
    connect,
    default_schema_dir,
    drop_keyspace,
)

Kind = Literal["standard", "fifo"]
LEASE_S = 60  # no message comes back during a turn
TARGET_RATIO = 0.5  # issue 37's acceptance


@dataclass(frozen=True)
class FifoBench:
    groups: int = 16
    servers: int = 3
    producers: int = 16
    consumers: int = 8
    seconds: float = 10.0
    batch: int = 10
    rounds: int = 1
    partitions: int = 1
    dedup_ids: bool = True  # FIFO sends carry a deduplication id (False: what it costs)
    # The FIFO queue's deduplication scope: "messageGroup" claims a group's ids together.
    dedup_scope: DeduplicationScope = "queue"


def turn_order(rounds: int) -> list[Kind]:
    """standard fifo fifo standard, ``rounds`` times: each kind as often first as last."""
    one: list[Kind] = ["standard", "fifo", "fifo", "standard"]
    return one * rounds


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


async def _turn(
    engines: list[QueueEngine],
    counter: CallCounter,
    account: str,
    kind: Kind,
    n: int,
    bench: FifoBench,
) -> dict[str, Any]:
    queue = f"{kind}-{n}"
    options = QueueOptions(fifo=kind == "fifo", partitions=bench.partitions)
    if kind == "fifo":
        options = msgspec.structs.replace(options, deduplication_scope=bench.dedup_scope)
    await engines[0].create_queue(account, queue, options)
    for engine in engines[1:]:
        await engine.queue(account, queue)
    sent_at: dict[str, float] = {}
    e2e_latency: list[float] = []
    acked = sent = contended = 0
    deadline = time.monotonic() + bench.seconds
    counter.reset()

    async def produce(client: int) -> None:
        nonlocal sent, contended
        engine = engines[client % len(engines)]
        # A FIFO producer owns the groups client, client + producers, ... and sends to them in
        # turn, a batch at a time: each group's messages go in order, and every group is fed
        # whatever the number of producers.
        owned = [f"g{g:02d}" for g in range(client, bench.groups, bench.producers)]
        if kind == "fifo" and not owned:
            return  # more producers than groups
        k = 0
        while time.monotonic() < deadline:
            bodies = [f"{queue}-{client}-{k + i}" for i in range(bench.batch)]
            group = owned[(k // bench.batch) % len(owned)] if kind == "fifo" else None
            k += bench.batch
            start = time.monotonic()
            outgoing = [
                OutgoingMessage(
                    body=b, group=group, dedup_id=b if group and bench.dedup_ids else None
                )
                for b in bodies
            ]
            try:
                await engine.send(account, queue, outgoing)
            except Contention:
                # The put's compare-and-sets kept losing (the API answers 503): a client
                # sends again; with deduplication ids, FIFO's retry is answered as a duplicate.
                contended += 1
                k -= bench.batch
                continue
            for b in bodies:
                sent_at[b] = start
            sent += len(bodies)

    async def consume(client: int) -> None:
        nonlocal acked
        engine = engines[client % len(engines)]
        while time.monotonic() < deadline:
            got = await engine.receive(account, queue, bench.batch, LEASE_S)
            if not got:
                await asyncio.sleep(0.005)
                continue
            await engine.ack_batch(account, queue, [d.receipt for d in got])
            now = time.monotonic()
            acked += len(got)
            e2e_latency.extend(now - sent_at[d.message] for d in got if d.message in sent_at)

    started = time.monotonic()
    await asyncio.gather(
        *(produce(i) for i in range(bench.producers)),
        *(consume(i) for i in range(bench.consumers)),
    )
    elapsed = time.monotonic() - started
    for engine in engines:
        await engine.settle()
    return {
        **_figures(kind, sent, acked, elapsed, e2e_latency, counter),
        "sends_contended": contended,
    }


def _figures(
    kind: Kind,
    sent: int,
    acked: int,
    elapsed: float,
    e2e_latency: list[float],
    counter: CallCounter,
) -> dict[str, Any]:
    # Where the turn's store work went: calls and LWTs per message sent, by primitive.
    per = max(sent, 1)
    return {
        "kind": kind,
        "e2e_per_s": round(acked / elapsed, 1),
        "sent_per_s": round(sent / elapsed, 1),
        "e2e_p50_ms": _pct(e2e_latency, 0.5),
        "e2e_p99_ms": _pct(e2e_latency, 0.99),
        "messages_sent": sent,
        "messages_acked": acked,
        "store_calls_per_sent": {
            name: round(count / per, 3) for name, count in counter.calls.most_common()
        },
        "lwt_rounds_per_sent": round(sum(counter.lwt_events.values()) / per, 3),
    }


async def run_fifo_bench(
    settings: Settings, *, keyspace: str, bench: FifoBench, say: Callable[[str], None]
) -> dict[str, Any]:
    cluster, session = connect(settings.cassandra_hosts, settings.cassandra_port)
    turns: list[dict[str, Any]] = []
    try:
        drop_keyspace(session, keyspace)
        apply_schema(session, keyspace, settings.replication, default_schema_dir())
        store = CassandraStore(session, keyspace)
        counter = CallCounter()
        engines = [
            QueueEngine(store, instance_id=f"bench-{i}", observers=[counter])
            for i in range(bench.servers)
        ]
        account = f"bf-{secrets.token_hex(5)}"
        await engines[0].create_account(account)
        for n, kind in enumerate(turn_order(bench.rounds)):
            say(f"turn {n + 1}: {kind} ({bench.seconds} s) ...")
            turns.append(await _turn(engines, counter, account, kind, n, bench))
    finally:
        cluster.shutdown()
    return summarise(turns, bench, settings)


def summarise(turns: list[dict[str, Any]], bench: FifoBench, settings: Settings) -> dict[str, Any]:
    means = {
        kind: round(sum(t["e2e_per_s"] for t in ts) / len(ts), 1)
        for kind in ("standard", "fifo")
        if (ts := [t for t in turns if t["kind"] == kind])
    }
    ratio = round(means["fifo"] / max(means["standard"], 1e-9), 3) if len(means) == 2 else None
    return {
        "hosts": list(settings.cassandra_hosts),
        "replication": settings.replication,
        "settings": {
            "groups": bench.groups,
            "servers": bench.servers,
            "producers": bench.producers,
            "consumers": bench.consumers,
            "batch": bench.batch,
            "seconds": bench.seconds,
            "rounds": bench.rounds,
            "partitions": bench.partitions,
            "dedup_ids": bench.dedup_ids,
            "dedup_scope": bench.dedup_scope,
        },
        "turns": turns,
        "standard_e2e_per_s": means.get("standard"),
        "fifo_e2e_per_s": means.get("fifo"),
        "ratio": ratio,
        "target_ratio": TARGET_RATIO,
        "meets_target": ratio is not None and ratio >= TARGET_RATIO,
    }


def fifo_table(result: dict[str, Any]) -> str:
    s = result["settings"]
    lines = [
        f"{s['groups']} groups, engines {s['servers']}, producers {s['producers']}, consumers "
        f"{s['consumers']}, batches of {s['batch']}, {s['seconds']} s a turn"
        + (
            f", deduplication scope {s.get('dedup_scope', 'queue')}"
            if s["dedup_ids"]
            else ", FIFO sends without deduplication ids"
        ),
        f"{'turn':>4} {'kind':<9} {'e2e/s':>8} {'sent/s':>8} {'e2e p50':>8} {'e2e p99':>8}",
    ]
    for n, t in enumerate(result["turns"], 1):
        lines.append(
            f"{n:>4} {t['kind']:<9} {t['e2e_per_s']:>8} {t['sent_per_s']:>8} "
            f"{t['e2e_p50_ms']!s:>8} {t['e2e_p99_ms']!s:>8}"
        )
    verdict = "meets" if result["meets_target"] else "below"
    lines.append(
        f"standard {result['standard_e2e_per_s']} msg/s, FIFO {result['fifo_e2e_per_s']} msg/s: "
        f"ratio {result['ratio']} ({verdict} the target {result['target_ratio']})"
    )
    return "\n".join(lines)
