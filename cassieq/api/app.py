"""The Litestar application factory."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
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
from cassieq.api.queues import QueueController
from cassieq.api.state import AppState
from cassieq.api.v2 import V2_ROUTES
from cassieq.auth.keyring import key_encryption_key
from cassieq.auth.receipt_keys import ReceiptSecrets, ReceiptSigner
from cassieq.auth.replay import ReplayCache
from cassieq.config import Settings
from cassieq.engine import Clock, QueueEngine
from cassieq.engine.background import BackgroundWorker
from cassieq.engine.context import Tuning
from cassieq.engine.keyspace_secrets import RECEIPT_SECRET
from cassieq.sqs.dispatch import SqsDispatch
from cassieq.sqs.route import sqs_endpoint
from cassieq.store.base import Store, StoreError

SETTLE_ON_SHUTDOWN_S = 5.0


def receipt_secrets(
    settings: Settings, engine: QueueEngine
) -> Callable[[], Awaitable[ReceiptSecrets]]:
    """Where the receipt secrets come from. Never from the operator token: one receipt
    would let anyone test guesses of the token offline.

    CASSIEQ_RECEIPT_SECRET (and CASSIEQ_RECEIPT_SECRET_PREVIOUS, accepted for the grace
    period after start) when set; else the keyspace's own random secret, shared by every
    server of the keyspace and rotated by `cassieq secrets rotate-receipt`."""
    if settings.receipt_secret:
        grace_ms = settings.receipt_secret_grace_seconds * 1000
        fixed = ReceiptSecrets(
            current=settings.receipt_secret,
            previous=settings.receipt_secret_previous,
            previous_until=engine.ctx.clock.now() + grace_ms,
        )

        async def given() -> ReceiptSecrets:
            return fixed

        return given

    async def from_keyspace() -> ReceiptSecrets:
        secret = await engine.secrets.get_or_create(RECEIPT_SECRET)
        return ReceiptSecrets(secret.value, secret.previous, secret.previous_until)

    return from_keyspace


def create_app(
    settings: Settings,
    store: Store,
    *,
    clock: Clock | None = None,
    background: bool = True,
    open_admin_port: bool = False,
) -> Litestar:
    engine = QueueEngine(
        store,
        clock,
        tuning=Tuning(
            max_queues_per_account=settings.max_queues_per_account,
            long_poll_check_ms=settings.long_poll_check_ms,
        ),
        key_encryption_key=key_encryption_key(settings.key_encryption_key),
    )
    receipts = ReceiptSigner(receipt_secrets(settings, engine), engine.ctx.clock.now)
    state = AppState(
        settings=settings,
        engine=engine,
        receipts=receipts,
        replay=ReplayCache(settings.replay_cache_max_entries),
        open_admin_port=open_admin_port,
    )

    @asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        # Read (or, first server of the keyspace, create) the receipt secret before the
        # first request; a store that does not answer yet only defers it to first use.
        with contextlib.suppress(StoreError):
            await receipts.start()
        worker = BackgroundWorker(engine)
        if background:
            worker.start()
        engine.waiters.open()
        try:
            yield
        finally:
            # Waiting receives answer [] now rather than at their deadline.
            await engine.waiters.close()
            await worker.stop()
            # Redrive tasks of this server stop here; their status stays "running".
            await engine.redriver.close()
            # A reader pointer move left half done is redone by the next get, but finishing
            # it here spares that get the wait (bounded: shutdown must not hang on it).
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(engine.settle(), SETTLE_ON_SHUTDOWN_S)

    app = Litestar(
        route_handlers=[
            health,
            QueueController,
            *V2_ROUTES,
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
            # The SQS endpoint (JSON 1.0 and query protocols), reached through SqsDispatch.
            sqs_endpoint,
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
                "`x-cassieq-request-time`, or a signed query string; /api/v2 routes also take "
                "`Authorization: CQ2-HMAC-SHA256 Key=<keyName>, Signature=<sig>` with "
                "`x-cassieq-date`; operator routes take "
                "`Authorization: Bearer <CASSIEQ_ADMIN_TOKEN>`."
            ),
            path="/schema",
            render_plugins=[SwaggerRenderPlugin()],
        ),
        debug=False,
    )
    # SQS clients post to / or to a queue URL: their requests go to the SQS route before
    # routing, by their shape (cassieq.sqs.dispatch); other requests are untouched.
    app.asgi_handler = SqsDispatch(app.asgi_handler)
    if settings.cors_origins:
        # Around Litestar's whole handler, routing included: every answer to an allowed
        # origin carries the allow-origin header (a 404 too), and preflights never reach a
        # route's guards.
        app.asgi_handler = Cors(app.asgi_handler, settings.cors_origins)
    return app
