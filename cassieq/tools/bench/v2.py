"""The benchmark's v2 section: batches of 1 and N in process and over /api/v2, LWTs per
message, long-poll wake-up latency and the store reads of idle waiters."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cassandra.cluster import Session

from cassieq.config import Settings
from cassieq.engine import CallCounter, QueueEngine
from cassieq.store.base import Store
from cassieq.tools.bench.cpu import CpuMeter
from cassieq.tools.bench.longpoll import idle_waiter_reads, wake_up_latency
from cassieq.tools.bench.measure import run_clients, throughput
from cassieq.tools.bench.paired import paired_http_e2e, paired_keyspace
from cassieq.tools.bench.servers import server_process
from cassieq.tools.bench.targets_sqs import MAX_SQS_BATCH, SqsBatchTarget
from cassieq.tools.bench.targets_v2 import (
    BatchTarget,
    EngineBatchTarget,
    HttpBatchTarget,
    cycle,
    receive_ack,
)

Say = Callable[[str], None]


@dataclass(frozen=True, kw_only=True)
class V2Settings:
    batches: tuple[int, ...] = (1, 10)
    wake_samples: int = 30
    idle_waiters: int = 100
    idle_seconds: float = 10.0
    # Rounds of v1 v2 v2 v1 turns on one server, for the ratio of their HTTP e2e.
    paired_rounds: int = 2


async def batch_phases(
    target: BatchTarget, clients: int, seconds: float, batch: int
) -> dict[str, Any]:
    """Messages per second: sends, then receive+ack of what was sent, then whole cycles."""
    tag = secrets.token_hex(4)
    queue, cycled = f"v2b-{tag}", f"v2e-{tag}"
    await target.create_queue(queue)
    await target.create_queue(cycled)

    async def send(i: int) -> int:
        await target.send(queue, [f"m-{i}-{n}" for n in range(batch)])
        return batch

    put_rate = await throughput(clients, seconds, send)
    received = await throughput(clients, seconds, lambda _: receive_ack(target, queue, batch))
    cpu = CpuMeter(target.server_pid)
    cpu.start()
    moved, took = await run_clients(clients, seconds, lambda i: cycle(target, cycled, batch, i))
    return {
        "put_per_s": round(put_rate, 1),
        "receive_ack_per_s": round(received, 1),
        "e2e_per_s": round(moved / took, 1),
        # Over the e2e turn: the server's CPU (when it is a process of its own) and this
        # process's, the load generator's, per 1,000 messages through.
        **cpu.per_1000(moved),
        "latency_ms": target.latencies.summary(),
    }


async def lwts_per_message(
    store: Store, account: str, clients: int, seconds: float, batch: int
) -> float:
    """Every LWT the engine sent during send->receive->ack cycles, per message acked. A
    batch primitive (one conditional batch on a partition) counts once: Paxos rounds, not
    rows."""
    counter = CallCounter()
    target = EngineBatchTarget(QueueEngine(store, observers=[counter]), account)
    queue = f"v2lwt-{batch}-{secrets.token_hex(3)}"
    await target.create_queue(queue)
    moved = 0

    async def step(i: int) -> int:
        nonlocal moved
        n = await cycle(target, queue, batch, i)
        moved += n
        return n

    counter.reset()
    await throughput(clients, seconds, step)
    return round(counter.lwts / max(moved, 1), 3)


async def _sqs(
    settings: Settings,
    keyspace: str,
    clients: int,
    seconds: float,
    opts: V2Settings,
    say: Say,
) -> dict[str, Any]:
    """boto3 through the SQS endpoint, the largest of the batches (at most SQS's 10): the
    same phases as the v2 HTTP figures, on a server of its own."""
    batch = min(max(opts.batches), MAX_SQS_BATCH)
    say(f"SQS endpoint through boto3 (server in its own process), batches of {batch} ...")
    async with server_process(settings, keyspace) as server:
        target = SqsBatchTarget(
            server.url, server.account, server.key, clients, server_pid=server.pid
        )
        try:
            return {str(batch): await batch_phases(target, clients, seconds, batch)}
        finally:
            await target.close()


async def run_v2(
    settings: Settings,
    session: Session,
    store: Store,
    *,
    keyspace: str,
    clients: int,
    seconds: float,
    http: bool,
    opts: V2Settings,
    say: Say,
) -> dict[str, Any]:
    """The v2 section of one `cassieq bench` run (the keyspace is the run's)."""
    engine = QueueEngine(store)
    account = f"bench-{secrets.token_hex(4)}"
    await engine.create_account(account)
    out: dict[str, Any] = {"clients": clients, "engine": {}, "lwts_per_message": {}}
    for batch in opts.batches:
        say(f"v2 engine in-process, batches of {batch}, {clients} clients ...")
        out["engine"][str(batch)] = await batch_phases(
            EngineBatchTarget(engine, account), clients, seconds, batch
        )
        say(f"v2 LWTs per message, batches of {batch} ...")
        out["lwts_per_message"][str(batch)] = await lwts_per_message(
            store, account, clients, seconds, batch
        )
    if http:
        out["http"] = {}
        for batch in opts.batches:
            say(f"v2 HTTP API (server in its own process), batches of {batch} ...")
            async with server_process(settings, keyspace) as server:
                target = HttpBatchTarget(
                    server.url, server.account, server.key, server_pid=server.pid
                )
                try:
                    out["http"][str(batch)] = await batch_phases(target, clients, seconds, batch)
                finally:
                    await target.close()
        batch = max(opts.batches)
        say(
            f"v1 and v2 HTTP e2e in turns on one server, batches of {batch}, "
            f"{opts.paired_rounds} rounds ..."
        )
        out["paired_http_e2e"] = await paired_http_e2e(
            settings,
            session,
            paired_keyspace(keyspace),
            clients=clients,
            seconds=seconds,
            batch=batch,
            rounds=opts.paired_rounds,
        )
        out["sqs"] = await _sqs(settings, keyspace, clients, seconds, opts, say)
        say(f"v2 long-poll wake-up, {opts.wake_samples} samples per case ...")
        out["wake_up_ms"] = await wake_up_latency(settings, keyspace, opts.wake_samples)
    say(f"v2 {opts.idle_waiters} idle waiters per server, {opts.idle_seconds} s ...")
    out["idle_waiters"] = await idle_waiter_reads(
        session, keyspace, waiters=opts.idle_waiters, seconds=opts.idle_seconds
    )
    return out
