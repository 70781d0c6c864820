"""An app served on a real socket by uvicorn, configured exactly as `cassieq serve` does
(cassieq.api.http.server), in a thread of the test process."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn
from litestar import Litestar

from cassieq.api.http.server import listening_socket, uvicorn_config
from cassieq.engine.life.long_poll import QueueWatcher


def tell_when_a_receive_waits(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """An event set whenever a long-polling receive starts waiting (admitted, in flight):
    what a test waits on before it acts on a waiting receive."""
    waiting = threading.Event()
    join = QueueWatcher.join

    def join_and_tell(self: QueueWatcher) -> Any:
        waiter = join(self)
        waiting.set()
        return waiter

    monkeypatch.setattr(QueueWatcher, "join", join_and_tell)
    return waiting


@contextmanager
def served(app: Litestar, port: int = 0) -> Iterator[int]:
    """The port the app answers on (``port``, or a free one), for the block's duration."""
    sock = listening_socket("127.0.0.1", port)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn_config(app, host="127.0.0.1", port=port, log_level="warning"))
    # The socket listens before the thread starts: connections wait in its backlog until
    # uvicorn accepts them, so nobody waits for the server to come up.
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])))
    thread.start()
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def read_until_closed(conn: socket.socket, timeout: float) -> bytes:
    """Everything the server sends until it closes the connection. Raises TimeoutError if
    it has not closed it within ``timeout`` seconds (a bound on the wait, not a pause)."""
    deadline = time.monotonic() + timeout
    data = b""
    while True:
        conn.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            chunk = conn.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def status_of(raw: bytes) -> int:
    assert raw.startswith(b"HTTP/1.1 "), raw[:200]
    return int(raw.split(b" ", 2)[1])


def body_of(raw: bytes) -> bytes:
    return raw.partition(b"\r\n\r\n")[2]


def read_response(conn: socket.socket) -> bytes:
    """One response (this server frames its answers by Content-Length), head and body."""
    conn.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        assert chunk, f"connection closed mid-response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = conn.recv(65536)
        assert chunk, "connection closed mid-body"
        body += chunk
    return head + b"\r\n\r\n" + body
