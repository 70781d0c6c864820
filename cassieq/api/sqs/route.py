"""The SQS endpoint: SigV4 -> decode (JSON 1.0 or query) -> the action -> encode.

Every failure is answered in the protocol's own error format (an SqsError); an unexpected
exception is logged and answered InternalError, still SQS-shaped.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import structlog
from litestar import Request, Response, route
from litestar.exceptions import HTTPException

from cassieq.api.admission import admit
from cassieq.api.dependencies import App
from cassieq.api.quotas import sqs_over_quota
from cassieq.api.rate_limit import over_budget
from cassieq.api.sqs import errors, json_codec, query_codec
from cassieq.api.sqs.actions.messages import ACTIONS as MESSAGE_ACTIONS
from cassieq.api.sqs.actions.queues import ACTIONS as QUEUE_ACTIONS
from cassieq.api.sqs.context import Handler, Protocol, SqsCall
from cassieq.api.sqs.credentials import secrets_for
from cassieq.api.sqs.dispatch import ORIGINAL_PATH, SQS_PATH
from cassieq.api.sqs.errors import SqsError
from cassieq.api.sqs.model import API_VERSION, operation
from cassieq.api.sqs.sigv4 import SignedRequest, verify
from cassieq.auth.receipt_keys import ReceiptSigner
from cassieq.engine import QueueEngine
from cassieq.engine.errors import (
    Contention,
    EngineError,
    InvalidArgument,
    QueueNotFound,
)
from cassieq.store.base import StoreError

log = structlog.get_logger("cassieq.sqs")

# A SendMessage or SendMessageBatch carries up to 1 MiB of messages (SQS's limit); the
# request is bigger than its payload: JSON escapes a non-ASCII character as \uXXXX (up to 3
# times its UTF-8 bytes), the query protocol percent-encodes every such byte (3 times), and
# a Binary attribute is base64 (4/3), percent-encoded too: 4 MiB and the rest of a request.
MAX_BODY_BYTES = 5 * 1024 * 1024
_FORM = "application/x-www-form-urlencoded"


def next_request_id() -> str:
    """An x-amzn-RequestId in SQS's UUID shape: a random prefix drawn once per process and a
    counter, unique without a uuid4 (16 bytes from the kernel and a UUID object) per request,
    which was 1.8% of the server's time in the bench's SQS turn (#38)."""
    return f"{_REQUEST_ID_PREFIX}{next(_REQUEST_COUNT) & 0xFFFFFFFFFFFF:012x}"


_REQUEST_ID_PREFIX = str(uuid.uuid4())[:24]  # 8-4-4-4 hex groups and a dash: version 4's
_REQUEST_COUNT = itertools.count(1)


def actions() -> dict[str, Handler]:
    # Looked up per request: tests register actions in these tables.
    return {**QUEUE_ACTIONS, **MESSAGE_ACTIONS}


@route(
    SQS_PATH,
    http_method=["GET", "POST"],
    status_code=200,
    include_in_schema=False,
    request_max_body_size=MAX_BODY_BYTES,
)
async def sqs_endpoint(request: Request[Any, Any, Any], app: App) -> Response[bytes]:
    request_id = next_request_id()
    # From the scope's headers: Litestar's Headers object, built for this one look-up, was
    # 1% of the server's time in the bench's SQS turn (#38).
    protocol: Protocol = (
        "json" if any(k == b"x-amz-target" for k, _ in request.scope["headers"]) else "query"
    )
    seen = _Seen()
    try:
        return await _answer(
            request, app.engine, app.receipts, app.settings.sqs_region, protocol, request_id, seen
        )
    except SqsError as error:
        log.info("sqs_error", action=seen.action, code=error.code, status=error.status)
        return _error(error, protocol, request_id)
    except (Contention, StoreError) as e:
        log.warning("sqs_unavailable", action=seen.action, error=type(e).__name__)
        return _error(errors.service_unavailable(), protocol, request_id)
    except Exception:
        # A bug, answered in the protocol's shape all the same.
        log.exception("sqs_failed", action=seen.action, account=seen.account)
        return _error(errors.internal_error(), protocol, request_id)


@dataclass
class _Seen:
    """How far a request got, for the logs."""

    action: str = "?"
    account: str = "?"


async def _answer(
    request: Request[Any, Any, Any],
    engine: QueueEngine,
    receipts: ReceiptSigner,
    region: str,
    protocol: Protocol,
    request_id: str,
    seen: _Seen,
) -> Response[bytes]:
    body = await _body(request)
    signed = _signed_request(request, body)
    verified = await verify(
        signed,
        lambda key_id: secrets_for(engine, key_id),
        datetime.fromtimestamp(engine.now() / 1000, UTC),
        region=region,
    )
    seen.account = verified.account
    if over := await over_budget(request, verified.account):  # the account's request budget
        raise errors.throttling(*over)
    flat: dict[str, str] = {}
    if protocol == "json":
        action = json_codec.action_of(_first(signed, "x-amz-target"))
    else:
        flat = _query_parameters(signed)
        action = flat.get("Action", "")
        if not action:
            raise SqsError("MissingAction", "The request must contain the parameter Action.")
    seen.action = action[:80]
    if refused := sqs_over_quota(request, verified.account, action):  # the account's quotas
        raise errors.over_limit(refused)
    await admit(request, verified.account)  # accounts take turns when the server is busy
    op = operation(action)
    if op is None:
        raise errors.invalid_action(action[:80])
    handler = actions().get(action)
    if handler is None:
        raise errors.unsupported_operation(f"{action} is not supported by this endpoint.")
    if protocol == "json":
        params = json_codec.decode(op.input_shape, body)
    else:
        _queue_url_from_path(request, flat)
        params = query_codec.decode(op.input_shape, flat)
    call = SqsCall(
        engine=engine,
        account=verified.account,
        key_name=verified.key_name,
        action=action,
        params=params,
        base_url=_base_url(request, signed),
        region=verified.region,
        protocol=protocol,
        receipts=receipts,
    )
    result = await _run(handler, call)
    headers = {"x-amzn-RequestId": request_id}
    if protocol == "json":
        return Response(
            json_codec.encode(result), media_type=json_codec.CONTENT_TYPE, headers=headers
        )
    return Response(
        query_codec.encode(action, op.output_shape, result, request_id),
        media_type=query_codec.CONTENT_TYPE,
        headers=headers,
    )


async def _run(handler: Handler, call: SqsCall) -> dict[str, Any]:
    """The action, with engine errors a handler let through answered as SQS would."""
    try:
        return await handler(call)
    except QueueNotFound:
        raise errors.queue_does_not_exist() from None
    except InvalidArgument as e:
        raise errors.invalid_parameter_value(str(e)) from None
    except Contention:
        raise
    except EngineError as e:
        raise errors.invalid_parameter_value(str(e)) from None


async def _body(request: Request[Any, Any, Any]) -> bytes:
    try:
        return await request.body()
    except HTTPException as e:
        if e.status_code == 413:
            raise errors.request_too_large(MAX_BODY_BYTES) from None
        raise errors.invalid_parameter_value(e.detail or "The request is malformed.") from None


def _signed_request(request: Request[Any, Any, Any], body: bytes) -> SignedRequest:
    scope: Any = request.scope  # a TypedDict, and the dispatcher's key is not one of its own
    raw_path = scope.get(ORIGINAL_PATH) or scope.get("raw_path") or b"/"
    return SignedRequest(
        method=scope["method"],
        raw_path=bytes(raw_path).decode("latin-1"),
        raw_query=scope.get("query_string", b"").decode("latin-1"),
        headers=[(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"]],
        body=body,
    )


def _query_parameters(signed: SignedRequest) -> dict[str, str]:
    """The query and (form-encoded) body parameters, less the signature's own."""
    flat: dict[str, str] = {}
    # Decoded strictly: a byte sequence that is not UTF-8 is refused, never stored as U+FFFD.
    for key, value in query_codec.form_pairs(signed.raw_query.encode("latin-1"), "query string"):
        if not key.startswith("X-Amz-"):
            flat[key] = value
    content_type = (signed.header("content-type") or "").split(";")[0].strip().lower()
    if signed.body and content_type == _FORM:
        flat.update(query_codec.form_pairs(signed.body, "body"))
    version = flat.get("Version")
    if version is not None and version != API_VERSION:
        raise SqsError("NoSuchVersion", f"An incorrect version was specified ({version[:20]}).")
    return flat


def _queue_url_from_path(request: Request[Any, Any, Any], flat: dict[str, str]) -> None:
    # The query protocol's queue actions are posted to the queue URL itself (a path the
    # dispatcher recognised as one; not the route's own path).
    scope: dict[str, Any] = dict(request.scope)
    original: bytes | None = scope.get(ORIGINAL_PATH)
    if original and original.strip(b"/") and "QueueUrl" not in flat:
        flat["QueueUrl"] = _base_url(request) + original.decode("latin-1").rstrip("/")


def _base_url(request: Request[Any, Any, Any], signed: SignedRequest | None = None) -> str:
    host = _first(signed, "host") if signed is not None else request.headers.get("host")
    return f"{request.scope.get('scheme', 'http')}://{host or 'localhost'}"


def _first(signed: SignedRequest, name: str) -> str:
    """A header's first value, as Litestar's ``request.headers[name]`` gives it ("" if none)."""
    return next((v for k, v in signed.headers if k == name), "")


def _error(error: SqsError, protocol: Protocol, request_id: str) -> Response[bytes]:
    headers = {"x-amzn-RequestId": request_id, **error.headers}
    if protocol == "json":
        body, extra = json_codec.encode_error(error)
        return Response(
            body,
            status_code=error.status,
            media_type=json_codec.CONTENT_TYPE,
            headers={**headers, **extra},
        )
    return Response(
        query_codec.encode_error(error, request_id),
        status_code=error.status,
        media_type=query_codec.CONTENT_TYPE,
        headers=headers,
    )
