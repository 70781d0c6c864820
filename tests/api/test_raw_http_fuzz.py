"""Raw HTTP fuzz (#40's acceptance): bad Host headers, Content-Length with Transfer-Encoding,
oversize heads, uploads cut short and garbage, over real sockets to a real server on each
store. Nothing may be answered 5xx, counted 5xx in /metrics, or stop the server.

Bounded: a fixed seed and a fixed number of requests; each socket has a deadline.
"""

from __future__ import annotations

import functools
import random
import socket
from collections.abc import Callable
from datetime import UTC, datetime

import httpx

from tests.api.test_framing import TOKEN, Live, _connect, live
from tests.api.test_hostile_framing import _http_statuses

__all__ = ["live"]

SEED = 40
ROUNDS = 160
DEADLINE_S = 5.0


def _status_of(conn: socket.socket) -> int | None:
    """The status of the first response on ``conn``, or None when the server closed it
    without one (a refusal h11 makes before any answer)."""
    conn.settimeout(DEADLINE_S)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
    except ConnectionResetError:
        return None
    line = data.split(b"\r\n", 1)[0].split()
    assert len(line) >= 2 and line[0].startswith(b"HTTP/1."), data[:200]
    return int(line[1])


def _send(live: Live, raw: bytes, *, close_after: bool = False) -> int | None:
    with _connect(live) as conn:
        conn.sendall(raw)
        if close_after:
            return None  # an upload cut short: nobody waits for the answer
        return _status_of(conn)


def _targets(live: Live) -> list[tuple[str, str]]:
    """(path, Authorization) for each API's write route."""
    date = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    v2 = f"CQ2-HMAC-SHA256 Key=primary, Signature={'0' * 64}\r\nx-cassieq-date: {date}"
    return [
        (live.queue_path, f"Key {live.key}"),
        (f"/api/v2/accounts/{live.account}/queues/orders.v1/messages", v2),
        ("/", "AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/sqs/aws4_request, "
              "SignedHeaders=host, Signature=00"),
        ("/api/v1/accounts", f"Bearer {TOKEN}"),
    ]  # fmt: skip


def _cases(live: Live, rng: random.Random) -> list[Callable[[], int | None]]:
    hostport = f"{live.host}:{live.port}"

    def request(path: str, auth: str, *heads: str, body: bytes = b"") -> bytes:
        lines = [f"POST {path} HTTP/1.1", *heads, f"Authorization: {auth}"]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + body

    cases: list[Callable[[], int | None]] = []
    for _ in range(ROUNDS):
        path, auth = rng.choice(_targets(live))
        body = b'{"messages": [{"body": "x"}]}'
        host = f"Host: {hostport}"
        kind = rng.randrange(9)
        if kind == 0:  # a bad Host
            bad = rng.choice(["a:b", "", "[::1", "h" * 300, "x:99999", "a b", "é"])
            raw = request(path, auth, f"Host: {bad}", f"Content-Length: {len(body)}", body=body)
        elif kind == 1:  # Content-Length and Transfer-Encoding together
            raw = request(
                path, auth, host, f"Content-Length: {len(body)}", "Transfer-Encoding: chunked",
                body=f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n",
            )  # fmt: skip
        elif kind == 2:  # a head over the 16 KiB limit, in one read or in two
            size = rng.choice([17_000, 16_385, 40_000])
            raw = request(path, auth, host, f"X-Big: {'b' * size}", "Content-Length: 0")
        elif kind == 3:  # many headers
            many = [f"X-H{i}: {'v' * 90}" for i in range(rng.choice([150, 400]))]
            raw = request(path, auth, host, *many, "Content-Length: 0")
        elif kind == 4:  # an upload cut short
            head = request(path, auth, host, "Content-Length: 100000")
            cases.append(functools.partial(_send, live, head + b"x" * 500, close_after=True))
            continue
        elif kind == 5:  # Content-Length that is no length
            value = rng.choice(["-1", "1e3", " 12 ", "12, 13", "99999999999999999999"])
            raw = request(path, auth, host, f"Content-Length: {value}", body=body)
        elif kind == 6:  # chunked framing that lies
            chunks = rng.choice(
                [
                    b"zz\r\nx\r\n0\r\n\r\n",
                    b"5\r\nab\r\n0\r\n\r\n",
                    b"1;" + b"e" * 9000 + b"\r\nx\r\n0\r\n\r\n",
                ]
            )
            raw = request(path, auth, host, "Transfer-Encoding: chunked", body=chunks)
        elif kind == 7:  # a request line that is no request line
            raw = rng.choice([
                b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(40) + b"\r\n\r\n",
                b"GET /%ff%fe?x=%zz HTTP/1.1\r\nHost: h\r\n\r\n",
                b"BREW /pot HTTP/1.1\r\nHost: h\r\n\r\n",
                b"GET http://evil.example/api/v1/accounts HTTP/1.1\r\nHost: h\r\n\r\n",
                b"GET / HTTP/9.9\r\nHost: h\r\n\r\n",
                ("GET /" + "p" * 20_000 + " HTTP/1.1\r\nHost: h\r\n\r\n").encode(),
            ])  # fmt: skip
        else:  # a body that is not what the route reads
            junk = bytes(rng.randrange(256) for _ in range(rng.choice([1, 100, 3000])))
            raw = request(path, auth, host, "Content-Type: application/json",
                          f"Content-Length: {len(junk)}", body=junk)  # fmt: skip
        cases.append(functools.partial(_send, live, raw))
    return cases


def test_no_hostile_bytes_get_a_5xx_or_stop_the_server(live: Live) -> None:
    rng = random.Random(SEED)
    answered: dict[int | None, int] = {}
    for case in _cases(live, rng):
        status = case()
        answered[status] = answered.get(status, 0) + 1
        assert status is None or status < 500, answered
    assert sum(n for s, n in answered.items() if s is not None) > ROUNDS // 2, answered
    counted = _http_statuses(live)
    assert not [status for status in counted if status.startswith("5")], counted
    # Still serving, as before the fuzz.
    put = httpx.post(
        f"http://{live.host}:{live.port}{live.queue_path}",
        content=b"after",
        headers={"Authorization": f"Key {live.key}"},
        timeout=10,
    )
    assert put.status_code == 201, put.text
