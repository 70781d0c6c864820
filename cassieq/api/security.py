"""Route guards: account credentials per level on the queue API, the operator token on admin."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime
from typing import Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from cassieq.api.admission import admit
from cassieq.api.errors import V2_PREFIX
from cassieq.api.quotas import refuse_over_quota
from cassieq.api.rate_limit import spend_or_429
from cassieq.api.state import AppState
from cassieq.auth.access import (
    AccessRequest,
    Forbidden,
    Unauthenticated,
    admin_token_matches,
    authorize,
)
from cassieq.auth.access_v2 import authorize_v2, check_v2_head
from cassieq.auth.signing_v2 import SCHEME as V2_SCHEME
from cassieq.engine.errors import AccountNotFound
from cassieq.model import AuthorizationLevel


async def account_guard(
    connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
) -> None:
    if _is_options(connection):
        return
    queue = connection.path_params.get("queue")
    await authorize_for(connection, handler.opt["level"], None if queue is None else str(queue))
    # Authenticated: now the account's request budget is spent (never by strangers).
    await spend_or_429(connection, str(connection.path_params.get("account", "")))
    refuse_over_quota(connection, str(connection.path_params.get("account", "")), handler)
    await admit(connection, str(connection.path_params.get("account", "")))  # in turns when busy


async def account_before_request(request: Request[Any, Any, Any]) -> None:
    """``account_guard`` as the queue API controllers' ``before_request`` hook, which runs
    at the same point for a route (before its parameters and body are parsed): Litestar
    hands each guard call a copy of the route handler, and that copy was 4.5% of the
    server's CPU on v1's put->get->ack (py-spy); the hook gets the request, whose handler
    is only read here. Unlike guards, which add up over the layers, the last layer's
    before_request wins: a route or router of these controllers must not set its own (the
    OpenAPI security, documented from this hook, would lose it too, and
    tests/unit/api/test_docs_pages.py fails on a queue route without it)."""
    await account_guard(request, request.route_handler)


async def authorize_for(
    connection: ASGIConnection[Any, Any, Any, Any], level: AuthorizationLevel, queue: str | None
) -> None:
    """The request's credentials grant ``level`` on ``queue`` (a route that touches a second
    queue, as a redrive its target, checks it too, as many times as it needs); AuthError
    otherwise."""
    state: AppState = connection.app.state.cassieq
    account_name = str(connection.path_params.get("account", ""))
    try:
        account = await state.engine.account_for_auth(account_name)
    except AccountNotFound:
        account = None  # answered exactly like a wrong key: no account enumeration
    request = AccessRequest(
        account_name=account_name,
        account=account,
        method=str(connection.scope.get("method", "GET")),
        path=connection.scope["path"],
        headers=connection.headers,
        query={k: v for k, v in connection.query_params.items()},
        now=datetime.now(UTC),
        clock_skew_seconds=state.settings.clock_skew_seconds,
        clock_ahead_seconds=state.settings.clock_ahead_seconds,
    )
    scheme, _, credential = connection.headers.get("authorization", "").partition(" ")
    # The v2 signature only on /api/v2 (v1 is frozen: there it is an unknown scheme, 401).
    if scheme == V2_SCHEME and request.path.startswith(V2_PREFIX):
        await _authorize_v2(connection, state, request, credential)
        return
    # v1's Signed only on v1: on v2 it would bypass the replay protection (#40 finding 10).
    authorize(request, level, queue, v1_signed=not request.path.startswith(V2_PREFIX))


# Where a request keeps the v2 signature it had remembered by the replay cache.
_RECORDED = "cassieq.v2_signature"


async def _authorize_v2(
    connection: ASGIConnection[Any, Any, Any, Any],
    state: AppState,
    request: AccessRequest,
    credential: str,
) -> None:
    # The body is signed. Guards of HTTP routes get the Request: reading it here applies the
    # route's body limit first (413 by Content-Length, before any byte is read), and Litestar
    # keeps the bytes for the handler, so the body is read once.
    # What can be checked without the body is checked first: a malformed credential or a
    # date out of bounds is refused before a byte of the body is read.
    check_v2_head(request, credential)
    body_size = 0
    if isinstance(connection, Request):
        # As much as the route lets a body be (a larger one is refused 413 when read), or
        # less when its Content-Length says so (a chunked one may be the most).
        body_size = connection.route_handler.resolve_request_max_body_size() or 0
        if (declared := connection.headers.get("content-length", "")).isdigit():
            body_size = min(body_size, int(declared)) if body_size else int(declared)
    # Read, and held, only with room left for unverified bodies (a 503 before any byte).
    async with state.unverified.room(request.account_name, body_size):
        body = await connection.body() if isinstance(connection, Request) else b""
        query = list(connection.query_params.multi_items())
        # A second check within the same request (a second queue) is no replay of it.
        recorded = connection.state.get(_RECORDED)
        connection.state[_RECORDED] = authorize_v2(
            request, credential, query, body, state.replay, recorded
        )


async def admin_guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    if _is_options(connection):
        return
    state: AppState = connection.app.state.cassieq
    if state.open_admin_port and loopback_on_admin_port(connection, state.settings.admin_port):
        return
    token = state.settings.admin_token
    if not token:
        raise Forbidden("operator routes are disabled: set CASSIEQ_ADMIN_TOKEN")
    if not admin_token_matches(connection.headers.get("authorization", ""), token):
        raise Unauthenticated("operator routes need 'Authorization: Bearer <CASSIEQ_ADMIN_TOKEN>'")


def _is_options(connection: ASGIConnection[Any, Any, Any, Any]) -> bool:
    """OPTIONS is answered by Litestar's own handler with the path's methods (the Allow
    header): nothing to protect, and a browser's CORS preflight never carries credentials."""
    return connection.scope.get("method") == "OPTIONS"


def loopback_on_admin_port(
    connection: ASGIConnection[Any, Any, Any, Any], admin_port: int | None
) -> bool:
    """Came in on the admin listener, from this machine (the server's own socket address and
    the peer's, as uvicorn reports them; a Host header proves nothing)."""
    server, client = connection.scope.get("server"), connection.scope.get("client")
    if admin_port is None or not server or not client or server[1] != admin_port:
        return False
    try:
        return ipaddress.ip_address(client[0]).is_loopback
    except ValueError:
        return False
