"""Long polling: how soon a put wakes a waiting receive, and what idle waiters cost."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from typing import Any

from cassandra.cluster import Session

from cassieq.config import Settings
from cassieq.engine import CallCounter, QueueEngine
from cassieq.store.cassandra import CassandraStore
from cassieq.store.observer import LWT_PRIMITIVES
from cassieq.tools.bench.measure import percentiles
from cassieq.tools.bench.servers import server_process
from cassieq.tools.bench.targets_v2 import BatchTarget, EngineBatchTarget, HttpBatchTarget

WAIT_S = 20  # the longest wait v2 allows: a sample never ends by the wait running out
# Time given a waiting receive to reach its server and park before the put is sent. Part
# of the method, not synchronisation: a put that overtook its waiter would be measured as
# an immediate answer, so a sample whose waiter already returned is counted as missed.
PARK_S = 0.3


async def wake_up_latency(settings: Settings, keyspace: str, samples: int) -> dict[str, Any]:
    """Milliseconds from sending a put to the return of a receive waiting for it, with the
    put on the waiter's server and on another one (two `cassieq serve` processes)."""
    async with contextlib.AsyncExitStack() as stack:
        a = await stack.enter_async_context(server_process(settings, keyspace))
        b = await stack.enter_async_context(
            server_process(settings, keyspace, account=(a.account, a.key))
        )
        waiter = HttpBatchTarget(a.url, a.account, a.key)
        other = HttpBatchTarget(b.url, b.account, b.key)
        stack.push_async_callback(waiter.close)
        stack.push_async_callback(other.close)
        return {
            "same_server": await _wake_ups(waiter, waiter, samples),
            "other_server": await _wake_ups(waiter, other, samples),
        }
    raise AssertionError("unreachable")


async def _wake_ups(waiter: BatchTarget, putter: BatchTarget, samples: int) -> dict[str, Any]:
    queue = f"wake-{secrets.token_hex(4)}"
    await waiter.create_queue(queue)
    latencies: list[float] = []
    missed = 0
    for i in range(samples):
        waiting = asyncio.create_task(waiter.receive(queue, 1, wait_s=WAIT_S))
        await asyncio.sleep(PARK_S)
        early = waiting.done()
        sent = time.perf_counter()
        await putter.send(queue, [f"w-{i}"])
        receipts = await waiting
        returned = time.perf_counter()
        if early or not receipts:
            missed += 1
        else:
            latencies.append((returned - sent) * 1000)
        # Whatever this sample left in the queue must not answer the next one's waiter.
        while receipts:
            await waiter.ack(queue, receipts)
            receipts = await waiter.receive(queue, 10)
    return {
        **percentiles(latencies, p50=0.50, p95=0.95),
        "samples": len(latencies),
        "missed": missed,
    }


async def idle_waiter_reads(
    session: Session, keyspace: str, *, waiters: int, seconds: float
) -> dict[str, Any]:
    """Store reads (and LWTs) per second of ``waiters`` receives waiting on an empty queue,
    on each of two servers (engines of their own on the keyspace, each counting its store
    calls): each server watches the queue for its own waiters.

    Only the waiting is measured: these engines run no background worker (repair and
    deletion passes cost the same with or without waiters). A receive that returned before
    the end of the window (it waits longer than the window) is counted in
    ``returned_early``."""
    counters = {name: CallCounter() for name in ("A", "B")}
    engines = {
        name: QueueEngine(CassandraStore(session, keyspace), observers=[counter])
        for name, counter in counters.items()
    }
    account, queue = f"idle-{secrets.token_hex(4)}", "idle"
    await engines["A"].accounts.create(account)
    await EngineBatchTarget(engines["A"], account).create_queue(queue)
    targets = [EngineBatchTarget(engine, account) for engine in engines.values()]
    tasks = [
        asyncio.create_task(target.receive(queue, 10, wait_s=WAIT_S))
        for target in targets
        for _ in range(waiters)
    ]
    try:
        # Counted from when every receive waits (the first calls fill the caches).
        for engine in engines.values():
            qid = (await engine.queue(account, queue)).id
            await engine.waiters.watching(qid, waiters)
        for counter in counters.values():
            counter.reset()
        started = time.perf_counter()
        await asyncio.sleep(seconds)  # the window: real time is what is measured
        elapsed = time.perf_counter() - started
        calls = {name: dict(counter.calls) for name, counter in counters.items()}
        returned_early = sum(1 for t in tasks if t.done())
    finally:
        # Shutdown's way: every waiting receive answers [] at once.
        for engine in engines.values():
            await engine.release_waiters()
        await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "waiters_per_server": waiters,
        "seconds": round(elapsed, 1),
        "reads_per_s": {name: _per_s(c, elapsed, lwt=False) for name, c in calls.items()},
        "lwts_per_s": {name: _per_s(c, elapsed, lwt=True) for name, c in calls.items()},
        "returned_early": returned_early,
    }


def _per_s(calls: dict[str, int], elapsed: float, *, lwt: bool) -> float:
    n = sum(count for name, count in calls.items() if (name in LWT_PRIMITIVES) == lwt)
    return round(n / elapsed, 2)
