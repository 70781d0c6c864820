"""The Litestar application factory."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager

from litestar import Litestar, Router
from litestar.datastructures import State

from cassieq.api.admin.debug import DebugController
from cassieq.api.admin.metrics import metrics
from cassieq.api.admission import FairAdmission, GivesPlacesBack
from cassieq.api.dependencies import dependencies
from cassieq.api.docs import ExampleBodies, asset_routes, document_security, openapi_config
from cassieq.api.errors import EXCEPTION_HANDLERS
from cassieq.api.health import health, root
from cassieq.api.http.allow_header import AllowHeader
from cassieq.api.http.bodies import CassieqRequest
from cassieq.api.http.cors import Cors
from cassieq.api.metrics import Metrics, MetricsObserver, RequestTimer
from cassieq.api.metrics.tenant_limits import TenantLimitsCollector
from cassieq.api.quotas import AccountQuotas
from cassieq.api.rate_limit import AccountBudgets
from cassieq.api.ready import ready
from cassieq.api.sqs.dispatch import SqsDispatch
from cassieq.api.sqs.route import sqs_endpoint
from cassieq.api.state import AppState
from cassieq.api.unverified_bodies import UnverifiedBodies
from cassieq.api.v1.accounts import AccountController
from cassieq.api.v1.messages import MessageController
from cassieq.api.v1.permissions import PermissionController
from cassieq.api.v1.queues import QueueController
from cassieq.api.v2 import V2_ROUTES
from cassieq.api.web_console import History, console_router
from cassieq.api.workers import WorkerHeader, WorkerSlot
from cassieq.auth.keyring import key_encryption_key, previous_key_encryption_keys
from cassieq.auth.receipt_keys import ReceiptSecrets, ReceiptSigner
from cassieq.auth.replay import ReplayCache
from cassieq.config import Settings
from cassieq.engine import Clock, Observer, QueueEngine
from cassieq.engine.context import Tuning
from cassieq.engine.worker import BackgroundWorker
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
            previous_until=engine.now() + grace_ms,
        )

        async def given() -> ReceiptSecrets:
            return fixed

        return given

    async def from_keyspace() -> ReceiptSecrets:
        secret = await engine.receipt_secret()
        return ReceiptSecrets(secret.value, secret.previous, secret.previous_until)

    return from_keyspace


def create_app(
    settings: Settings,
    store: Store,
    *,
    clock: Clock | None = None,
    background: bool = True,
    background_tick_seconds: float = 1.0,
    open_admin_port: bool = False,
    observers: Sequence[Observer] = (),
    worker_slot: WorkerSlot | None = None,
) -> Litestar:
    """``observers``: the engine's besides the metrics' own (tests count calls with one).
    ``worker_slot``: this process's place among the workers of `cassieq serve --workers N`."""
    events = MetricsObserver()  # the engine's events, for /metrics
    engine = QueueEngine(
        store,
        clock,
        tuning=Tuning(
            max_queues_per_account=settings.max_queues_per_account,
            default_partitions=settings.default_partitions,
            long_poll_check_ms=settings.long_poll_check_ms,
            long_poll_max_waiting=settings.long_poll_max_waiting,
            long_poll_max_waiting_per_account=settings.long_poll_max_waiting_per_account,
        ),
        key_encryption_key=key_encryption_key(settings.key_encryption_key),
        previous_key_encryption_keys=previous_key_encryption_keys(
            settings.key_encryption_key_previous
        ),
        observers=[events, *observers],
    )
    receipts = ReceiptSigner(receipt_secrets(settings, engine), engine.now)
    worker = BackgroundWorker(engine, tick_seconds=background_tick_seconds)
    worker.health.enabled = background
    exporter = Metrics(settings, engine, worker.health, events, worker=worker_slot)
    budgets = AccountBudgets.of(settings)
    # The quotas' figures are the /metrics sample's per-account sums (one pass for both).
    quotas = AccountQuotas.of(
        settings, lambda: exporter.sampler.sample.accounts, exporter.sampler.refresh
    )
    exporter.registry.register(TenantLimitsCollector(budgets, quotas))
    state = AppState(
        settings=settings,
        engine=engine,
        receipts=receipts,
        replay=ReplayCache(
            settings.replay_cache_max_entries, settings.replay_cache_max_entries_per_account
        ),
        open_admin_port=open_admin_port,
        background=worker.health,
        metrics=exporter,
        budgets=budgets,
        quotas=quotas,
        admission=FairAdmission.of(settings),
        unverified=UnverifiedBodies(
            settings.http_unverified_body_bytes, settings.http_unverified_body_bytes_per_account
        ),
    )
    history = History(engine)

    @asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        # Read (or, first server of the keyspace, create) the receipt secret before the
        # first request; a store that does not answer yet only defers it to first use.
        with contextlib.suppress(StoreError):
            await receipts.start()
        sampler = None
        if background:
            worker.start()
            # The console's charts: statistics of the queues viewed in it, every 10 s.
            sampler = asyncio.create_task(history.run(), name="console-sampler")
            quotas.start()  # refreshes the quotas' figures while a quota is set
        engine.open()
        await exporter.open()  # the sibling workers' /metrics asks this one from now on
        try:
            yield
        finally:
            # Waiting receives answer [] now rather than at their deadline.
            await engine.release_waiters()
            await quotas.stop()
            await exporter.close()  # a /metrics refresh still running; the workers' socket
            await worker.stop()
            if sampler is not None:
                sampler.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sampler
            # Redrive tasks of this server stop here, and say "interrupted".
            await engine.stop_redrives()
            # A reader pointer move left half done is redone by the next get, but finishing
            # it here spares that get the wait (bounded: shutdown must not hang on it).
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(engine.settle(), SETTLE_ON_SHUTDOWN_S)

    app = Litestar(
        route_handlers=[
            health,
            ready,
            metrics,
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
            *asset_routes(),
            console_router(),
        ],
        state=State({"cassieq": state, "console_history": history}),
        # Handlers name the parts they use (cassieq.api.dependencies).
        dependencies=dependencies(state),
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=[lifespan],
        # JSON bodies are depth-checked before they are decoded (cassieq.api.http.bodies).
        request_class=CassieqRequest,
        before_send=[AllowHeader()],
        # Bodies beyond this are refused (413) by their Content-Length before being read;
        # the put route has its own limit, the message size.
        request_max_body_size=settings.http_max_body_bytes,
        openapi_config=openapi_config(),
        # Before Litestar's own struct plugin: the request bodies' examples (Swagger UI's).
        plugins=[ExampleBodies()],
        debug=False,
        # Logging is cassieq.logs' alone: Litestar's own set-up would put a plain-text
        # handler on the root logger (unhandled errors are logged by EXCEPTION_HANDLERS).
        logging_config=None,
    )
    document_security(app)
    # SQS clients post to / or to a queue URL: their requests go to the SQS route before
    # routing, by their shape (cassieq.api.sqs.dispatch); other requests are untouched.
    app.asgi_handler = SqsDispatch(app.asgi_handler)
    if settings.cors_origins:
        # Around Litestar's whole handler, routing included: every answer to an allowed
        # origin carries the allow-origin header (a 404 too), and preflights never reach a
        # route's guards.
        app.asgi_handler = Cors(app.asgi_handler, settings.cors_origins)
    if worker_slot is not None:
        app.asgi_handler = WorkerHeader(app.asgi_handler, worker_slot.index)
    app.asgi_handler = GivesPlacesBack(app.asgi_handler)  # fair admission's places
    # Outermost: every answer is timed, a CORS preflight's and a 404's too.
    assert state.metrics is not None
    app.asgi_handler = RequestTimer(
        app.asgi_handler, state.metrics.requests, access_log=settings.access_log
    )
    return app
