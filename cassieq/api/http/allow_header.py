"""OPTIONS answers: 204 with the methods of the path in ``Allow``.

Litestar answers OPTIONS itself, but its Allow header is stale for a controller with
several handlers on one path: the handler is built with the first route of that path and
keeps its methods when the route is rebuilt with the others (the queue list's OPTIONS
said "OPTIONS, POST", without GET). The header is rewritten from the app's final routes.
"""

from __future__ import annotations

from typing import Any

from litestar.routes import HTTPRoute
from litestar.types import Message, Scope


class AllowHeader:
    """A before-send hook: the Allow header of Litestar's OPTIONS answer, made exact."""

    def __init__(self) -> None:
        self._allow: dict[str, bytes] | None = None

    async def __call__(self, message: Message, scope: Scope) -> None:
        if (
            message["type"] != "http.response.start"
            or scope.get("method") != "OPTIONS"
            or message["status"] != 204
        ):
            return
        template = scope.get("path_template")
        allow = self._methods(scope["litestar_app"]).get(template) if template else None
        if allow is None:
            return
        headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"allow"]
        message["headers"] = [*headers, (b"allow", allow)]

    def _methods(self, app: Any) -> dict[str, bytes]:
        # Built on first use: the routes are final once the app serves.
        if self._allow is None:
            self._allow = {
                route.path_format: ", ".join(sorted(route.methods)).encode()
                for route in app.routes
                if isinstance(route, HTTPRoute)
            }
        return self._allow
