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
    '<p>cassieq: the CassieQ v1 API. <a href="/schema/swagger">Swagger UI</a></p>'
)


@get("/", include_in_schema=False, media_type=MediaType.HTML, sync_to_thread=False)
def root() -> str:
    # CassieQ serves its Swagger UI at /: tools and scripts wait for a 200 there.
    return _ROOT_PAGE
