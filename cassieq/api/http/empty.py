"""Successful answers without a body, as CassieQ sends them: no Content-Type at all."""

from __future__ import annotations

from typing import Any

from litestar import Response
from litestar.openapi.datastructures import ResponseSpec
from litestar.response.base import ASGIResponse


class EmptyResponse(Response[bytes]):
    """An empty body with `Content-Length: 0` and no Content-Type.

    CassieQ's clients treat an empty success as "true"; the Ruby client parses any body whose
    Content-Type ends in "json", and fails on an empty one. Litestar always sets a
    Content-Type on statuses that allow a body, so it is taken out here.
    """

    def __init__(self, status_code: int) -> None:
        super().__init__(b"", status_code=status_code, media_type="text/plain")

    def to_asgi_response(self, *args: Any, **kwargs: Any) -> ASGIResponse:
        response = super().to_asgi_response(*args, **kwargs)
        if "content-type" in response.headers:
            del response.headers["content-type"]
        return response


def empty(description: str) -> ResponseSpec:
    """The OpenAPI entry of an empty success: no content (so no media type is promised)."""
    return ResponseSpec(data_container=None, description=description)
