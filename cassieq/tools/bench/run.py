"""`cassieq bench`: throughput and latency against a real Cassandra, next to its LWT ceiling."""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Callable
from typing import Any

from cassieq.config import Settings
from cassieq.engine import CallCounter, QueueEngine
from cassieq.engine.errors import Contention
from cassieq.model import QueueOptions
from cassieq.store.base import Store
from cassieq.store.cassandra import (
    CassandraStore,
    SchemaError,
    apply_schema,
    check_keyspace,
    connect,
    default_schema_dir,
    drop_keyspace,
    server_version,
)
from cassieq.store.observer import BUCKET_PARTITION_LWTS
from cassieq.tools.bench.ceiling import raw_cas_rate
from cassieq.tools.bench.cpu import CpuMeter
from cassieq.tools.bench.history import write_processed_history
from cassieq.tools.bench.measure import rate, run_clients
from cassieq.tools.bench.paired import paired_keyspace
from cassieq.tools.bench.servers import http_target
from cassieq.tools.bench.targets import EngineTarget, Target, get_ack, put_get_ack
from cassieq.tools.bench.v2 import V2Settings, run_v2
from cassieq.tools.bench.verdict import acceptance, apart_http_e2e_ratio, api_cost
from cassieq.tools.bench.workers import run_workers

Say = Callable[[str], None]


async def phases(target: Target, clients: int, seconds: float) -> dict[str, Any]:
    """put, then get+ack of what was put, then put->get->ack cycles; on fresh queues."""
    tag = secrets.token_hex(4)
    queue, cycle = f"b-{tag}", f"e-{tag}"
    await target.create_queue(queue)
    await target.create_queue(cycle)

    async def put(i: int) -> bool:
        await target.put(queue, f"m-{i}")
        return True

    async def through(i: int) -> int:
        return int(await put_get_ack(target, cycle, f"c-{i}"))

    put_rate = await rate(clients, seconds, put)
    get_ack_rate = await rate(clients, seconds, lambda _: get_ack(target, queue))
    cpu = CpuMeter(target.server_pid)
    cpu.start()
    moved, took = await run_clients(clients, seconds, through)
    return {
        "put_per_s": round(put_rate, 1),
        "get_ack_per_s": round(get_ack_rate, 1),
        "e2e_per_s": round(moved / took, 1),
        # Over the e2e turn (cassieq.tools.bench.cpu).
        **cpu.per_1000(moved),
        "latency_ms": target.latencies.summary(),
    }


async def run_bench(
    settings: Settings,
    *,
    keyspace: str,
    clients: list[int],
    seconds: float,
    backlog: int,
    http: bool,
    say: Say,
    v2: V2Settings | None = None,
    workers: list[int] | None = None,
) -> dict[str, Any]:
    """The whole run; ``v2`` None leaves out the v2 section (and the acceptance rows);
    ``workers``: the `cassieq serve --workers` counts whose HTTP e2e is measured."""
    if http and v2 is not None:
        # Refused now rather than five minutes into the run.
        check_keyspace(paired_keyspace(keyspace), SchemaError)
    cluster, session = connect(settings.cassandra_hosts, settings.cassandra_port)
    try:
        # A keyspace of its own, emptied first: queues left by an earlier run would give
        # the servers' repair loops work that has nothing to do with this run.
        drop_keyspace(session, keyspace)
        apply_schema(session, keyspace, settings.replication, default_schema_dir())
        result: dict[str, Any] = {
            "date": time.strftime("%Y-%m-%d"),
            "cassandra": server_version(session),
            "cores": os.cpu_count(),
            "seconds_per_measurement": seconds,
        }
        top = max(clients)
        store = CassandraStore(session, keyspace)
        result["raw_lwt_per_s"], result["engine"] = {}, {}
        if http:
            result["http"] = {}
        for c in clients:
            # The ceiling, the engine and the HTTP API at one concurrency are measured one
            # after the other: this machine's speed drifts by tens of percent over minutes,
            # their ratios much less.
            say(f"raw LWT ceiling, {c} clients ...")
            raw = await raw_cas_rate(session, keyspace, c, seconds)
            result["raw_lwt_per_s"][str(c)] = round(raw, 1)
            if c == top:
                say("LWTs on one partition (the messages of one bucket) ...")
                result["raw_lwt_one_partition_per_s"] = round(
                    await raw_cas_rate(session, keyspace, top, seconds, one_partition=True), 1
                )
            say(f"engine in-process, {c} clients ...")
            engine = QueueEngine(store)
            account = await _account(engine)
            result["engine"][str(c)] = await phases(EngineTarget(engine, account), c, seconds)
            if http:
                # A server of its own for each concurrency, running only while it is
                # measured: its repair loop (every server runs one, for every queue) must
                # not do its work during the other measurements.
                say(f"HTTP API (server in its own process), {c} clients ...")
                async with http_target(settings, keyspace) as over_http:
                    result["http"][str(c)] = await phases(over_http, c, seconds)
        if http:
            engine_e2e = result["engine"][str(top)]["e2e_per_s"]
            result["http_over_engine_e2e"] = round(
                result["http"][str(top)]["e2e_per_s"] / max(engine_e2e, 0.001), 2
            )
        if http and workers:
            result["workers"], result["workers_http_e2e_last_over_first"] = await run_workers(
                settings, keyspace, counts=workers, clients=top, seconds=seconds,
                measure=phases, say=say,
            )  # fmt: skip
        (
            result["lwts_per_message"],
            result["message_partition_lwts_per_message"],
        ) = await _lwts_per_message(store, top, seconds)
        say(f"puts, one compare-and-set per put, {top} clients ...")
        per_put = QueueEngine(store, monotons="per_put")
        target = EngineTarget(per_put, await _account(per_put))
        await target.create_queue("per-put")

        failed = 0

        async def put(i: int) -> bool:
            nonlocal failed
            try:
                await target.put("per-put", f"m-{i}")
            except Contention:
                failed += 1  # the retry storm this strategy is known for: counted, not fatal
                return False
            return True

        per_put_rate = await rate(top, seconds, put)
        result["per_put_strategy_gave_up"] = failed
        result["put_per_s_per_put_strategy"] = round(per_put_rate, 1)
        result["grouped_over_per_put"] = round(
            result["engine"][str(top)]["put_per_s"] / max(per_put_rate, 0.001), 2
        )
        say(f"backlog: {backlog} processed messages behind the reader ...")
        result["backlog_ratio"] = await _backlog_ratio(store, top, seconds, backlog)
        if v2 is not None:
            result["v2"] = await run_v2(
                settings,
                session,
                store,
                keyspace=keyspace,
                clients=top,
                seconds=seconds,
                http=http,
                opts=v2,
                say=say,
            )
            result["acceptance"] = acceptance(result)
            # The ratio from the two sections' own figures, minutes apart (not judged).
            result["v2"]["http_e2e_ratio_minutes_apart"] = apart_http_e2e_ratio(result)
        if http:
            result["api_cost"] = api_cost(result)
        raw = result["raw_lwt_per_s"][str(top)]
        result["min_lwts_per_message"] = MIN_LWTS_PER_MESSAGE
        result["e2e_over_lwt_bound"] = round(
            result["engine"][str(top)]["e2e_per_s"] / (raw / MIN_LWTS_PER_MESSAGE), 2
        )
        return result
    finally:
        cluster.shutdown()


# A delivery and its ack are each an LWT on the message (engine.md: every state change is
# conditioned on the version read); a put's monoton and insert can be shared by a group.
MIN_LWTS_PER_MESSAGE = 2


async def _lwts_per_message(store: Store, clients: int, seconds: float) -> tuple[float, float]:
    """Every LWT the engine sent during put->get->ack cycles, per message cycled; and those
    of them that ran on a bucket partition."""
    counter = CallCounter()
    engine = QueueEngine(store, observers=[counter])
    target = EngineTarget(engine, await _account(engine))
    await target.create_queue("lwt-count")
    counter.reset()
    cycled = await rate(clients, seconds, lambda i: put_get_ack(target, "lwt-count", f"c-{i}"))
    cycled = max(cycled * seconds, 1)
    on_buckets = sum(counter.calls[name] for name in BUCKET_PARTITION_LWTS)
    return round(counter.lwts / cycled, 2), round(on_buckets / cycled, 2)


async def _account(engine: QueueEngine) -> str:
    name = f"bench-{secrets.token_hex(4)}"
    await engine.create_account(name)
    return name


async def _backlog_ratio(store: Store, clients: int, seconds: float, backlog: int) -> float:
    engine = QueueEngine(store)
    account = await _account(engine)
    target = EngineTarget(engine, account)
    rates = []
    for name, history in (("fresh", 0), ("history", backlog)):
        queue, _ = await engine.create_queue(account, name, QueueOptions())
        if history:
            await write_processed_history(store, queue, history)
        stock = int(seconds * 400) + 200
        await asyncio.gather(*(engine.put(account, name, f"s-{i}") for i in range(stock)))

        async def step(_: int, queue: str = name) -> bool:
            return await get_ack(target, queue)

        rates.append(await rate(clients, seconds, step))
    return round(rates[1] / max(rates[0], 0.001), 2)
