"""What the benchmark's v2 section drives: batches, in process or over /api/v2."""

from __future__ import annotations

import time
from typing import Any, Protocol

import aiohttp

from cassieq.engine import QueueEngine
from cassieq.model import OutgoingMessage, QueueOptions
from cassieq.tools.bench.measure import Latencies

LEASE_S = 60  # long enough that no message comes back during a measurement
# A cycle's receives until its own batch is through: others' messages count as well, so
# this only ends a cycle whose messages someone else holds.
CYCLE_RECEIVES = 100


class BatchTarget(Protocol):
    latencies: Latencies
    server_pid: int | None  # a server process's, whose CPU a turn measures; None in process

    async def create_queue(self, name: str) -> None: ...

    async def send(self, queue: str, bodies: list[str]) -> None: ...

    async def receive(self, queue: str, max_messages: int, wait_s: int = 0) -> list[Any]:
        """The receipts of up to ``max_messages`` deliveries ([]: none came)."""
        ...

    async def ack(self, queue: str, receipts: list[Any]) -> int:
        """How many of them were acked."""
        ...


class EngineBatchTarget:
    server_pid: int | None = None

    def __init__(self, engine: QueueEngine, account: str) -> None:
        self.engine, self.account, self.latencies = engine, account, Latencies()

    async def create_queue(self, name: str) -> None:
        await self.engine.create_queue(self.account, name, QueueOptions())

    async def send(self, queue: str, bodies: list[str]) -> None:
        started = time.perf_counter()
        await self.engine.send(self.account, queue, [OutgoingMessage(body=b) for b in bodies])
        self.latencies.timed("send", started)

    async def receive(self, queue: str, max_messages: int, wait_s: int = 0) -> list[Any]:
        started = time.perf_counter()
        got = await self.engine.receive(self.account, queue, max_messages, LEASE_S, wait_s=wait_s)
        if not wait_s:
            self.latencies.timed("receive", started)
        return [d.receipt for d in got]

    async def ack(self, queue: str, receipts: list[Any]) -> int:
        started = time.perf_counter()
        failed = await self.engine.ack_batch(self.account, queue, receipts)
        self.latencies.timed("ack", started)
        return sum(1 for f in failed if f is None)


class HttpBatchTarget:
    """A server's /api/v2 message routes over HTTP, with aiohttp (see HttpTarget for why).

    Queues are created through v1: the v2 message routes work on any queue, and this keeps
    the section independent of the v2 queue routes."""

    def __init__(self, url: str, account: str, key: str, server_pid: int | None = None) -> None:
        self.account, self.latencies, self.server_pid = account, Latencies(), server_pid
        self._v1 = f"{url}/api/v1/accounts/{account}/queues"
        self._v2 = f"{url}/api/v2/accounts/{account}/queues"
        self._session = aiohttp.ClientSession(
            headers={"Authorization": f"Key {key}"},
            connector=aiohttp.TCPConnector(limit=256),
            # Above the longest wait a receive asks for (20 s).
            timeout=aiohttp.ClientTimeout(total=40),
        )

    async def close(self) -> None:
        await self._session.close()

    async def create_queue(self, name: str, options: dict[str, Any] | None = None) -> None:
        """``options``: more of the v1 create options, by their wire names."""
        body = {"queueName": name, **(options or {})}
        async with self._session.post(self._v1, json=body) as response:
            response.raise_for_status()

    async def send(self, queue: str, bodies: list[str]) -> None:
        started = time.perf_counter()
        body = {"messages": [{"body": b} for b in bodies]}
        async with self._session.post(f"{self._v2}/{queue}/messages", json=body) as response:
            response.raise_for_status()
        self.latencies.timed("send", started)

    async def receive(self, queue: str, max_messages: int, wait_s: int = 0) -> list[Any]:
        started = time.perf_counter()
        body = {
            "maxMessages": max_messages,
            "waitSeconds": wait_s,
            "visibilityTimeoutSeconds": LEASE_S,
        }
        async with self._session.post(
            f"{self._v2}/{queue}/messages/receive", json=body
        ) as response:
            response.raise_for_status()
            messages = (await response.json())["messages"]
        if not wait_s:
            self.latencies.timed("receive", started)
        return [m["popReceipt"] for m in messages]

    async def ack(self, queue: str, receipts: list[Any]) -> int:
        started = time.perf_counter()
        async with self._session.post(
            f"{self._v2}/{queue}/messages/ack", json={"popReceipts": receipts}
        ) as response:
            response.raise_for_status()
            acked = len((await response.json())["acked"])
        self.latencies.timed("ack", started)
        return acked


async def receive_ack(target: BatchTarget, queue: str, batch: int) -> int:
    """One batch receive and the ack of what came; how many were acked."""
    receipts = await target.receive(queue, batch)
    return await target.ack(queue, receipts) if receipts else 0


async def cycle(target: BatchTarget, queue: str, batch: int, client: int) -> int:
    """A batch through: send it, then receive and ack batches until as many are acked."""
    await target.send(queue, [f"c-{client}-{i}" for i in range(batch)])
    moved = 0
    for _ in range(CYCLE_RECEIVES):
        moved += await receive_ack(target, queue, batch)
        if moved >= batch:
            break
    return moved
