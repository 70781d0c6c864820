"""Liveness (/health, used by the Docker healthcheck) and the root page."""

from __future__ import annotations

import msgspec
from litestar import MediaType, get

from cassieq import __version__


class Health(msgspec.Struct, frozen=True):
    status: str
    version: str


@get(
    "/health",
    operation_id="health",
    summary="Liveness check",
    tags=["health"],
    sync_to_thread=False,
)
def health() -> Health:
    return Health(status="ok", version=__version__)


_ROOT_PAGE = (
    "<!doctype html><title>cassieq</title>"
    "<p>cassieq: the CassieQ v1 API, /api/v2 and an SQS endpoint.</p><ul>"
    '<li><a href="/schema/swagger">Swagger UI</a> and <a href="/schema/redoc">ReDoc</a>:'
    " the API documents</li>"
    '<li><a href="/console">/console</a>: the web console (operator token)</li>'
    "<li>/metrics: Prometheus metrics (operator token, <code>Authorization: Bearer</code>)</li>"
    '<li><a href="/health">/health</a> and <a href="/ready">/ready</a>: liveness and'
    " readiness</li></ul>"
)


@get("/", include_in_schema=False, media_type=MediaType.HTML, sync_to_thread=False)
def root() -> str:
    # CassieQ serves its Swagger UI at /: tools and scripts wait for a 200 there.
    return _ROOT_PAGE
