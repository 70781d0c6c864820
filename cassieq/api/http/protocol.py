"""The server's HTTP/1.1 protocol: uvicorn's httptools protocol with the limits of
cassieq.api.http.limits (read deadlines, head size, the connection cap) and an HTTP/2
upgrade offer served as plain HTTP/1.1, body included.

httptools (llhttp, in C) rather than h11 (pure Python): in py-spy profiles of the bench's
e2e turns (#38) h11's parsing and framing were 17-21% of the server's samples holding the
GIL, and a bare request cost the server 0.28-0.32 ms of CPU against 0.14-0.15 ms here.

**The upgrade offer.** Java's `java.net.http` (CassieQ's Java client on it) and
`curl --http2` offer HTTP/2 on `http://` URLs: `Connection: Upgrade, HTTP2-Settings`,
`Upgrade: h2c`. llhttp takes such a request for an upgrade: it ends the message at its head
(the body is left unread, as if of the new protocol) and stops. The server makes no
upgrade, so the request is an HTTP/1.1 request like any other (RFC 9110 7.8: a server may
ignore Upgrade): its body is read by a fresh parser, given a head of only its framing
(Content-Length or chunked), into the request's own cycle, and the connection goes on.

**Head size.** llhttp has no limit on a head's size: the bytes a head has taken so far are
counted here, from the callbacks for its whole fields and, once it spans more than one
read, from each further read. A head over ``max_header_bytes`` is a 431.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from http import HTTPStatus
from typing import Any, ClassVar, Literal
from weakref import WeakKeyDictionary

import httptools
import structlog
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from cassieq.api.http.cork import CorkedTransport
from cassieq.api.http.limits import Gate, HttpLimits, error_body
from cassieq.config import Settings

# After a refusal the connection stays half open this long, reading and dropping what the
# client still sends, so that the client reads the answer (a close with unread data in the
# socket would reset the connection and lose it).
LINGER_S = 2.0

log = structlog.get_logger("cassieq.api")

# What the connection is reading: nothing (between requests, or the request all in and
# being answered), a head, or a body.
Phase = Literal["idle", "head", "body"]

# Each listener's idle connections (no request in progress), the longest idle first.
_IDLE: WeakKeyDictionary[ServerState, OrderedDict[LimitedProtocol, None]] = WeakKeyDictionary()


def protocol_class(limits: HttpLimits) -> type[LimitedProtocol]:
    """uvicorn instantiates the protocol class itself: the limits ride on a subclass."""

    class Limited(LimitedProtocol):
        pass

    Limited.limits = limits
    return Limited


def _parser(protocol: Any) -> httptools.HttpRequestParser:
    parser = httptools.HttpRequestParser(protocol)
    # As uvicorn sets it: a pipelined request after one that closes is answered, not reset.
    parser.set_dangerous_leniencies(lenient_data_after_close=True)
    return parser


class LimitedProtocol(HttpToolsProtocol):
    limits: ClassVar[HttpLimits] = HttpLimits.of(Settings())  # protocol_class sets the real ones

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)  # its parser calls ours
        self.app = Gate(self.app, self.limits, server_state)
        self.limit_concurrency = None  # Gate answers it, in the API's shape
        self._deadline: asyncio.TimerHandle | None = None
        # "first" (the connection's first head), "head" or "body": what the deadline is for
        self._reading: str | None = None
        self._refused = False
        self._phase: Phase = "idle"
        self._head_bytes = 0  # of the head being read, so far
        self._head_began = False  # in the read being parsed now
        # The framing of an upgrade offer's body, while it waits for its own parser; and
        # whether that parser is reading it (its head is ours, not a request's).
        self._offer_body: bytes | None = None
        self._continuing = False
        self._idle = _IDLE.setdefault(server_state, OrderedDict())

    # -- reading

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
        if self._refused or self.parser is None:
            return  # lingering after a refusal, or closed: dropped
        self._unset_keepalive_if_required()
        if not self._feed(data):
            return
        if self._phase == "head" and not self._head_began:
            self._head_bytes += len(data)  # the head spans reads: all of this one is
            if self._head_bytes > self.limits.max_header_bytes:
                self._refuse_large_head()
                return
        self._follow(new_bytes=True)

    def _feed(self, data: bytes) -> bool:
        """Parse ``data``; False when the connection was refused for it."""
        self._head_began = False
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade as upgrade:
            # The request's head ended an upgrade offer: serve it as HTTP/1.1 (module doc).
            offset = int(upgrade.args[0]) if upgrade.args else len(data)
            self.parser = _parser(self)
            if self._offer_body is not None:
                framing, self._offer_body = self._offer_body, None
                self._continuing = True
                self._phase = "body"
                self.parser.feed_data(b"POST / HTTP/1.1\r\n" + framing + b"\r\n\r\n")
            rest = data[offset:]
            return not rest or self._feed(rest)
        except httptools.HttpParserError as exc:
            if isinstance(exc.__context__, _HeadTooLarge):
                self._refuse_large_head()
                return False
            # Whatever llhttp found (a transfer coding it does not know, a bad line): the
            # request is bad, not the server. llhttp's reasons are its own fixed phrases.
            self._refuse(400, _reason(str(exc)))
            return False
        return True

    # -- parser callbacks (a continued offer's own head is not a request's)

    def on_message_begin(self) -> None:
        if self._continuing:
            return
        self._phase = "head"
        self._head_began = True
        self._head_bytes = 0
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        if not self._continuing:
            self._count(len(url))
            super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self._continuing:
            self._count(len(name) + len(value) + 4)  # ": " and CRLF
            super().on_header(name, value)

    def _count(self, head_bytes: int) -> None:
        self._head_bytes += head_bytes
        if self._head_bytes > self.limits.max_header_bytes:
            raise _HeadTooLarge  # stops the parser: no request is made of this head

    def on_headers_complete(self) -> None:
        if self._continuing:
            return
        self._phase = "body"
        super().on_headers_complete()
        if self.parser.should_upgrade():
            # llhttp will not read this request's body (module doc): its framing, for the
            # parser that will.
            self._offer_body = _framing(self.headers)

    def on_message_complete(self) -> None:
        if self._offer_body is not None:
            return  # the offer's body is still to come, read by its own parser
        self._continuing = False
        self._phase = "idle"
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # A pipelined request may be under way already; otherwise the keep-alive timer
        # (armed just now by uvicorn) bounds the idle connection.
        self._follow(new_bytes=False)

    def connection_lost(self, exc: Exception | None) -> None:
        self._watch(None)
        self._idle.pop(self, None)
        super().connection_lost(exc)

    # -- the connection cap and the read deadlines

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
        phase = self._phase
        cycle = self.cycle
        if phase == "idle" and (cycle is None or cycle.response_complete):
            self._idle.setdefault(self, None)  # stays where it was: idle since then
        else:
            self._idle.pop(self, None)
        if phase == "body":
            self._watch("body")
        elif phase == "head":
            # The first head's deadline holds from the connection: bytes do not restart it.
            if self._reading != "first":
                self._watch("head")
        elif cycle is not None and not cycle.response_complete:
            self._watch(None)  # the request is all in: the app's time is not bounded here
        elif new_bytes and self._reading != "first":
            self._watch("head")  # bytes between requests (blank lines): a head's time

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
        self._reading = None
        if self.transport.is_closing():
            return
        timeout = self.limits.timeout_for(reading)
        log.info("request_read_timeout", reading=reading, timeout_s=timeout)
        cycle = self.cycle
        if reading == "first":
            reading = "head"
        if (reading == "head" and self._phase != "head") or (
            reading == "body" and cycle is not None and cycle.response_complete
        ):
            # Nothing was asked (no byte of a head), or the request was answered already
            # (its body was only being drained): an answer now would be unsolicited.
            self.transport.close()
            return
        self._refuse(408, f"the request {reading} did not arrive within {timeout:g} s")

    # -- refusals

    def _refuse_large_head(self) -> None:
        limit = self.limits.max_header_bytes
        self._refuse(431, f"the request line and headers are larger than {limit} bytes")

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


def _reason(llhttp_error: str) -> str:
    if "Content-Length" in llhttp_error and "Transfer-Encoding" in llhttp_error:
        # Request smuggling's framing: a proxy and this server could read different bodies.
        return "the request has both Content-Length and Transfer-Encoding"
    return (
        f"malformed HTTP/1.1 request: {llhttp_error}"
        if llhttp_error
        else "malformed HTTP/1.1 request"
    )


class _HeadTooLarge(Exception):
    """Raised in a parser callback: the head outgrew the limit."""


def _framing(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The header that frames a request's body (chunked, or its Content-Length), or None
    when it has none."""
    fields = dict(headers)  # names are lower case; llhttp refused a request with both
    if b"transfer-encoding" in fields:
        return b"transfer-encoding: " + fields[b"transfer-encoding"]
    length = fields.get(b"content-length", b"").strip()
    return None if length in (b"", b"0") else b"content-length: " + length
