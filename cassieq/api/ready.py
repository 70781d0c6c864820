"""Readiness (/ready): Cassandra answers, its schema is the one this server was built
with, and the background loop is alive. /health stays liveness (the process answers):
an orchestrator restarts on /health and routes traffic on /ready."""

from __future__ import annotations

import asyncio

import msgspec
import structlog
from litestar import Response, get

from cassieq.api.dependencies import App
from cassieq.config import Settings
from cassieq.engine import QueueEngine
from cassieq.engine.worker import LoopHealth

log = structlog.get_logger("cassieq.api")

# /ready must answer even when Cassandra does not: a check that hangs is a failed check.
CHECK_TIMEOUT_S = 5.0


class Check(msgspec.Struct, frozen=True):
    ok: bool
    detail: str


class Readiness(msgspec.Struct, frozen=True):
    status: str  # "ready" or "not ready"
    failed: list[str]
    checks: dict[str, Check]


@get("/ready", include_in_schema=False)
async def ready(app: App) -> Response[Readiness]:
    cassandra, schema = await _store_checks(app.engine)
    checks = {
        "cassandra": cassandra,
        "schema": schema,
        "background": _background(app.engine, app.settings, app.background),
    }
    failed = [name for name, check in checks.items() if not check.ok]
    body = Readiness(status="not ready" if failed else "ready", failed=failed, checks=checks)
    return Response(body, status_code=503 if failed else 200)


async def _store_checks(engine: QueueEngine) -> tuple[Check, Check]:
    try:
        status = await asyncio.wait_for(engine.schema_status(), CHECK_TIMEOUT_S)
    except Exception as exc:
        # No quorum, timeouts, no connection: whatever the driver says, it is not ready.
        # /ready is open to anyone: the error's text (hosts, addresses) goes to the log only.
        log.warning("ready_cassandra_check_failed", error=repr(exc))
        no_answer = Check(ok=False, detail=f"no answer ({type(exc).__name__})")
        return no_answer, Check(ok=False, detail="unknown")
    return Check(ok=True, detail=status.answers), Check(ok=status.ok, detail=status.detail)


def _background(engine: QueueEngine, settings: Settings, health: LoopHealth) -> Check:
    if not health.enabled:
        return Check(ok=True, detail="not run by this app")
    if health.last_success_ms is None:
        return Check(ok=False, detail=f"no pass completed yet ({health.failures} failed)")
    age_s = (engine.now() - health.last_success_ms) / 1000
    limit = settings.ready_background_max_age_seconds
    if age_s > limit:
        return Check(
            ok=False,
            detail=f"last pass completed {age_s:.0f} s ago (limit {limit:g} s; "
            f"{health.failures} failed)",
        )
    return Check(ok=True, detail=f"last pass completed {age_s:.1f} s ago")
