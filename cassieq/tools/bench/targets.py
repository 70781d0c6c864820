"""What the benchmark drives: the engine in this process, or a server over HTTP."""

from __future__ import annotations

import time
from typing import Any, Protocol

import aiohttp

from cassieq.engine import QueueEngine
from cassieq.model import QueueOptions
from cassieq.tools.bench.measure import Latencies


class Target(Protocol):
    latencies: Latencies
    server_pid: int | None  # a server process's, whose CPU a turn measures; None in process

    async def create_queue(self, name: str) -> None: ...

    async def put(self, queue: str, message: str) -> None: ...

    async def get(self, queue: str) -> Any | None:
        """A receipt, or None when the queue is empty."""
        ...

    async def ack(self, queue: str, receipt: Any) -> None: ...


class EngineTarget:
    server_pid: int | None = None

    def __init__(self, engine: QueueEngine, account: str) -> None:
        self.engine, self.account, self.latencies = engine, account, Latencies()

    async def create_queue(self, name: str) -> None:
        await self.engine.create_queue(self.account, name, QueueOptions())

    async def put(self, queue: str, message: str) -> None:
        started = time.perf_counter()
        await self.engine.put(self.account, queue, message)
        self.latencies.timed("put", started)

    async def get(self, queue: str) -> Any | None:
        started = time.perf_counter()
        got = await self.engine.get_next(self.account, queue, 60)
        self.latencies.timed("get", started)
        return None if got is None else got.receipt

    async def ack(self, queue: str, receipt: Any) -> None:
        started = time.perf_counter()
        await self.engine.ack(self.account, queue, receipt)
        self.latencies.timed("ack", started)


class HttpTarget:
    """A server over HTTP, driven with aiohttp.

    The load generator shares the machine's cores with the server and Cassandra, so its
    own cost is part of the measurement: httpx spent about 2.7 ms of CPU per request at
    32 clients here (a quarter of the rate aiohttp reaches in the same run).
    """

    def __init__(self, url: str, account: str, key: str, server_pid: int | None = None) -> None:
        self.account, self.latencies, self.server_pid = account, Latencies(), server_pid
        self._base = f"{url}/api/v1/accounts/{account}/queues"
        self._session = aiohttp.ClientSession(
            headers={"Authorization": f"Key {key}"},
            connector=aiohttp.TCPConnector(limit=128),
            timeout=aiohttp.ClientTimeout(total=30),
        )

    async def close(self) -> None:
        await self._session.close()

    async def create_queue(self, name: str, options: dict[str, Any] | None = None) -> None:
        """``options``: more of the v1 create options, by their wire names."""
        body = {"queueName": name, **(options or {})}
        async with self._session.post(self._base, json=body) as response:
            response.raise_for_status()

    async def put(self, queue: str, message: str) -> None:
        started = time.perf_counter()
        async with self._session.post(
            f"{self._base}/{queue}/messages", data=message.encode()
        ) as response:
            response.raise_for_status()
        self.latencies.timed("put", started)

    async def get(self, queue: str) -> Any | None:
        started = time.perf_counter()
        async with self._session.get(
            f"{self._base}/{queue}/messages/next", params={"invisibilityTimeSeconds": "60"}
        ) as response:
            response.raise_for_status()
            receipt = None if response.status == 204 else (await response.json())["popReceipt"]
        self.latencies.timed("get", started)
        return receipt

    async def ack(self, queue: str, receipt: Any) -> None:
        started = time.perf_counter()
        async with self._session.delete(
            f"{self._base}/{queue}/messages", params={"popReceipt": receipt}
        ) as response:
            response.raise_for_status()
        self.latencies.timed("ack", started)


async def get_ack(target: Target, queue: str) -> bool:
    """A get and its ack, counted once; False when the queue answered empty."""
    receipt = await target.get(queue)
    if receipt is None:
        return False
    await target.ack(queue, receipt)
    return True


async def put_get_ack(target: Target, queue: str, message: str) -> bool:
    """One message through: put, then get (again while empty) and ack."""
    await target.put(queue, message)
    for _ in range(100):
        if await get_ack(target, queue):
            return True
    return False
