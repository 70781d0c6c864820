"""CORS for the origins in CASSIEQ_CORS_ORIGINS (none by default: no CORS headers at all).

Not Litestar's CORSConfig: it answers a preflight from an origin not on the list with a
text/plain 400, and adds the allow-methods and allow-headers to every response of any
origin. Here an allowed origin's preflight is answered 204 before routing (it carries no
credentials, so it must not reach the guards), its other requests get the allow-origin
header on every answer (errors, 404s included), and other origins are not told anything:
their OPTIONS gets the plain answer (204 with Allow), which the browser refuses.
"""

from __future__ import annotations

from collections.abc import Iterable

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from cassieq.auth.signing import REQUEST_TIME_HEADER
from cassieq.auth.signing_v2 import DATE_HEADER

ALLOW_METHODS = b"DELETE, GET, OPTIONS, POST, PUT"
# The credentials of the queue API (Key / Signed with its time header) and JSON bodies.
ALLOW_HEADERS = f"Authorization, Content-Type, {REQUEST_TIME_HEADER}, {DATE_HEADER}".encode()
# Not CORS-safelisted, and a client acts on them: when to retry, which scheme to use.
EXPOSE_HEADERS = b"Retry-After, WWW-Authenticate"
MAX_AGE_S = b"600"


class Cors:
    def __init__(self, app: ASGIApp, origins: Iterable[str]) -> None:
        self._app = app
        listed = {o.strip().rstrip("/") for o in origins if o.strip()}
        self._any = "*" in listed
        self._origins = frozenset(o.encode() for o in listed - {"*"})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self._app(scope, receive, send)
            return
        origin = _header(scope, b"origin")
        if origin is None or not (self._any or origin in self._origins):
            await self._app(scope, receive, send)
            return
        allow = [(b"access-control-allow-origin", b"*" if self._any else origin)]
        if not self._any:
            allow.append((b"vary", b"Origin"))
        if scope["method"] == "OPTIONS" and _header(scope, b"access-control-request-method"):
            await send(
                {
                    "type": "http.response.start",
                    "status": 204,
                    "headers": [
                        *allow,
                        (b"access-control-allow-methods", ALLOW_METHODS),
                        (b"access-control-allow-headers", ALLOW_HEADERS),
                        (b"access-control-max-age", MAX_AGE_S),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), *allow]
                headers.append((b"access-control-expose-headers", EXPOSE_HEADERS))
                message = {**message, "headers": headers}
            await send(message)

        await self._app(scope, receive, send_with_cors)


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return bytes(value)
    return None
