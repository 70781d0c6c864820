"""Long polling, measured over real time on a real store (the issue's acceptance):

- the store reads per second of N idle waiters on an empty queue, on one server;
- wake-up latency: a put on the same server, and on another server (a second engine on
  the same store), to the waiting receive's answer.

``python -m cassieq.bench.long_polling [keyspace]`` runs both against the Cassandra of the
environment's settings (the keyspace must have the schema); the bench can call
``measure_long_polling`` with its own store.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
import uuid
from typing import Any

from cassieq.config import Settings
from cassieq.engine import QueueEngine
from cassieq.model import QueueOptions
from cassieq.store.base import Store
from cassieq.store.counting import CountingStore


async def idle_reads_per_second(store: Store, waiters: int = 100, seconds: float = 10.0) -> float:
    """Store reads per second of ``waiters`` receives waiting on an empty queue."""
    counting = CountingStore(store)
    engine = QueueEngine(counting)
    account = await _account(engine)
    await engine.create_queue(account, "idle", QueueOptions())
    queue = (await engine.queues.get(account, "idle")).id
    tasks = [
        asyncio.create_task(engine.receive(account, "idle", wait_s=20)) for _ in range(waiters)
    ]
    await engine.waiters.watching(queue, waiters)
    counting.reset()
    started = time.monotonic()
    # A measurement window (real time is what is measured): the receives wait meanwhile.
    await asyncio.sleep(seconds)
    reads = sum(counting.calls.values())
    elapsed = time.monotonic() - started
    await engine.waiters.close()
    await asyncio.gather(*tasks)
    return reads / elapsed


async def wake_latencies_ms(store: Store, rounds: int = 10, *, other_server: bool) -> list[float]:
    """Milliseconds from a put to the waiting receive's answer, ``rounds`` times."""
    engine = QueueEngine(store)
    putter = QueueEngine(store, instance_id="bench-other") if other_server else engine
    account = await _account(engine)
    await engine.create_queue(account, "wake", QueueOptions())
    queue = (await engine.queues.get(account, "wake")).id
    latencies: list[float] = []
    for i in range(rounds):
        waiting = asyncio.create_task(engine.receive(account, "wake", wait_s=20))
        await engine.waiters.watching(queue, 1)
        # Puts land at any phase of the watcher's period, as they would in use.
        await asyncio.sleep((i % 4) * 0.25)
        started = time.monotonic()
        await putter.put(account, "wake", f"m{i}")
        got = await waiting
        latencies.append((time.monotonic() - started) * 1000)
        if len(got) != 1:
            raise RuntimeError(f"a waiting receive answered {len(got)} messages, not 1")
        await engine.ack(account, "wake", got[0].receipt)
    await engine.waiters.close()
    return latencies


async def measure_long_polling(
    store: Store, waiters: int = 100, seconds: float = 10.0
) -> dict[str, Any]:
    same = await wake_latencies_ms(store, other_server=False)
    other = await wake_latencies_ms(store, other_server=True)
    return {
        "idle_waiters": waiters,
        "idle_reads_per_s": round(await idle_reads_per_second(store, waiters, seconds), 2),
        "wake_same_server_ms_p50": round(statistics.median(same), 1),
        "wake_same_server_ms_max": round(max(same), 1),
        "wake_other_server_ms_p50": round(statistics.median(other), 1),
        "wake_other_server_ms_max": round(max(other), 1),
    }


async def _account(engine: QueueEngine) -> str:
    name = f"lp-{uuid.uuid4().hex[:10]}"
    await engine.accounts.create(name)
    return name


async def _main(keyspace: str) -> None:
    from cassieq.store.cassandra import CassandraStore, connect

    settings = Settings.from_env()
    cluster, session = connect(settings.cassandra_hosts, settings.cassandra_port)
    try:
        print(json.dumps(await measure_long_polling(CassandraStore(session, keyspace)), indent=2))
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1] if len(sys.argv) > 1 else Settings.from_env().keyspace))
