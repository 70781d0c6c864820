"""One server process among the workers of `cassieq serve --workers N` (N > 1).

Each worker is a full server, as another machine's would be: its own engine, store
connection, background loop, long-poll watchers and caps. What the workers share is the
listening sockets (bound once by the supervisor, cassieq.api.http.supervisor) and a private
directory where each answers its siblings' /metrics with its own process-local figures
(cassieq.api.metrics.workers), so that a scrape of any worker covers them all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

# The response header naming the worker that answered (only when there are several): which
# process a connection reached, for an operator chasing one worker's errors, and for tests.
WORKER_HEADER = b"x-cassieq-worker"


def default_workers() -> int:
    """The machine's cores this process may run on (its CPU affinity, as taskset or a
    container's cpuset set it; os.cpu_count where affinity is unknown)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class WorkerSlot:
    """Worker ``index`` of ``count``; ``runtime_dir``: the supervisor's private directory
    (mode 0700) holding each worker's metrics socket."""

    index: int
    count: int
    runtime_dir: str
    supervisor_pid: int

    def metrics_socket(self, index: int) -> str:
        return os.path.join(self.runtime_dir, f"worker-{index}.sock")

    @property
    def siblings(self) -> list[str]:
        return [self.metrics_socket(i) for i in range(self.count) if i != self.index]


class WorkerHeader:
    """Adds ``x-cassieq-worker: <index>`` to every response of this worker."""

    def __init__(self, app: ASGIApp, index: int) -> None:
        self._app = app
        self._value = str(index).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self._app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                headers.append((WORKER_HEADER, self._value))
                message = {**message, "headers": headers}
            await send(message)

        await self._app(scope, receive, sending)
