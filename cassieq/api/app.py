"""The Litestar application factory."""

from __future__ import annotations

from litestar import Litestar

from cassieq.api.health import health
from cassieq.config import Settings


def create_app(settings: Settings) -> Litestar:
    app = Litestar(route_handlers=[health], debug=False)
    app.state.settings = settings
    return app
