"""What the benchmark drives: the engine in this process, or a server over HTTP."""

from __future__ import annotations

import time
from typing import Any, Protocol

import httpx

from cassieq.bench.measure import Latencies
from cassieq.engine import QueueEngine
from cassieq.model import QueueOptions


class Target(Protocol):
    latencies: Latencies

    async def create_queue(self, name: str) -> None: ...

    async def put(self, queue: str, message: str) -> None: ...

    async def get(self, queue: str) -> Any | None:
        """A receipt, or None when the queue is empty."""
        ...

    async def ack(self, queue: str, receipt: Any) -> None: ...


class EngineTarget:
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
    def __init__(self, url: str, account: str, key: str) -> None:
        self.account, self.latencies = account, Latencies()
        self._client = httpx.AsyncClient(
            base_url=f"{url}/api/v1/accounts/{account}/queues",
            headers={"Authorization": f"Key {key}"},
            limits=httpx.Limits(max_connections=128, max_keepalive_connections=128),
            timeout=30,
        )

    async def close(self) -> None:
        await self._client.aclose()

    async def create_queue(self, name: str) -> None:
        (await self._client.post("", json={"queueName": name})).raise_for_status()

    async def put(self, queue: str, message: str) -> None:
        started = time.perf_counter()
        (await self._client.post(f"/{queue}/messages", content=message.encode())).raise_for_status()
        self.latencies.timed("put", started)

    async def get(self, queue: str) -> Any | None:
        started = time.perf_counter()
        response = await self._client.get(
            f"/{queue}/messages/next", params={"invisibilityTimeSeconds": 60}
        )
        response.raise_for_status()
        self.latencies.timed("get", started)
        return None if response.status_code == 204 else response.json()["popReceipt"]

    async def ack(self, queue: str, receipt: Any) -> None:
        started = time.perf_counter()
        response = await self._client.delete(f"/{queue}/messages", params={"popReceipt": receipt})
        response.raise_for_status()
        self.latencies.timed("ack", started)
