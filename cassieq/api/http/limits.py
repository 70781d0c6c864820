"""The limits uvicorn's HTTP protocols lack, and what answers them (the protocol that
applies them per connection: cassieq.api.http.protocol).

uvicorn bounds only the idle time between requests (``timeout_keep_alive``, and every byte
received cancels it): a client that trickles a request's head, or its body, holds the
connection and its buffers for ever (200 such connections were all still open after 90 s).
ASGI middleware cannot help: the app runs once the head is complete. So, per connection:

- a new connection's first head must be whole within ``first_request_timeout_s`` of the
  connection (at most ``header_timeout_s``); a later head within ``header_timeout_s`` of
  its first byte; the body within ``body_timeout_s`` of the head. Else 408 (or, if
  nothing was sent, no answer) and the connection is closed. 1,010 silent sockets held
  every slot of the old per-connection cap for the header timeout (issue 40, finding 4);
- a head larger than ``max_header_bytes`` or with more than ``max_headers`` fields: 431;
- beyond ``max_concurrency`` requests in progress: 503 (uvicorn's ``limit_concurrency``
  check, answered here in the API's JSON shape). Open connections are not counted: a
  socket that asks nothing must not take a legitimate client's place;
- a request with both Content-Length and Transfer-Encoding, or a malformed Host: 400, and
  the connection closed;
- beyond ``max_connections`` open connections, the one idle longest (no request in
  progress, oldest first) is closed to make room for the new one: sockets opened faster
  than the first-request deadline closes them cannot use up the process's file
  descriptors, and a new client's connection is the last to go.

Refusals answer ``{"code", "message", "detail"}`` (the shape of statuses without a richer
body) and close the connection after a short linger, so the client reads the answer
instead of a reset while it is still sending.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import msgspec
from uvicorn.server import ServerState

from cassieq.api.error_bodies import AuthErrorBody
from cassieq.config import Settings


@dataclass(frozen=True)
class HttpLimits:
    max_header_bytes: int  # the request line and header fields, as received
    max_headers: int
    header_timeout_s: float
    body_timeout_s: float
    max_concurrency: int
    first_request_timeout_s: float = 3.0
    max_connections: int = 10_000

    @classmethod
    def of(cls, s: Settings) -> HttpLimits:
        return cls(
            max_header_bytes=s.http_max_header_bytes,
            max_headers=s.http_max_headers,
            header_timeout_s=s.http_header_timeout_seconds,
            body_timeout_s=s.http_body_timeout_seconds,
            max_concurrency=s.http_max_concurrency,
            first_request_timeout_s=min(
                s.http_first_request_timeout_seconds, s.http_header_timeout_seconds
            ),
            max_connections=s.http_max_connections,
        )

    def timeout_for(self, reading: str) -> float:
        if reading == "first":
            return self.first_request_timeout_s
        return self.header_timeout_s if reading == "head" else self.body_timeout_s


def error_body(status: int, detail: str) -> bytes:
    return msgspec.json.encode(AuthErrorBody.of_status(status, detail))


# A Host header as RFC 9110 7.2 allows it: a registered name, IPv4 or bracketed IPv6
# literal, and an optional decimal port.
_HOST = re.compile(rb"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]*)(?::[0-9]{0,5})?")


def framing_problem(headers: list[tuple[bytes, bytes]]) -> str | None:
    """Why a request's head cannot be trusted to say where it ends or whom it is for, or
    None: both Content-Length and Transfer-Encoding (request smuggling: a proxy and this
    server could read different bodies), or a malformed Host."""
    names = [name for name, _ in headers]
    if b"content-length" in names and b"transfer-encoding" in names:
        return "the request has both Content-Length and Transfer-Encoding"
    hosts = [value for name, value in headers if name == b"host"]
    if len(hosts) > 1 or (hosts and not _HOST.fullmatch(hosts[0])):
        return "the Host header is malformed"
    return None


@dataclass
class Gate:
    """In front of the app, for each request: the header count and the concurrency limit."""

    app: Any
    limits: HttpLimits
    server: ServerState

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            if problem := framing_problem(scope["headers"]):
                # Refused before the app reads a byte of the body, and the connection is
                # closed (RFC 9112 6.1, 3.2): nothing pipelined behind it is served.
                await _answer(send, 400, problem)
                return
            if len(scope["headers"]) > self.limits.max_headers:
                detail = f"the request has more than {self.limits.max_headers} header fields"
                await _answer(send, 431, detail)
                return
            # Requests in progress, this one's own task included: more than the limit. Not
            # connections: idle ones are bounded by the read deadlines instead.
            limit = self.limits.max_concurrency
            if len(self.server.tasks) > limit:
                detail = f"the server is at its limit of {limit} requests in progress"
                await _answer(send, 503, detail, (b"retry-after", b"1"))
                return
        await self.app(scope, receive, send)


async def _answer(send: Any, status: int, detail: str, *extra: tuple[bytes, bytes]) -> None:
    body = error_body(status, detail)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})
