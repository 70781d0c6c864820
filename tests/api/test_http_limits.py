"""The HTTP server's limits, on a real socket of a server configured as `cassieq serve`
configures it (cassieq.api.http.server), on each store.

Timeouts are set short here (1 s); every wait is a read on the socket with a bound.
"""

from __future__ import annotations

import json
import select
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.model import MAX_MESSAGE_BYTES
from cassieq.store.base import Store
from tests.api.live import body_of, read_response, read_until_closed, served, status_of

TOKEN = "limits-operator-token"
TIMEOUT_S = 1.0
SLACK_S = 10.0  # how much later than its deadline a loaded machine may close a connection


@dataclass
class Live:
    port: int
    account: str
    key: str

    @property
    def messages(self) -> str:
        return f"/api/v1/accounts/{self.account}/queues/q/messages"

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=10)

    def head(self, method: str, path: str, *extra: str) -> bytes:
        lines = [f"{method} {path} HTTP/1.1", "Host: test", f"Authorization: Key {self.key}"]
        return ("\r\n".join([*lines, *extra]) + "\r\n\r\n").encode()

    def get(self, path: str) -> httpx.Response:
        return httpx.get(
            f"http://127.0.0.1:{self.port}{path}",
            headers={"Authorization": f"Key {self.key}"},
            timeout=10,
        )


@contextmanager
def live_server(store: Store, **settings: Any) -> Iterator[Live]:
    limits: dict[str, Any] = {
        "http_header_timeout_seconds": TIMEOUT_S,
        "http_body_timeout_seconds": TIMEOUT_S,
        **settings,
    }
    app = create_app(Settings(admin_token=TOKEN, **limits), store, background=False)
    with served(app) as port:
        base = f"http://127.0.0.1:{port}"
        name = f"lim-{uuid.uuid4().hex[:10]}"  # the Cassandra keyspace is shared
        admin = {"Authorization": f"Bearer {TOKEN}"}
        created = httpx.post(f"{base}/api/v1/accounts", json=name, headers=admin, timeout=10)
        assert created.status_code == 201, created.text
        key = created.json()["keys"]["primary"]
        queue = httpx.post(
            f"{base}/api/v1/accounts/{name}/queues",
            json={"queueName": "q"},
            headers={"Authorization": f"Key {key}"},
            timeout=10,
        )
        assert queue.status_code == 201, queue.text
        yield Live(port, name, key)


@pytest.fixture
def live(store: Store) -> Iterator[Live]:
    with live_server(store) as running:
        yield running


def _error(raw: bytes) -> dict[str, Any]:
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head.lower(), head
    parsed: dict[str, Any] = json.loads(body)
    return parsed


# ---------------------------------------------------------------- headers


def test_a_32_mb_header_is_refused_with_431(live: Live) -> None:
    header = b"GET /health HTTP/1.1\r\nHost: test\r\nX-Big: " + b"a" * (32 << 20) + b"\r\n\r\n"
    with live.connect() as conn:
        sent = 0
        # Send until the server answers (it does so once past its 16 KiB limit).
        while sent < len(header) and not select.select([conn], [], [], 0)[0]:
            conn.sendall(header[sent : sent + 65536])
            sent += 65536
        raw = read_until_closed(conn, SLACK_S)
    assert status_of(raw) == 431, raw[:300]
    assert _error(raw) == {
        "code": 431,
        "message": "HTTP 431 Request Header Fields Too Large",
        "detail": "the request line and headers are larger than 16384 bytes",
    }


def test_a_large_head_in_one_write_is_refused_with_431(live: Live) -> None:
    # Whole before the server reads it (one read, the head complete in it): counted all the
    # same, from its fields.
    for name in ("X-Big", "Cookie"):
        with live.connect() as conn:
            conn.sendall(live.head("GET", "/health", f"{name}: " + "a" * 20_000))
            raw = read_until_closed(conn, SLACK_S)
        assert status_of(raw) == 431, raw[:300]
    with live.connect() as conn:  # a long path counts too
        conn.sendall(f"GET /health?{'a' * 20_000} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
        assert status_of(read_until_closed(conn, SLACK_S)) == 431
    # Under the limit: served.
    with live.connect() as conn:
        conn.sendall(live.head("GET", "/health", "Connection: close", "X-Big: " + "a" * 10_000))
        assert status_of(read_until_closed(conn, SLACK_S)) == 200


def test_more_header_fields_than_the_limit_is_a_431(store: Store) -> None:
    with live_server(store, http_max_headers=20) as live, live.connect() as conn:
        extra = [f"X-Field-{i}: {i}" for i in range(20)]
        conn.sendall(live.head("GET", "/health", *extra))
        raw = read_until_closed(conn, SLACK_S)  # answered, then closed
        assert status_of(raw) == 431, raw
        assert _error(raw)["detail"] == "the request has more than 20 header fields"
        # Under the limit: served.
        assert live.get("/health").status_code == 200


def test_a_malformed_request_is_a_400_in_json(live: Live) -> None:
    for framing in (
        "No colon here",
        "Transfer-Encoding: gzip",  # a coding the server does not know: the client's error
        "Content-Length: 99999999999999999999999999",
        "Content-Length: 5\r\nContent-Length: 6",
    ):
        with live.connect() as conn:
            conn.sendall(live.head("POST", live.messages, framing))
            raw = read_until_closed(conn, SLACK_S)
        assert status_of(raw) == 400, (framing, raw)
        error = _error(raw)
        assert (error["code"], error["message"]) == (400, "HTTP 400 Bad Request")
        # The parser's reason, after what it is.
        assert error["detail"].startswith("malformed HTTP/1.1 request: "), error
        assert len(error["detail"]) > len("malformed HTTP/1.1 request: "), error


# ---------------------------------------------------------------- read timeouts


def test_slow_loris_connections_are_closed_at_the_header_timeout(live: Live) -> None:
    start = time.monotonic()
    trickling = [live.connect() for _ in range(50)]
    silent = live.connect()  # connects and never sends a byte
    for conn in trickling:
        conn.sendall(b"GET /health HTTP/1.1\r\nHost: test\r\n")
    waiting = {*trickling, silent}
    answers: dict[socket.socket, bytes] = {conn: b"" for conn in waiting}
    closed_after: dict[socket.socket, float] = {}
    while waiting and time.monotonic() < start + TIMEOUT_S + SLACK_S:
        # A bounded wait on the sockets paces the trickle: one header line per round.
        readable = set(select.select(list(waiting), [], [], 0.2)[0])
        for conn in readable:
            try:
                chunk = conn.recv(65536)
            except ConnectionResetError:
                chunk = b""
            answers[conn] += chunk
            if not chunk:
                waiting.discard(conn)
                closed_after[conn] = time.monotonic() - start
        for conn in waiting - readable - {silent}:
            conn.sendall(b"X-Still-Coming: 1\r\n")
    try:
        assert not waiting, f"{len(waiting)} connection(s) still open"
        for conn in trickling:
            assert status_of(answers[conn]) == 408, answers[conn]
            detail = _error(answers[conn])["detail"]
            assert detail == "the request head did not arrive within 1 s"
        assert answers[silent] == b""  # it asked nothing: closed without an answer
        for conn in answers:
            assert closed_after[conn] >= TIMEOUT_S  # kept while it could still be on time
    finally:
        for conn in answers:
            conn.close()
    assert live.get("/health").status_code == 200


def test_a_body_that_trickles_is_cut_at_the_body_timeout(live: Live) -> None:
    start = time.monotonic()
    with live.connect() as conn:
        conn.sendall(live.head("POST", live.messages, "Content-Length: 100") + b"abc")
        answer = b""
        while time.monotonic() < start + TIMEOUT_S + SLACK_S:
            if select.select([conn], [], [], 0.2)[0]:
                answer = read_until_closed(conn, SLACK_S)
                break
            conn.sendall(b"x")
    assert status_of(answer) == 408, answer
    assert _error(answer)["detail"] == "the request body did not arrive within 1 s"
    assert time.monotonic() - start >= TIMEOUT_S
    # Nothing of it was stored.
    assert live.get(f"{live.messages}/next").status_code == 204


def test_a_request_answered_before_its_body_is_closed_at_the_body_timeout(live: Live) -> None:
    # Refused (401) before its body was read; the client holds the body back (it waits for
    # a 100 Continue that never comes). The connection goes at the body deadline, with no
    # second, unsolicited answer.
    start = time.monotonic()
    with live.connect() as conn:
        request = live.head("POST", live.messages, "Content-Length: 100", "Expect: 100-continue")
        conn.sendall(request.replace(live.key.encode(), b"wrong-key"))
        raw = read_until_closed(conn, TIMEOUT_S + SLACK_S)
    assert time.monotonic() - start >= TIMEOUT_S
    assert status_of(raw) == 401, raw
    assert raw.count(b"HTTP/1.1 ") == 1, raw


def test_an_idle_connection_is_closed_after_the_keep_alive_time(store: Store) -> None:
    with live_server(store, http_keep_alive_seconds=1) as live, live.connect() as conn:
        conn.sendall(live.head("GET", "/health"))
        start = time.monotonic()
        raw = read_until_closed(conn, 1 + SLACK_S)
        assert time.monotonic() - start >= 1
    assert status_of(raw) == 200
    assert json.loads(body_of(raw))["status"] == "ok"


# ---------------------------------------------------------------- concurrency


def test_beyond_the_concurrency_limit_requests_are_answered_503(store: Store) -> None:
    limit = 3
    settings = {"http_max_concurrency": limit, "http_body_timeout_seconds": 60}
    with live_server(store, **settings) as live:
        # Requests in progress: each head is whole and its body is still to come. The
        # 100 Continue says the app is at work on it (reading the body), until the body or
        # the connection ends.
        put = live.head("POST", live.messages, "Content-Length: 10", "Expect: 100-continue")
        held: list[socket.socket] = []
        deadline = time.monotonic() + SLACK_S
        while len(held) < limit and time.monotonic() < deadline:
            conn = live.connect()
            conn.sendall(put)
            conn.settimeout(SLACK_S)
            if conn.recv(25).startswith(b"HTTP/1.1 100 "):
                held.append(conn)
            else:  # the fixture's own requests were not all over yet: 503, again
                conn.close()
        assert len(held) == limit
        with live.connect() as extra:
            extra.sendall(live.head("GET", "/health"))
            raw = read_until_closed(extra, SLACK_S)  # answered, then closed
        assert status_of(raw) == 503, raw
        assert b"retry-after: 1" in raw.lower()
        assert _error(raw) == {
            "code": 503,
            "message": "HTTP 503 Service Unavailable",
            "detail": f"the server is at its limit of {limit} requests in progress",
        }
        # Once a request ends, requests are served again (as soon as the server has seen
        # it end: until then each try is answered 503).
        done = held.pop()
        done.sendall(b"abcdefghij")
        assert status_of(read_response(done)) == 201
        done.close()
        once = live.head("GET", "/health", "Connection: close")
        statuses: list[int] = []
        while time.monotonic() < deadline and statuses[-1:] != [200]:
            with live.connect() as conn:
                conn.sendall(once)
                statuses.append(status_of(read_until_closed(conn, SLACK_S)))
        assert statuses[-1] == 200, statuses
        for conn in held:
            conn.close()


# ---------------------------------------------------------------- bodies


def test_a_put_announcing_10_mb_is_refused_before_its_body_is_sent(live: Live) -> None:
    with live.connect() as conn:
        # Only the head: the answer comes without a byte of the body.
        conn.sendall(live.head("POST", live.messages, f"Content-Length: {10 << 20}"))
        raw = read_response(conn)
    assert status_of(raw) == 413, raw
    assert json.loads(body_of(raw)) == {
        "errors": [f"the request body is larger than {MAX_MESSAGE_BYTES} bytes"]
    }


def test_a_json_body_over_the_limit_is_refused_before_it_is_read(store: Store) -> None:
    limit = 64 * 1024
    with live_server(store, http_max_body_bytes=limit) as live, live.connect() as conn:
        path = f"/api/v1/accounts/{live.account}/queues"
        conn.sendall(
            live.head(
                "POST", path, "Content-Type: application/json", f"Content-Length: {limit + 1}"
            )
        )
        raw = read_response(conn)
    assert status_of(raw) == 413, raw
    assert json.loads(body_of(raw)) == {
        "errors": [f"the request body is larger than {limit} bytes"]
    }


def _chunked(size: int) -> bytes:
    chunk = 16 * 1024
    parts = [b"m" * min(chunk, size - i) for i in range(0, size, chunk)]
    return b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in parts)


def test_a_chunked_put_is_cut_at_the_message_limit(live: Live) -> None:
    with live.connect() as conn:
        conn.sendall(live.head("POST", live.messages, "Transfer-Encoding: chunked"))
        # One byte more than a message may hold, and no end: the server stops it there.
        conn.sendall(_chunked(MAX_MESSAGE_BYTES + 1))
        raw = read_response(conn)
    assert status_of(raw) == 413, raw
    assert json.loads(body_of(raw)) == {
        "errors": [f"the request body is larger than {MAX_MESSAGE_BYTES} bytes"]
    }
    assert live.get(f"{live.messages}/next").status_code == 204  # nothing stored


def test_a_chunked_put_of_exactly_the_limit_is_stored(live: Live) -> None:
    with live.connect() as conn:
        conn.sendall(live.head("POST", live.messages, "Transfer-Encoding: chunked"))
        conn.sendall(_chunked(MAX_MESSAGE_BYTES) + b"0\r\n\r\n")
        raw = read_response(conn)
    assert status_of(raw) == 201, raw
    got = live.get(f"{live.messages}/next")
    assert got.status_code == 200
    assert got.json()["message"] == "m" * MAX_MESSAGE_BYTES


# ---------------------------------------------------------------- settings


def test_the_limits_are_read_from_the_environment() -> None:
    s = Settings.from_env(
        {
            "CASSIEQ_HTTP_MAX_HEADER_BYTES": "32768",
            "CASSIEQ_HTTP_MAX_HEADERS": "50",
            "CASSIEQ_HTTP_HEADER_TIMEOUT_SECONDS": "2.5",
            "CASSIEQ_HTTP_BODY_TIMEOUT_SECONDS": "20",
            "CASSIEQ_HTTP_KEEP_ALIVE_SECONDS": "7",
            "CASSIEQ_HTTP_MAX_CONCURRENCY": "64",
            "CASSIEQ_HTTP_MAX_BODY_BYTES": "2097152",
        }
    )
    assert (s.http_max_header_bytes, s.http_max_headers) == (32768, 50)
    assert (s.http_header_timeout_seconds, s.http_body_timeout_seconds) == (2.5, 20.0)
    assert (s.http_keep_alive_seconds, s.http_max_concurrency) == (7, 64)
    assert s.http_max_body_bytes == 2 * 1024 * 1024
    for bad in (
        {"CASSIEQ_HTTP_HEADER_TIMEOUT_SECONDS": "0"},
        {"CASSIEQ_HTTP_MAX_CONCURRENCY": "0"},
        {"CASSIEQ_HTTP_MAX_HEADER_BYTES": "10"},
    ):
        with pytest.raises(ValueError, match="invalid cassieq setting"):
            Settings.from_env(bad)
