"""Error bodies exactly as CassieQ's clients see them (wire contract, "Error bodies").

- 401, 403 and other statuses CassieQ's framework answers itself: {"code", "message"},
  the message fixed per status ("HTTP 401 Unauthorized");
- 404 and 409 from a resource: {"reason", "operation", "message", "queueName"/"account"};
- 400 (bad query parameter) and 422 (invalid body or name): {"errors": [...]}.

Each may carry one more field, "detail", with this project's precise explanation.
/api/v2 answers every error as {"code", "message", "detail"?} (api-v2.md): the same
handlers, their bodies recast (``V2_PREFIX``).
"""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Any

import msgspec
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, NotFoundException, ValidationException
from litestar.exceptions.http_exceptions import RequestEntityTooLarge
from litestar.openapi.datastructures import ResponseSpec

from cassieq.api.error_bodies import (
    AuthErrorBody,
    ErrorBody,
    ErrorsBody,
    ResourceErrorBody,
    V2ErrorBody,
)
from cassieq.api.http.bodies import JsonTooDeep
from cassieq.auth.access import AuthError
from cassieq.auth.receipts import InvalidReceipt
from cassieq.engine.errors import (
    AccountNotFound,
    Conflict,
    Contention,
    EngineError,
    InvalidArgument,
    MessageTooLarge,
    NotFound,
    QueueNotFound,
    StaleReceipt,
)
from cassieq.store.base import StoreError

log = structlog.get_logger("cassieq.api")
_URL_SUFFIX = re.compile(r" for (?:path|[A-Z]+) \S+$")
_REGEX = re.compile(r"matching regex")
_MISSING = re.compile(r"^Missing required (\w+) parameter '([^']+)'")

# This project's operation ids -> CassieQ's operation names, as its 404/409 bodies show them.
_CASSIEQ_OPERATION = {
    "getNextMessage": "getMessage",
    "updateMessage": "UpdateMessage",
    "ackMessage": "AckMessage",
    "deleteQueue": "DeleteQueue",
}
# CassieQ's fixed messages for a stale receipt; this project's reason goes into "detail".
_STALE_MESSAGE = {
    "UpdateMessage": "Pop receipt is stale.",
    "AckMessage": "The message is already being reprocessed.",
}


def _json(
    body: ErrorBody | V2ErrorBody, status: int, headers: dict[str, str] | None = None
) -> Response[Any]:
    return Response(
        msgspec.json.encode(body),
        status_code=status,
        headers=headers,
        media_type="application/json",  # exactly: the Ruby client parses bodies ending in json
    )


def status_response(
    status: int, detail: str | None = None, headers: dict[str, str] | None = None
) -> Response[Any]:
    """{"code", "message"}: the shape of 401, 403 and every status without a richer body."""
    return _json(AuthErrorBody.of_status(status, detail), status, headers)


def errors_response(status: int, *problems: str) -> Response[Any]:
    """{"errors": [...]}: 400 for a bad query parameter, 422 for an invalid body or name."""
    return _json(ErrorsBody(errors=list(problems)), status)


def _operation(request: Request[Any, Any, Any]) -> str:
    handler = request.scope.get("route_handler")
    operation_id = getattr(handler, "operation_id", None)
    name = operation_id if isinstance(operation_id, str) else "unknown"
    return _CASSIEQ_OPERATION.get(name, name)


def _engine_error(request: Request[Any, Any, Any], exc: EngineError) -> Response[Any]:
    if isinstance(exc, NotFound):
        return _resource_error(request, 404, "NotFound", str(exc), exc)
    if isinstance(exc, Conflict):
        operation = _operation(request)
        if isinstance(exc, StaleReceipt) and operation in _STALE_MESSAGE:
            return _resource_error(request, 409, "Conflict", _STALE_MESSAGE[operation], exc)
        return _resource_error(request, 409, "Conflict", str(exc), exc)
    if isinstance(exc, MessageTooLarge) and not _path(request).startswith(V2_PREFIX):
        # v1's answer to a body over a limit is 413 (as for its route's own limit); v2 keeps
        # the 422 it has always given, naming the entry.
        return errors_response(
            413,
            f"the message is {exc.size} bytes: more than the queue's maxMessageBytes, {exc.limit}",
        )
    if isinstance(exc, InvalidArgument):
        return errors_response(422, str(exc))
    if isinstance(exc, Contention):
        return status_response(503, str(exc), {"Retry-After": "1"})
    return status_response(500, str(exc))


def _resource_error(
    request: Request[Any, Any, Any], status: int, reason: str, message: str, exc: EngineError
) -> Response[Any]:
    params = request.path_params
    queue = params.get("queue")
    account = params.get("account")
    # Accounts are named by "account", queues by "queueName" (as CassieQ's bodies do).
    if isinstance(exc, AccountNotFound) or (queue is None and not isinstance(exc, QueueNotFound)):
        queue_name, account_name = None, None if account is None else str(account)
    else:
        queue_name, account_name = None if queue is None else str(queue), None
    body = ResourceErrorBody(
        reason=reason,
        operation=_operation(request),
        message=message,
        queue_name=queue_name,
        account=account_name,
        detail=None if message == str(exc) else str(exc),
    )
    return _json(body, status)


def _store_error(_: Request[Any, Any, Any], exc: StoreError) -> Response[Any]:
    # Cassandra could not settle the request now (no quorum, or an LWT whose outcome stayed
    # undecided under contention). Nothing was assumed either way: the client may retry.
    log.warning("store_unavailable", error=str(exc))
    return status_response(
        503, f"storage is unavailable now, try again: {exc}", {"Retry-After": "1"}
    )


def _auth_error(request: Request[Any, Any, Any], exc: AuthError) -> Response[Any]:
    headers: dict[str, str] | None = None
    if exc.status == 401:
        v2 = _path(request).startswith(V2_PREFIX)
        schemes = "Key, CQ2-HMAC-SHA256, Bearer" if v2 else "Key, Signed, Bearer"
        headers = {"WWW-Authenticate": f'{schemes} realm="cassieq"'}
    elif exc.status == 503:  # the v2 replay cache is full: room comes back within the skew
        headers = {"Retry-After": "1"}
    return status_response(exc.status, str(exc), headers)


def _receipt_error(_: Request[Any, Any, Any], exc: InvalidReceipt) -> Response[Any]:
    # A malformed receipt is a bad query parameter (CassieQ answers 500: fixed here).
    return errors_response(400, f"query param popReceipt is invalid: {exc}")


def _http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    if isinstance(exc, ValidationException):
        return _validation_error(exc)
    if isinstance(exc, NotFoundException):
        return status_response(404, None, exc.headers)
    if isinstance(exc, RequestEntityTooLarge):
        # Litestar refused the body by the route's limit: by its Content-Length before
        # reading any of it, or as soon as more came (a chunked body). Say which limit.
        limit = request.route_handler.resolve_request_max_body_size()
        return errors_response(413, f"the request body is larger than {limit} bytes")
    if exc.status_code == 413:
        return errors_response(413, str(exc.detail))
    if exc.status_code == 400:
        # Litestar's other 400s are bodies it could not decode (bad query parameters come as
        # ValidationException): an invalid body, 422.
        return errors_response(422, str(exc.detail))
    return status_response(exc.status_code, str(exc.detail), exc.headers)


def _validation_error(exc: ValidationException) -> Response[Any]:
    """400 for the query (and path), 422 when the body (or a name in it) is invalid."""
    extra = exc.extra if isinstance(exc.extra, list) else []
    problems: list[str] = []
    in_body = False
    if missing := _MISSING.match(str(exc.detail)):
        # A required parameter is absent: CassieQ's (Dropwizard's) own wording.
        return errors_response(400, f"{missing[1]} param {missing[2]} may not be null")
    for entry in extra:
        if not isinstance(entry, dict):
            problems.append(str(entry))
            continue
        key = _wire_name(str(entry.get("key", "body")))
        raw_source = entry.get("source", "body")
        source = str(getattr(raw_source, "value", raw_source))  # ParamType enum or str
        message = str(entry.get("message", "invalid"))
        if source == "body":
            in_body = True
            problems.append(
                f"{key} must match [a-zA-Z0-9_.-]+"
                if _REGEX.search(message)
                else f"{key}: {message}"
            )
        elif message.startswith("Missing required"):
            problems.append(f"{source} param {key} may not be null")
        else:
            problems.append(f"{source} param {key}: {message}")
    if not problems:
        # Litestar's detail ends with the URL ("... for GET /path?query"): the query may
        # hold a pop receipt or a grant's signature, which must not travel back into
        # client or proxy logs. Keep what it says, drop where.
        problems.append(_URL_SUFFIX.sub("", str(exc.detail)))
    return errors_response(422 if in_body else 400, *problems)


def _wire_name(python_name: str) -> str:
    """Parameters are named in the wire's camelCase in every message a client sees."""
    head, *rest = python_name.split("_")
    return head + "".join(part.title() for part in rest)


def _too_deep(_: Request[Any, Any, Any], exc: JsonTooDeep) -> Response[Any]:
    return errors_response(400, str(exc))


def _not_utf8(_: Request[Any, Any, Any], exc: UnicodeDecodeError) -> Response[Any]:
    return errors_response(422, "the request body must be UTF-8 encoded JSON")


def _unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    # A 500 is a bug: log it with the route (never the headers: they carry secrets).
    log.exception("unhandled_error", method=request.method, path=_path(request))
    return status_response(500, "internal error; the server log has the details")


V2_PREFIX = "/api/v2/"


def _path(request: Request[Any, Any, Any]) -> str:
    # The scope's path, never request.url: that parses the Host header, and a malformed
    # one (``Host: a:b``) made every error handler fail into a plain-text 500.
    path: str = request.scope["path"]
    return path


class _AnyV1Error(msgspec.Struct, frozen=True):
    """The fields of the v1 error shapes that a v2 error keeps."""

    errors: list[str] | None = None
    message: str | None = None
    detail: str | None = None
    reason: str | None = None  # present in a resource error: its message is specific


_ERROR_SHAPES = msgspec.json.Decoder(_AnyV1Error)


def as_v2(response: Response[Any]) -> Response[Any]:
    """A v1-shaped error answer as /api/v2 gives it: {"code", "message", "detail"?}."""
    if not isinstance(response.content, bytes):
        return response
    try:
        body = _ERROR_SHAPES.decode(response.content)
    except msgspec.ValidationError:
        return response
    if body.errors is not None:
        message, detail = "; ".join(body.errors), body.detail
    elif body.reason is not None:
        message, detail = body.message or "", body.detail
    else:  # v1's message is fixed per status; v2's says what was wrong
        message, detail = body.detail or body.message or "", None
    status = response.status_code or 500
    return _json(V2ErrorBody(code=status, message=message, detail=detail), status, response.headers)


def _versioned(handler: Any) -> Any:
    def handle(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
        response: Response[Any] = handler(request, exc)
        return as_v2(response) if _path(request).startswith(V2_PREFIX) else response

    return handle


EXCEPTION_HANDLERS: dict[int | type[Exception], Any] = {
    exc: _versioned(handler)
    for exc, handler in {
        EngineError: _engine_error,
        StoreError: _store_error,
        AuthError: _auth_error,
        InvalidReceipt: _receipt_error,
        HTTPException: _http_error,
        UnicodeDecodeError: _not_utf8,
        JsonTooDeep: _too_deep,
        Exception: _unexpected,
    }.items()
}

_BODY_OF: dict[int, type[msgspec.Struct]] = {
    400: ErrorsBody,
    404: ResourceErrorBody,
    409: ResourceErrorBody,
    413: ErrorsBody,
    422: ErrorsBody,
}


def errors(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries for a route's error answers, each with its contract shape.

    400 and 422 are always listed: any route answers them for a malformed parameter or body,
    and without them Litestar documents its own validation body, which this API never sends.
    """
    return {
        s: ResponseSpec(
            data_container=_BODY_OF.get(s, AuthErrorBody),
            description=HTTPStatus(s).phrase,
            # Litestar's generated examples are random values ("code": 7376) drawn from one
            # process-wide generator: misleading, and a document that changed with whatever
            # generated one before it in the same process.
            generate_examples=False,
        )
        for s in sorted({400, 422, *statuses})
    }


def errors_v2(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries for a v2 route's error answers: all in one shape."""
    return {
        s: ResponseSpec(
            data_container=V2ErrorBody, description=HTTPStatus(s).phrase, generate_examples=False
        )
        for s in sorted({400, 422, *statuses})
    }
