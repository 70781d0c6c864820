"""GET /metrics: the Prometheus text format, for the operator (as the admin routes)."""

from __future__ import annotations

from litestar import Response, get
from litestar.datastructures import State

from cassieq.api.security import admin_guard
from cassieq.api.state import AppState

# The text format every Prometheus reads (2.x as Debian ships it too); Litestar adds the
# charset. The names are plain ASCII, so the output is the same as in format 1.0.0.
TEXT_FORMAT = "text/plain; version=0.0.4"


@get("/metrics", guards=[admin_guard], include_in_schema=False)
async def metrics(state: State) -> Response[bytes]:
    app: AppState = state.cassieq
    assert app.metrics is not None  # the app factory always makes them
    return Response(await app.metrics.render(), media_type=TEXT_FORMAT)
