"""Which requests are SQS's: an SQS client posts to ``/`` (or to a queue URL,
``/<account>/<queue>``), where this app has its root page and no other route. Such a request
is sent, before routing, to the SQS route's own path; everything else is left as it was,
so no existing route is shadowed (an unknown path keeps its 404).

SQS-shaped: ``X-Amz-Target``, an ``AWS4-HMAC-SHA256`` Authorization, or ``Action`` /
``X-Amz-*`` query parameters; on ``/`` also a form-encoded POST (an unsigned query-protocol
request, answered MissingAuthenticationToken rather than the root page's 405).
"""

from __future__ import annotations

import re
from typing import cast
from urllib.parse import parse_qsl

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

SQS_PATH = "/_sqs"
# The path the client addressed (the queue URL's, signed by SigV4), kept in the scope.
ORIGINAL_PATH = "cassieq.api.sqs.raw_path"
_QUEUE_URL_PATH = re.compile(rb"^/[A-Za-z0-9_.~%-]+/[A-Za-z0-9_.~%-]+/?$")
_FORM = b"application/x-www-form-urlencoded"


def is_sqs(scope: Scope) -> bool:
    if scope["type"] != ScopeType.HTTP or scope["method"] not in ("GET", "POST"):
        return False
    raw_path: bytes = scope.get("raw_path") or scope["path"].encode()
    at_root = raw_path == b"/"
    if not at_root and not _QUEUE_URL_PATH.match(raw_path):
        return False
    headers = dict(scope["headers"])
    if b"x-amz-target" in headers:
        return True
    if headers.get(b"authorization", b"").startswith(b"AWS4-HMAC-SHA256"):
        return True
    query = scope.get("query_string", b"")
    if query:
        names = {k for k, _ in parse_qsl(query.decode("latin-1"), keep_blank_values=True)}
        if "X-Amz-Credential" in names or (at_root and "Action" in names):
            return True
    content_type = headers.get(b"content-type", b"")
    return at_root and scope["method"] == "POST" and content_type.startswith(_FORM)


class SqsDispatch:
    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if is_sqs(scope):
            original = scope.get("raw_path") or scope["path"].encode()
            routed = {**scope, "path": SQS_PATH, "raw_path": SQS_PATH.encode()}
            routed[ORIGINAL_PATH] = original
            scope = cast("Scope", routed)
        await self._app(scope, receive, send)
