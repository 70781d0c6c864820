"""The `cassieq serve` processes under test: started, SIGKILLed, restarted on their port."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from cassieq.tools.bench.servers import free_port

STOP_TIMEOUT_S = 15.0


class ServerError(RuntimeError):
    """A server did not start or died while starting."""


@dataclass
class ServerProcess:
    name: str
    port: int
    env: Mapping[str, str]
    log_path: Path
    starts: int = 0
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def start(self) -> None:
        """Start the process; the log file is appended to, so a restart keeps the story."""
        self.starts += 1
        with self.log_path.open("ab") as log:
            log.write(f'{{"chaos": "start {self.starts} of server {self.name}"}}\n'.encode())
            log.flush()
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "cassieq", "serve"],
                env=dict(self.env),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    async def wait_ready(self, within_s: float) -> float:
        """Seconds until /health answered; ServerError if the process died or timed out."""
        began = time.monotonic()
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session:
            while time.monotonic() - began < within_s:
                if self._proc is None or self._proc.poll() is not None:
                    raise ServerError(f"server {self.name} exited: {self.log_tail()}")
                try:
                    async with session.get(f"{self.url}/health") as response:
                        if response.status == 200:
                            return time.monotonic() - began
                except (TimeoutError, aiohttp.ClientError):
                    pass
                await asyncio.sleep(0.2)
        raise ServerError(f"server {self.name} not ready in {within_s:.0f} s: {self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL: no graceful shutdown, no leases released, connections cut mid-request."""
        if self._proc is not None and self._proc.poll() is None:
            os.kill(self._proc.pid, signal.SIGKILL)
            self._proc.wait(timeout=STOP_TIMEOUT_S)

    def stop(self) -> None:
        if self._proc is None or self._proc.poll() is not None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()

    def logged_errors(self, limit: int = 5, chars: int = 4000) -> list[str]:
        """The first ``limit`` error lines of the log (an unhandled exception comes with its
        traceback): a 5xx in the figures is a bug only these lines explain."""
        found: list[str] = []
        try:
            with self.log_path.open(errors="replace") as log:
                for line in log:
                    if '"level": "error"' in line or '"level": "critical"' in line:
                        found.append(_head_and_tail(line.rstrip(), chars))
                        if len(found) >= limit:
                            break
        except OSError:
            return []
        return found

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


def _head_and_tail(line: str, chars: int) -> str:
    """At most ``chars`` of a log line, from both ends: a traceback's last frames and its
    exception are at the end, and a CI report once cut exactly those off."""
    if len(line) <= chars:
        return line
    head = chars // 4
    return f"{line[:head]} [...] {line[len(line) - (chars - head) :]}"


def server_env(
    *,
    hosts: tuple[str, ...],
    native_port: int,
    keyspace: str,
    admin_token: str,
    receipt_secret: str,
    port: int,
    partitions: int = 1,
    workers: int = 1,
) -> dict[str, str]:
    # Both servers share the operator token and the receipt secret: a receipt issued by
    # one must ack on the other, and survive a restart.
    return {
        **os.environ,
        "CASSIEQ_HOST": "127.0.0.1",
        "CASSIEQ_PORT": str(port),
        "CASSIEQ_CASSANDRA_HOSTS": ",".join(hosts),
        "CASSIEQ_CASSANDRA_PORT": str(native_port),
        "CASSIEQ_KEYSPACE": keyspace,
        "CASSIEQ_ADMIN_TOKEN": admin_token,
        "CASSIEQ_RECEIPT_SECRET": receipt_secret,
        "CASSIEQ_LOG_FORMAT": "json",
        "CASSIEQ_LOG_LEVEL": "info",
        "CASSIEQ_DEFAULT_PARTITIONS": str(partitions),
        "CASSIEQ_WORKERS": str(workers),
    }


def new_servers(
    names: tuple[str, ...],
    log_dir: Path,
    *,
    hosts: tuple[str, ...],
    native_port: int,
    keyspace: str,
    admin_token: str,
    receipt_secret: str,
    partitions: int = 1,
    workers: int = 1,
) -> dict[str, ServerProcess]:
    servers = {}
    for name in names:
        port = free_port()
        env = server_env(
            hosts=hosts,
            native_port=native_port,
            keyspace=keyspace,
            admin_token=admin_token,
            receipt_secret=receipt_secret,
            port=port,
            partitions=partitions,
            workers=workers,
        )
        servers[name] = ServerProcess(name, port, env, log_dir / f"server-{name}.log")
    return servers
