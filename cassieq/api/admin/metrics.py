"""GET /metrics: the Prometheus text format, for the operator (as the admin routes)."""

from __future__ import annotations

from litestar import Response, get

from cassieq.api.dependencies import AppMetrics
from cassieq.api.security import admin_guard

# The text format every Prometheus reads (2.x as Debian ships it too); Litestar adds the
# charset. The names are plain ASCII, so the output is the same as in format 1.0.0.
TEXT_FORMAT = "text/plain; version=0.0.4"


@get("/metrics", guards=[admin_guard], include_in_schema=False)
async def metrics(metrics: AppMetrics) -> Response[bytes]:
    return Response(await metrics.render(), media_type=TEXT_FORMAT)
