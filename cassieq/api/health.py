"""Liveness: answers as soon as the process serves HTTP (used by the Docker healthcheck)."""

from __future__ import annotations

import msgspec
from litestar import get

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
