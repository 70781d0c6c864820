"""Heads that cannot be trusted are refused, never served or answered with a 500 (#40).

- Content-Length and Transfer-Encoding together: a proxy in front may read another body
  than this server, so the request behind it in the connection could be smuggled past the
  proxy. Measured before: accepted, the connection kept, the hidden request served.
- A malformed Host (``Host: a:b``): measured before, a plain-text 500 and a traceback on
  every route but /health (the error handlers parsed the Host through ``request.url``).
"""

from __future__ import annotations

import select
import time
import uuid
from datetime import UTC, datetime

import httpx
from litestar.testing import TestClient

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.store.base import Store
from cassieq.store.memory import MemoryStore
from tests.api.test_framing import (
    TOKEN,
    Live,
    _connect,
    _head,
    _read_response,
    live,
    serve_live,
)

__all__ = ["live"]  # the fixture, shared with test_framing (both stores, a real socket)


def _read_all(conn: object) -> bytes:
    data = b""
    while chunk := conn.recv(65536):  # type: ignore[attr-defined]
        data += chunk
    return data


def test_content_length_with_chunked_is_400_and_nothing_behind_it_is_served(live: Live) -> None:
    hidden = (
        f"POST {live.queue_path} HTTP/1.1\r\nHost: {live.host}:{live.port}\r\n"
        f"Authorization: Key {live.key}\r\nContent-Length: 8\r\n\r\nsmuggled"
    ).encode()
    head = _head(live, "Content-Length: 4", "Transfer-Encoding: chunked")
    with _connect(live) as conn:
        conn.sendall(head + b"5\r\nfirst\r\n0\r\n\r\n" + hidden)
        status, headers, body = _read_response(conn)
        rest = _read_all(conn)  # the server closes the connection: this ends
    assert status == 400, body
    assert headers.get("connection") == "close"
    assert b"Content-Length and Transfer-Encoding" in body
    assert b"HTTP/1.1" not in rest  # no second answer: the hidden request was not served
    assert live.get_next().status_code == 204  # neither message was stored


def test_a_malformed_host_is_a_json_400_on_every_api(live: Live) -> None:
    for path in (
        live.queue_path + "/next",
        f"/api/v2/accounts/{live.account}/queues/orders.v1/messages/receive",
        "/",
    ):
        request = (f"GET {path} HTTP/1.1\r\nHost: a:b\r\nConnection: close\r\n\r\n").encode()
        with _connect(live) as conn:
            conn.sendall(request)
            status, headers, body = _read_response(conn)
        assert status == 400, (path, body)
        assert headers["content-type"] == "application/json"
        assert b"Host header is malformed" in body


def test_error_handlers_never_parse_the_host() -> None:
    # Behind the HTTP layer (an ASGI server that let such a Host through), an error answer
    # still comes in the API's shape: the handlers read the path from the scope.
    app = create_app(Settings(admin_token="t" * 32), MemoryStore(), background=False)
    with TestClient(app=app) as client:
        account = f"h-{uuid.uuid4().hex[:8]}"
        missing = client.get(f"/api/v1/accounts/{account}/queues/q", headers={"host": "a:b"})
        v2 = client.get(f"/api/v2/accounts/{account}/queues/q", headers={"host": "a:b"})
    assert missing.status_code == 401 and missing.json()["code"] == 401, missing.text
    assert v2.status_code == 401 and v2.json()["code"] == 401, v2.text


def test_a_malformed_v2_credential_is_refused_before_its_body_is_read(live: Live) -> None:
    # The head announces 10 MB and no byte of it is sent: the answer must not wait for it
    # (#40: such bodies were read, up to 26.6 MiB each, before the credential was looked at).
    path = f"/api/v2/accounts/{live.account}/queues/orders.v1/messages"
    for authorization in (
        "CQ2-HMAC-SHA256 nonsense",
        "CQ2-HMAC-SHA256 Key=primary, Signature=abc",  # no date header
    ):
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {live.host}:{live.port}\r\n"
            f"Authorization: {authorization}\r\nContent-Type: application/json\r\n"
            "Content-Length: 10000000\r\n\r\n"
        ).encode()
        with _connect(live) as conn:
            conn.settimeout(5)  # far below the body deadline the server would otherwise wait
            conn.sendall(head)
            status, _, body = _read_response(conn)
        assert status == 401, body


def _v2_send_head(live: Live, length: int) -> bytes:
    """A v2 send whose credential is well formed and dated now, with a wrong signature:
    only its body, once read, can tell."""
    path = f"/api/v2/accounts/{live.account}/queues/orders.v1/messages"
    date = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return (
        f"POST {path} HTTP/1.1\r\nHost: {live.host}:{live.port}\r\n"
        f"Authorization: CQ2-HMAC-SHA256 Key=primary, Signature={'0' * 64}\r\n"
        f"x-cassieq-date: {date}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def test_unverified_bodies_are_read_only_within_their_room(store: Store) -> None:
    """#40 finding 3: a well-formed credential's body must be read before its signature can
    be refused; what such bodies hold at once is bounded per account. A second one that
    does not fit is answered 503 before any byte of it is read; room comes back once the
    first is checked."""
    size = 700 * 1024
    settings = Settings(admin_token=TOKEN, http_unverified_body_bytes_per_account=1024 * 1024)
    with serve_live(store, settings) as live, _connect(live) as a, _connect(live) as b:
        # Two heads, no body yet: whichever the server takes first holds its room and waits
        # for its body; the other does not fit beside it and is answered at once.
        a.sendall(_v2_send_head(live, size))
        b.sendall(_v2_send_head(live, size))
        answered, _, _ = select.select([a, b], [], [], 10)
        assert len(answered) == 1, "one of them must be answered without its body"
        (refused,) = answered
        status, headers, body = _read_response(refused)
        assert status == 503, body
        assert headers.get("retry-after") == "1"
        held = b if refused is a else a
        held.sendall(b"x" * size)
        status, _, body = _read_response(held)
        assert status == 401, body  # read, checked, refused
        with _connect(live) as third:  # the room is back
            third.sendall(_v2_send_head(live, size) + b"x" * size)
            status, _, body = _read_response(third)
        assert status == 401, body


def _http_statuses(live: Live) -> dict[str, float]:
    """Requests counted by the latency histogram, by status (all routes)."""
    text = httpx.get(
        f"http://{live.host}:{live.port}/metrics",
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=10,
    ).text
    counts: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("cassieq_http_request_duration_seconds_count{"):
            status = line.split('status="', 1)[1].split('"', 1)[0]
            counts[status] = counts.get(status, 0) + float(line.rsplit(" ", 1)[1])
    return counts


def test_an_upload_cut_short_is_counted_as_the_clients_not_as_a_500(live: Live) -> None:
    """#40, low: anyone could raise 5xx alerts by closing uploads half way (unauthenticated
    v2 bodies are read before their signature is checked)."""
    with _connect(live) as conn:
        conn.sendall(_v2_send_head(live, 100_000) + b"x" * 1000)  # and gone
    deadline = time.monotonic() + 15
    while (seen := _http_statuses(live)).get("499", 0) < 1:
        assert time.monotonic() < deadline, f"the cut upload was never counted: {seen}"
        time.sleep(0.05)  # waits for the server to see the socket close; bounded above
    assert "500" not in seen, seen
