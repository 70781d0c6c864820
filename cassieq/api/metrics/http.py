"""Request latency by route template, and the access log, around the whole app.

Labels are the route's template (``/api/v2/accounts/{account}/queues/{queue}/messages``),
never the raw path: account and queue names would make one series per queue. The access
log has the path but never the query string, where v1 signed URLs carry their signature.
"""

from __future__ import annotations

import time

import structlog
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, ReceiveMessage, Scope, Send
from prometheus_client import CollectorRegistry, Histogram

# Up to 30 s: a v2 long poll waits up to 20 s.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30)
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"
# The status counted for a request whose client went away before any answer (nginx's 499).
CLIENT_GONE = 499


def request_histogram(registry: CollectorRegistry) -> Histogram:
    return Histogram(
        "cassieq_http_request_duration_seconds",
        "HTTP request latency by method, route template and status.",
        labelnames=("method", "route", "status"),
        buckets=BUCKETS,
        registry=registry,
    )


class RequestTimer:
    def __init__(self, app: ASGIApp, histogram: Histogram, *, access_log: bool) -> None:
        self._app = app
        self._histogram = histogram
        self._log = structlog.get_logger("cassieq.access") if access_log else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self._app(scope, receive, send)
            return
        status = 0
        gone = False

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        async def receiving() -> ReceiveMessage:
            nonlocal gone
            message = await receive()
            if message["type"] == "http.disconnect":
                gone = True
            return message

        began = time.perf_counter()
        try:
            await self._app(scope, receiving, sending)
        finally:
            elapsed = time.perf_counter() - began
            sent = str(scope.get("method", "GET"))
            method = sent if sent in _METHODS else "OTHER"
            # Set by Litestar's router on the scope once the route is found.
            route = scope.get("path_template") or UNMATCHED
            # The client left first (an upload cut short): 499, as nginx counts it, whatever
            # error the app met reading the rest (anyone can do it, so it must not raise 5xx
            # alerts; an answer to a client gone is never delivered). No answer started
            # otherwise: the app failed, and the server answers 500.
            if gone and (not status or status >= 500):
                status = CLIENT_GONE
            code = str(status or 500)
            self._histogram.labels(method, route, code).observe(elapsed)
            if self._log is not None:
                client = scope.get("client")
                self._log.info(
                    "http_request",
                    method=method,
                    path=scope.get("path", ""),
                    route=route,
                    status=int(code),
                    duration_ms=round(elapsed * 1000, 3),
                    client=client[0] if client else None,
                )
