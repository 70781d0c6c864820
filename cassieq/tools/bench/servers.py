"""`cassieq serve` processes for the benchmark's HTTP measurements."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import httpx

from cassieq.config import Settings
from cassieq.tools.bench.targets import HttpTarget


@dataclass(frozen=True)
class Server:
    url: str
    account: str
    key: str
    token: str = ""  # the operator token the process was started with
    pid: int | None = None  # the process's, for its CPU time (cassieq.tools.bench.cpu)


@contextlib.asynccontextmanager
async def server_process(
    settings: Settings,
    keyspace: str,
    *,
    account: tuple[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[Server]:
    """A `cassieq serve` in its own process, with an account of its own, or ``account``
    (name, key) made on another server of the keyspace (keys are the keyspace's, so any
    server accepts them)."""
    port = free_port()
    token = secrets.token_urlsafe(32)  # `cassieq serve` refuses fewer than 32 characters
    env = {
        **os.environ,
        "CASSIEQ_KEYSPACE": keyspace,
        "CASSIEQ_PORT": str(port),
        "CASSIEQ_ADMIN_TOKEN": token,
        "CASSIEQ_LOG_LEVEL": "warning",
        "CASSIEQ_CASSANDRA_HOSTS": ",".join(settings.cassandra_hosts),
        "CASSIEQ_CASSANDRA_PORT": str(settings.cassandra_port),
        # One process unless asked (`--workers`): the figures compare with earlier runs'.
        "CASSIEQ_WORKERS": "1",
        **(env or {}),
    }
    process = await asyncio.to_thread(
        subprocess.Popen,
        [sys.executable, "-m", "cassieq", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        await _wait_for(url)
        if account is None:
            account = await _create_account(url, token)
        yield Server(url, *account, token=token, pid=process.pid)
    finally:
        process.terminate()
        await asyncio.to_thread(process.wait, 30)


@contextlib.asynccontextmanager
async def http_target(settings: Settings, keyspace: str) -> AsyncIterator[HttpTarget]:
    """A v1 target driving a server of its own."""
    async with server_process(settings, keyspace) as server:
        target = HttpTarget(server.url, server.account, server.key, server_pid=server.pid)
        try:
            yield target
        finally:
            await target.close()


async def _create_account(url: str, token: str) -> tuple[str, str]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as admin:
        name = f"bench-{secrets.token_hex(4)}"
        created = await admin.post(
            "/api/v1/accounts", json=name, headers={"Authorization": f"Bearer {token}"}
        )
        created.raise_for_status()
        return name, str(created.json()["keys"]["primary"])


async def _wait_for(url: str) -> None:
    async with httpx.AsyncClient() as client:
        for _ in range(300):
            try:
                await client.get(f"{url}/health", timeout=1)
                return
            except httpx.TransportError:
                await asyncio.sleep(0.1)
    raise RuntimeError("the benchmark's server did not start")


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
