"""One JSON error shape for every failure: {"status", "error", "message"}."""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Any

import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.datastructures import ResponseSpec

from cassieq.api.dto import ErrorBody
from cassieq.auth.access import AuthError
from cassieq.auth.receipts import InvalidReceipt
from cassieq.engine.errors import (
    Conflict,
    Contention,
    EngineError,
    InvalidArgument,
    NotFound,
)
from cassieq.store.base import StoreError

log = structlog.get_logger("cassieq.api")
_URL_SUFFIX = re.compile(r" for (?:path|[A-Z]+) \S+$")


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> Response[ErrorBody]:
    return Response(
        ErrorBody(status=status, error=HTTPStatus(status).phrase, message=message),
        status_code=status,
        headers=headers,
        media_type="application/json",  # even on routes whose success is text/plain
    )


def _engine_error(_: Request[Any, Any, Any], exc: EngineError) -> Response[ErrorBody]:
    status = 500
    if isinstance(exc, NotFound):
        status = 404
    elif isinstance(exc, Conflict):
        status = 409
    elif isinstance(exc, InvalidArgument):
        status = 400
    elif isinstance(exc, Contention):
        status = 503
    return error_response(status, str(exc))


def _store_error(_: Request[Any, Any, Any], exc: StoreError) -> Response[ErrorBody]:
    # Cassandra could not settle the request now (no quorum, or an LWT whose outcome stayed
    # undecided under contention). Nothing was assumed either way: the client may retry.
    log.warning("store_unavailable", error=str(exc))
    return error_response(
        503, f"storage is unavailable now, try again: {exc}", {"Retry-After": "1"}
    )


def _auth_error(_: Request[Any, Any, Any], exc: AuthError) -> Response[ErrorBody]:
    headers = (
        {"WWW-Authenticate": 'Key, Signed, Bearer realm="cassieq"'} if exc.status == 401 else None
    )
    return error_response(exc.status, str(exc), headers)


def _receipt_error(_: Request[Any, Any, Any], exc: InvalidReceipt) -> Response[ErrorBody]:
    return error_response(400, str(exc))


def _http_error(_: Request[Any, Any, Any], exc: HTTPException) -> Response[ErrorBody]:
    message = str(exc.detail)
    if isinstance(exc, ValidationException):
        # Litestar's detail ends with the URL ("... for GET /path?query"): the query may
        # hold a pop receipt or a grant's signature, which must not travel back into
        # client or proxy logs. Keep what it says, drop where.
        message = _URL_SUFFIX.sub("", message)
    if isinstance(exc, ValidationException) and isinstance(exc.extra, list) and exc.extra:
        problems = "; ".join(
            f"{_wire_name(str(e.get('key', 'body')))}: {e.get('message')}"
            if isinstance(e, dict)
            else str(e)
            for e in exc.extra
        )
        message = f"{message}: {problems}"
    return error_response(exc.status_code, message, exc.headers)


def _wire_name(python_name: str) -> str:
    """Parameters are named in the wire's camelCase in every message a client sees."""
    head, *rest = python_name.split("_")
    return head + "".join(part.title() for part in rest)


def _not_utf8(_: Request[Any, Any, Any], exc: UnicodeDecodeError) -> Response[ErrorBody]:
    return error_response(400, "the request body must be UTF-8 encoded JSON")


def _unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[ErrorBody]:
    # A 500 is a bug: log it with the route (never the headers: they carry secrets).
    log.exception("unhandled_error", method=request.method, path=request.url.path)
    return error_response(500, "internal error; the server log has the details")


EXCEPTION_HANDLERS: dict[int | type[Exception], Any] = {
    EngineError: _engine_error,
    StoreError: _store_error,
    AuthError: _auth_error,
    InvalidReceipt: _receipt_error,
    HTTPException: _http_error,
    UnicodeDecodeError: _not_utf8,
    Exception: _unexpected,
}


def errors(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries for a route's error answers (all share ErrorBody).

    400 is always listed: any route answers it for a malformed parameter, and without it
    Litestar documents its own validation body, which is not what this API sends.
    """
    return {
        s: ResponseSpec(data_container=ErrorBody, description=HTTPStatus(s).phrase)
        for s in sorted({400, *statuses})
    }
