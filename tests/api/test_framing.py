"""Request bodies survive any HTTP/1.1 framing, on a real uvicorn server over a real socket.

The server is configured exactly as `cassieq serve` configures it (cassieq.api.http.server),
on each store: the message read back is the one the real store kept.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import pytest
import uvicorn

from cassieq.api.app import create_app
from cassieq.api.http.server import listening_socket, uvicorn_config
from cassieq.config import Settings
from cassieq.store.base import Store

TOKEN = "framing-operator-token"
# What java.net.http sends on an http:// URL unless told HTTP_1_1: an h2c upgrade offer.
H2C_SETTINGS = "AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA"


@dataclass
class Live:
    host: str
    port: int
    key: str

    account: str

    @property
    def queue_path(self) -> str:
        return f"/api/v1/accounts/{self.account}/queues/orders.v1/messages"

    def get_next(self) -> httpx.Response:
        return httpx.get(
            f"http://{self.host}:{self.port}{self.queue_path}/next",
            headers={"Authorization": f"Key {self.key}"},
            timeout=10,
        )


@pytest.fixture
def live(store: Store) -> Iterator[Live]:
    with serve_live(store, Settings(admin_token=TOKEN)) as running:
        yield running


@contextmanager
def serve_live(store: Store, settings: Settings) -> Iterator[Live]:
    """A real uvicorn server of an app on ``store`` with ``settings`` (their admin_token
    must be TOKEN), with an account and its queue "orders.v1"."""
    name = f"fr-{uuid.uuid4().hex[:10]}"  # the Cassandra keyspace is shared by the suite
    app = create_app(settings, store, background=False)
    sock = listening_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn_config(app, host="127.0.0.1", port=port, log_level="warning"))
    # The socket listens before the thread starts: requests wait in its backlog until
    # uvicorn accepts them, so no test needs to wait for the server to come up.
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])))
    thread.start()
    try:
        base = f"http://127.0.0.1:{port}"
        admin = {"Authorization": f"Bearer {TOKEN}"}
        account = httpx.post(f"{base}/api/v1/accounts", json=name, headers=admin, timeout=10)
        assert account.status_code == 201, account.text
        key = account.json()["keys"]["primary"]
        created = httpx.post(
            f"{base}/api/v1/accounts/{name}/queues",
            json={"queueName": "orders.v1"},
            headers={"Authorization": f"Key {key}"},
            timeout=10,
        )
        assert created.status_code == 201, created.text
        yield Live("127.0.0.1", port, key, name)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def _read_response(conn: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response (Content-Length framed, as this server frames its answers)."""
    status, headers, body, _ = _read_one(conn, b"")
    return status, headers, body


def _read_statuses(conn: socket.socket, count: int) -> list[int]:
    """The statuses of ``count`` pipelined responses, however the reads split them (the
    server may send two answers in one segment)."""
    statuses, data = [], b""
    for _ in range(count):
        status, _, _, data = _read_one(conn, data)
        statuses.append(status)
    return statuses


def _read_one(conn: socket.socket, data: bytes) -> tuple[int, dict[str, str], bytes, bytes]:
    """A response read from ``data`` and then the socket; and the bytes read past it."""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        assert chunk, f"connection closed mid-response: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines)}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = conn.recv(65536)
        assert chunk, "connection closed mid-body"
        rest += chunk
    return int(status_line.split()[1]), headers, rest[:length], rest[length:]


def _connect(live: Live) -> socket.socket:
    conn = socket.create_connection((live.host, live.port), timeout=10)
    return conn


def _head(live: Live, *extra: str) -> bytes:
    lines = [
        f"POST {live.queue_path} HTTP/1.1",
        f"Host: {live.host}:{live.port}",
        f"Authorization: Key {live.key}",
        *extra,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _assert_stored(live: Live, message: str) -> None:
    got = live.get_next()
    assert got.status_code == 200, got.text
    assert got.json()["message"] == message


def _stored(live: Live, count: int) -> set[str]:
    """The next ``count`` messages (a v1 queue promises no order between them)."""
    got = [live.get_next() for _ in range(count)]
    assert [g.status_code for g in got] == [200] * count, [g.text for g in got]
    return {g.json()["message"] for g in got}


def test_put_with_an_h2c_upgrade_offer_keeps_its_body(live: Live) -> None:
    body = b'{"order": 42}'
    # The header block java.net.http (HttpClient default version HTTP_2) sends on http://.
    request = _head(
        live,
        "Connection: Upgrade, HTTP2-Settings",
        f"Content-Length: {len(body)}",
        f"HTTP2-Settings: {H2C_SETTINGS}",
        "Upgrade: h2c",
        "User-Agent: Java-http-client/17.0.9",
        "Content-Type: application/json",
    )
    with _connect(live) as conn:
        conn.sendall(request + body)
        status, _, answer = _read_response(conn)
    # Served as HTTP/1.1 (no 101 Switching Protocols), the body stored as sent.
    assert status == 201, answer
    assert answer == b""
    _assert_stored(live, body.decode())


# The headers of java.net.http's upgrade offer, without the body's framing.
_OFFER = (
    "Connection: Upgrade, HTTP2-Settings",
    f"HTTP2-Settings: {H2C_SETTINGS}",
    "Upgrade: h2c",
)


def test_after_an_h2c_upgrade_offer_the_connection_serves_the_next_request(live: Live) -> None:
    # The server makes no upgrade: the connection stays HTTP/1.1, and what follows the
    # offer's body is the next request (llhttp would read it as the new protocol's bytes).
    first, second = b"offered", b"after the offer"
    with _connect(live) as conn:
        conn.sendall(_head(live, *_OFFER, f"Content-Length: {len(first)}") + first)
        status, headers, _ = _read_response(conn)
        assert status == 201
        assert headers.get("connection") != "close"
        conn.sendall(_head(live, f"Content-Length: {len(second)}") + second)
        status, _, _ = _read_response(conn)
        assert status == 201
    assert _stored(live, 2) == {first.decode(), second.decode()}


def test_a_chunked_put_with_an_h2c_upgrade_offer_keeps_its_body(live: Live) -> None:
    parts = [b"offered ", b"in chunks"]
    framed = b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in parts) + b"0\r\n\r\n"
    with _connect(live) as conn:
        # The body in a later write than the head, and pipelined with a second put.
        conn.sendall(_head(live, *_OFFER, "Transfer-Encoding: chunked"))
        conn.sendall(framed + _head(live, "Content-Length: 4") + b"next")
        # Both answers, in one read or two (a loaded machine coalesces the two writes).
        assert _read_statuses(conn, 2) == [201, 201]
    assert _stored(live, 2) == {"offered in chunks", "next"}


def test_a_get_with_an_h2c_upgrade_offer_is_answered(live: Live) -> None:
    with _connect(live) as conn:
        conn.sendall(_head(live, "Content-Length: 2") + b"hi")
        assert _read_response(conn)[0] == 201
        path = live.queue_path + "/next"
        head = f"GET {path} HTTP/1.1\r\nHost: {live.host}\r\nAuthorization: Key {live.key}\r\n"
        conn.sendall((head + "\r\n".join(_OFFER) + "\r\n\r\n").encode("latin-1"))
        status, _, answer = _read_response(conn)
    assert status == 200, answer
    assert b'"message":"hi"' in answer.replace(b" ", b"")


def test_chunked_put_keeps_its_body(live: Live) -> None:
    parts = [b"hello, ", b"chunked ", b"world"]
    framed = b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in parts) + b"0\r\n\r\n"
    with _connect(live) as conn:
        conn.sendall(_head(live, "Transfer-Encoding: chunked", "Content-Type: text/plain"))
        conn.sendall(framed)
        status, _, answer = _read_response(conn)
    assert status == 201, answer
    _assert_stored(live, "hello, chunked world")


def test_put_with_expect_100_continue_keeps_its_body(live: Live) -> None:
    body = b"sent after 100 Continue"
    with _connect(live) as conn:
        conn.sendall(
            _head(live, f"Content-Length: {len(body)}", "Expect: 100-continue", "Content-Type: x/y")
        )
        # The client holds its body back until the server says go on.
        status, _, _ = _read_response(conn)
        assert status == 100
        conn.sendall(body)
        status, _, answer = _read_response(conn)
    assert status == 201, answer
    _assert_stored(live, body.decode())
