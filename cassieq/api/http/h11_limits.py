"""uvicorn's h11 protocol with the limits it lacks: read deadlines, header limits, 503.

uvicorn bounds only the idle time between requests (``timeout_keep_alive``, and every byte
received cancels it): a client that trickles a request's head, or its body, holds the
connection and its buffers for ever (200 such connections were all still open after 90 s).
ASGI middleware cannot help: the app runs once the head is complete. So, per connection:

- a new connection's first head must be whole within ``first_request_timeout_s`` of the
  connection (at most ``header_timeout_s``); a later head within ``header_timeout_s`` of
  its first byte; the body within ``body_timeout_s`` of the head. Else 408 (or, if
  nothing was sent, no answer) and the connection is closed. 1,010 silent sockets held
  every slot of the old per-connection cap for the header timeout (issue 40, finding 4);
- a head larger than ``max_header_bytes`` (h11's buffer limit) or with more than
  ``max_headers`` fields: 431;
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

import asyncio
import re
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, ClassVar

import h11
import msgspec
import structlog
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from cassieq.api.error_bodies import AuthErrorBody
from cassieq.api.http.cork import CorkedTransport
from cassieq.config import Settings

# After a refusal the connection stays half open this long, reading and dropping what the
# client still sends, so that the client reads the answer (a close with unread data in the
# socket would reset the connection and lose it).
LINGER_S = 2.0

log = structlog.get_logger("cassieq.api")


@dataclass(frozen=True)
class HttpLimits:
    max_header_bytes: int
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


def protocol_class(limits: HttpLimits) -> type[LimitedH11Protocol]:
    """uvicorn instantiates the protocol class itself: the limits ride on a subclass."""

    class Limited(LimitedH11Protocol):
        pass

    Limited.limits = limits
    return Limited


def error_body(status: int, detail: str) -> bytes:
    return msgspec.json.encode(AuthErrorBody.of_status(status, detail))


class _Connection(h11.Connection):
    """Keeps the status h11 suggests for the request it could not parse (431 when the head
    outgrew its buffer): uvicorn only ever answers 400."""

    refusal = 400

    def next_event(self) -> Any:
        try:
            return super().next_event()
        except h11.RemoteProtocolError as exc:
            self.refusal = exc.error_status_hint
            raise


# Each listener's idle connections (no request in progress), the longest idle first.
_IDLE: weakref.WeakKeyDictionary[ServerState, OrderedDict[LimitedH11Protocol, None]] = (
    weakref.WeakKeyDictionary()
)


class LimitedH11Protocol(H11Protocol):
    limits: ClassVar[HttpLimits] = HttpLimits.of(Settings())  # protocol_class sets the real ones

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.conn = _Connection(h11.SERVER, max_incomplete_event_size=self.limits.max_header_bytes)
        self.app = _Gate(self.app, self.limits, server_state)
        self.limit_concurrency = None  # _Gate answers it, in the API's shape
        self._deadline: asyncio.TimerHandle | None = None
        # "first" (the connection's first head), "head" or "body": what the deadline is for
        self._reading: str | None = None
        self._refused = False
        self._idle = _IDLE.setdefault(server_state, OrderedDict())

    # -- read deadlines

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        # The pieces of an answer go out in one send (cork.py). Flow control stays on the
        # socket's own transport, which uvicorn's FlowControl was given just now.
        self.transport = CorkedTransport(self.transport, self.loop)
        self._make_room()
        self._idle[self] = None
        # A connection that never sends a byte is a slow head too; its first head has the
        # shorter deadline (it counts from the connection, not from a first byte).
        self._watch("first")

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # lingering after a refusal: dropped
        super().data_received(data)
        self._follow(new_bytes=True)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # A pipelined request may be under way already; otherwise the keep-alive timer
        # (armed just now by uvicorn) bounds the idle connection.
        self._follow(new_bytes=False)

    def connection_lost(self, exc: Exception | None) -> None:
        self._watch(None)
        self._idle.pop(self, None)
        super().connection_lost(exc)

    def _make_room(self) -> None:
        """Beyond the connection limit (this one counted), close the longest-idle ones."""
        while len(self.connections) > self.limits.max_connections and self._idle:
            oldest, _ = self._idle.popitem(last=False)
            log.info("idle_connection_evicted", open=len(self.connections))
            oldest._watch(None)
            oldest.transport.close()
            self.connections.discard(oldest)  # gone now, not at its connection_lost

    def _follow(self, *, new_bytes: bool) -> None:
        """Arm the deadline for what the connection is reading now; keep the idle list."""
        state = self.conn.their_state
        cycle = self.cycle
        if state is h11.IDLE and (cycle is None or cycle.response_complete):
            self._idle.setdefault(self, None)  # stays where it was: idle since then
        else:
            self._idle.pop(self, None)
        if state is h11.SEND_BODY:
            self._watch("body")
        elif state is h11.IDLE and (new_bytes or self.conn.trailing_data[0]):
            # Bytes of the next head came (even blank lines): it is being read. The first
            # head's deadline holds from the connection: bytes do not restart it.
            if self._reading != "first":
                self._watch("head")
        elif state is not h11.IDLE:
            self._watch(None)  # the request is all in: the app's time is not bounded here

    def _watch(self, reading: str | None) -> None:
        if reading == self._reading:
            return  # the running deadline holds: it counts from the phase's start
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._reading = reading
        if reading is not None:
            timeout = self.limits.timeout_for(reading)
            self._deadline = self.loop.call_later(timeout, self._expired, reading)

    def _expired(self, reading: str) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        timeout = self.limits.timeout_for(reading)
        log.info("request_read_timeout", reading=reading, timeout_s=timeout)
        cycle = self.cycle
        if reading == "first":
            reading = "head"
        if (reading == "head" and not self.conn.trailing_data[0]) or (
            reading == "body" and cycle is not None and cycle.response_complete
        ):
            # Nothing was asked (no byte of a head), or the request was answered already
            # (its body was only being drained): an answer now would be unsolicited.
            self.transport.close()
            return
        self._refuse(408, f"the request {reading} did not arrive within {timeout:g} s")

    # -- refusals

    def send_400_response(self, msg: str) -> None:
        # uvicorn calls this when h11 cannot parse the request.
        limit = self.limits.max_header_bytes
        if getattr(self.conn, "refusal", 400) == 431:
            self._refuse(431, f"the request line and headers are larger than {limit} bytes")
        else:
            # Whatever h11 suggests (501 for a transfer coding it does not know): the
            # request is bad, not the server.
            self._refuse(400, "malformed HTTP/1.1 request")

    def _refuse(self, status: int, detail: str) -> None:
        cycle = self.cycle
        if cycle is not None and cycle.response_started and not cycle.response_complete:
            self.transport.close()  # an answer is half sent: nothing else can follow it
            return
        if cycle is not None:
            cycle.disconnected = True  # the app's answer, if it still comes, is dropped
            cycle.message_event.set()
        body = error_body(status, detail)
        head = (
            f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
            "content-type: application/json\r\n"
            f"content-length: {len(body)}\r\n"
            "connection: close\r\n\r\n"
        )
        self.transport.write(head.encode("latin-1") + body)
        self._linger()

    def _linger(self) -> None:
        self._refused = True
        self._watch(None)
        self._unset_keepalive_if_required()
        if self.transport.can_write_eof():
            self.transport.write_eof()  # the client reads the answer, then the end
        self.loop.call_later(LINGER_S, self.transport.close)


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
class _Gate:
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
