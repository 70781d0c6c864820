"""The benchmark's SQS section: boto3 against a server's SQS endpoint, batches of up to 10
(send, receive, delete), measured like the v2 HTTP batches next to it.

boto3 clients are blocking; each call runs in a worker thread (the client is thread-safe),
so ``clients`` concurrent loops are that many threads at most.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
from botocore.config import Config

from cassieq.tools.bench.measure import Latencies

LEASE_S = 60  # as the v2 targets: no message comes back during a measurement
MAX_SQS_BATCH = 10


class SqsBatchTarget:
    def __init__(
        self, url: str, account: str, key: str, clients: int, server_pid: int | None = None
    ) -> None:
        self.latencies, self.server_pid = Latencies(), server_pid
        self._pool = ThreadPoolExecutor(max_workers=max(clients, 1))
        self._client = boto3.client(
            "sqs",
            endpoint_url=url,
            region_name="us-east-1",
            aws_access_key_id=account,
            aws_secret_access_key=key,
            config=Config(max_pool_connections=max(clients, 10), retries={"max_attempts": 1}),
        )
        self._urls: dict[str, str] = {}

    async def close(self) -> None:
        self._pool.shutdown(wait=False)

    async def _call(self, method: str, **params: Any) -> dict[str, Any]:
        call = getattr(self._client, method)
        loop = asyncio.get_running_loop()
        result: dict[str, Any] = await loop.run_in_executor(self._pool, lambda: call(**params))
        return result

    async def create_queue(self, name: str) -> None:
        self._urls[name] = (await self._call("create_queue", QueueName=name))["QueueUrl"]

    async def use_queue(self, name: str) -> None:
        """A queue made another way (through v1, with options SQS has no attribute for)."""
        self._urls[name] = (await self._call("get_queue_url", QueueName=name))["QueueUrl"]

    async def send(self, queue: str, bodies: list[str]) -> None:
        started = time.perf_counter()
        entries = [{"Id": str(i), "MessageBody": b} for i, b in enumerate(bodies)]
        out = await self._call("send_message_batch", QueueUrl=self._urls[queue], Entries=entries)
        if out.get("Failed"):
            raise RuntimeError(f"SQS send failed: {out['Failed'][:1]}")
        self.latencies.timed("send", started)

    async def receive(self, queue: str, max_messages: int, wait_s: int = 0) -> list[Any]:
        started = time.perf_counter()
        out = await self._call(
            "receive_message",
            QueueUrl=self._urls[queue],
            MaxNumberOfMessages=min(max_messages, MAX_SQS_BATCH),
            WaitTimeSeconds=wait_s,
            VisibilityTimeout=LEASE_S,
        )
        if not wait_s:
            self.latencies.timed("receive", started)
        return [m["ReceiptHandle"] for m in out.get("Messages", [])]

    async def ack(self, queue: str, receipts: list[Any]) -> int:
        started = time.perf_counter()
        entries = [{"Id": str(i), "ReceiptHandle": r} for i, r in enumerate(receipts)]
        out = await self._call("delete_message_batch", QueueUrl=self._urls[queue], Entries=entries)
        self.latencies.timed("ack", started)
        return len(out.get("Successful", []))
