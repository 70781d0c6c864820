"""The Litestar application factory."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar, Router
from litestar.datastructures import State
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin

from cassieq import __version__
from cassieq.api.accounts import AccountController
from cassieq.api.bodies import CassieqRequest
from cassieq.api.cors import Cors
from cassieq.api.debug import DebugController
from cassieq.api.errors import EXCEPTION_HANDLERS
from cassieq.api.health import health, root
from cassieq.api.messages import MessageController
from cassieq.api.options import AllowHeader
from cassieq.api.permissions import PermissionController
from cassieq.api.queues import QueueController, QueueStatisticsV2Controller
from cassieq.api.state import AppState
from cassieq.auth.receipts import ReceiptCodec
from cassieq.config import Settings
from cassieq.engine import Clock, QueueEngine
from cassieq.engine.background import BackgroundWorker
from cassieq.store.base import Store

SETTLE_ON_SHUTDOWN_S = 5.0


def receipt_secret(settings: Settings) -> str:
    """Receipts must verify on every server: an explicit secret, else one derived from the
    operator token, else (dev only) a random one that lives as long as the process."""
    if settings.receipt_secret:
        return settings.receipt_secret
    if settings.admin_token:
        return hmac.new(
            settings.admin_token.encode(), b"cassieq pop receipts", hashlib.sha256
        ).hexdigest()
    return secrets.token_hex(32)


def create_app(
    settings: Settings,
    store: Store,
    *,
    clock: Clock | None = None,
    background: bool = True,
    open_admin_port: bool = False,
) -> Litestar:
    engine = QueueEngine(store, clock)
    state = AppState(
        settings=settings,
        engine=engine,
        receipts=ReceiptCodec(receipt_secret(settings)),
        open_admin_port=open_admin_port,
    )

    @asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        worker = BackgroundWorker(engine)
        if background:
            worker.start()
        try:
            yield
        finally:
            await worker.stop()
            # A reader pointer move left half done is redone by the next get, but finishing
            # it here spares that get the wait (bounded: shutdown must not hang on it).
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(engine.settle(), SETTLE_ON_SHUTDOWN_S)

    app = Litestar(
        route_handlers=[
            health,
            QueueController,
            QueueStatisticsV2Controller,
            MessageController,
            AccountController,
            PermissionController,
            DebugController,
            # The operator routes again where CassieQ serves them (its admin port's paths),
            # undocumented: the same operations under one name each in the OpenAPI document.
            Router(
                path="/admin",
                route_handlers=[AccountController, PermissionController],
                include_in_schema=False,
            ),
            root,
        ],
        state=State({"cassieq": state}),
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=[lifespan],
        # JSON bodies are depth-checked before they are decoded (cassieq.api.bodies).
        request_class=CassieqRequest,
        before_send=[AllowHeader()],
        # Bodies beyond this are refused (413) by their Content-Length before being read;
        # the put route has its own limit, the message size.
        request_max_body_size=settings.http_max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="cassieq",
            version=__version__,
            description=(
                "A message queue on Apache Cassandra, wire-compatible with the CassieQ v1 API. "
                "Queue routes take `Authorization: Key <key>`, `Authorization: Signed <sig>` with "
                "`x-cassieq-request-time`, or a signed query string; operator routes take "
                "`Authorization: Bearer <CASSIEQ_ADMIN_TOKEN>`."
            ),
            path="/schema",
            render_plugins=[SwaggerRenderPlugin()],
        ),
        debug=False,
    )
    if settings.cors_origins:
        # Around Litestar's whole handler, routing included: every answer to an allowed
        # origin carries the allow-origin header (a 404 too), and preflights never reach a
        # route's guards.
        app.asgi_handler = Cors(app.asgi_handler, settings.cors_origins)
    return app
