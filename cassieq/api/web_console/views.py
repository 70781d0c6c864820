"""The web console's pages (/console): server-rendered HTML, no script.

Every value from a tenant (account, queue and key names, message bodies and attributes)
goes through Jinja's autoescaping; the Content-Security-Policy allows no script at all, so
markup that slipped through still could not run.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, select_autoescape
from litestar import Request, Response, Router, get, post
from litestar.params import FromPath, Parameter
from litestar.response import Redirect

from cassieq.api.dependencies import Engine
from cassieq.api.security import loopback_on_admin_port
from cassieq.api.state import AppState
from cassieq.api.web_console.chart import Series, line_chart
from cassieq.api.web_console.history import History, QueueKey
from cassieq.api.web_console.pointers import partition_rows, pointer_view, subscription_rows
from cassieq.api.web_console.session import (
    Session,
    csrf_ok,
    new_session,
    session_cookie,
    session_key,
    session_of,
)
from cassieq.auth.access import admin_token_matches
from cassieq.engine import QueueEngine
from cassieq.engine.errors import Conflict, InvalidArgument
from cassieq.model import PEEK_CURSOR_PATTERN, QueueDefinition, Statistics

PEEK_LIMIT = 20
BODY_PREVIEW = 400
# Statistics cost bucket reads: the overview reads them for this many queues at most.
OVERVIEW_STATS = 50
# Listing an account's queues is one read each: the overview lists this many accounts.
OVERVIEW_ACCOUNTS = 100
# The overview and queue pages reload themselves this often (no script: a meta refresh).
REFRESH_S = 10
STATS_AT_ONCE = 8

_templates = Environment(
    loader=PackageLoader("cassieq.api.web_console", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
)
_templates.filters["ts"] = lambda ms: (
    "" if ms is None else datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
)

HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def _page(name: str, status: int = 200, **context: Any) -> Response[str]:
    html = _templates.get_template(name).render(**context)
    return Response(html, status_code=status, media_type="text/html", headers=HEADERS)


def _state(request: Request[Any, Any, Any]) -> AppState:
    state: AppState = request.app.state.cassieq
    return state


def _history(request: Request[Any, Any, Any]) -> History:
    history: History = request.app.state.console_history
    return history


async def _gate(request: Request[Any, Any, Any]) -> tuple[Session, str | None] | Response[Any]:
    """(the operator's session, a new cookie to set or None); else the answer to give
    instead: the login page, or 403 when no operator token is set."""
    state = _state(request)
    key = await session_key(state)
    session = session_of(request, key)
    if session is not None:
        return session, None
    # `cassieq dev`: no login on its admin port from this machine only (#39: it handed a
    # session to any client on any port of a dev server).
    if state.open_admin_port and loopback_on_admin_port(request, state.settings.admin_port):
        return new_session(key)
    if not state.settings.admin_token:
        return _page("message.html", 403, title="Console disabled",
                     message="Set CASSIEQ_ADMIN_TOKEN to use the console.")  # fmt: skip
    return Redirect("/console/login", status_code=303)


def _with_cookie(
    request: Request[Any, Any, Any], response: Response[Any], cookie: str | None
) -> Response[Any]:
    if cookie is not None:
        response.set_cookie(session_cookie(request, cookie))
    return response


@get("/login", include_in_schema=False)
async def login_form(request: Request[Any, Any, Any]) -> Response[str]:
    return _page("login.html", dev=_state(request).open_admin_port)


@post("/login", include_in_schema=False, status_code=303)
async def login(request: Request[Any, Any, Any]) -> Response[Any]:
    state = _state(request)
    form = await request.form()
    token = str(form.get("token", ""))
    if not state.settings.admin_token or not admin_token_matches(
        f"Bearer {token}", state.settings.admin_token
    ):
        return _page("login.html", 401, error="That is not the operator token.")
    _, cookie = new_session(await session_key(state))
    return _with_cookie(request, Redirect("/console", status_code=303), cookie)


@post("/logout", include_in_schema=False, status_code=303)
async def logout(request: Request[Any, Any, Any], engine: Engine) -> Response[Any]:
    if session_of(request, await session_key(_state(request))) is not None:
        # Only a signed-in operator ends the sessions (a stranger's POST must not log the
        # operator out): a new key, so no cookie signed with the old one opens the console.
        await engine.end_console_sessions()
    response = Redirect("/console/login", status_code=303)
    response.set_cookie(session_cookie(request, ""))
    return response


@get("/", include_in_schema=False)
async def overview(
    request: Request[Any, Any, Any],
    engine: Engine,
    deleted: Annotated[str | None, Parameter(max_length=600)] = None,
) -> Response[Any]:
    gate = await _gate(request)
    if isinstance(gate, Response):
        return gate
    session, cookie = gate
    every = sorted(await engine.list_accounts(), key=lambda a: a.name)
    accounts = every[:OVERVIEW_ACCOUNTS]
    queues = {a.name: await engine.list_queues(a.name) for a in accounts}
    wanted = [q for a in accounts for q in queues[a.name]][:OVERVIEW_STATS]
    stats = await _statistics(engine, _history(request), wanted)
    page = _page("overview.html", accounts=accounts, queues=queues, stats=stats,
                 session=session, shown=OVERVIEW_STATS, deleted=deleted,
                 refresh=REFRESH_S, refresh_url="/console/",
                 more_accounts=len(every) - len(accounts))  # fmt: skip
    return _with_cookie(request, page, cookie)


async def _statistics(
    engine: QueueEngine, history: History, wanted: list[QueueDefinition]
) -> dict[QueueKey, Statistics]:
    out: dict[QueueKey, Statistics] = {}
    for start in range(0, len(wanted), STATS_AT_ONCE):
        chunk = wanted[start : start + STATS_AT_ONCE]
        read = await asyncio.gather(*(engine.queue_statistics(q) for q in chunk))
        for q, s in zip(chunk, read, strict=True):
            out[(q.account, q.name)] = s
            history.record((q.account, q.name), s)
    return out


@get("/accounts/{account:str}/queues/{queue:str}", include_in_schema=False)
async def queue_page(
    request: Request[Any, Any, Any],
    engine: Engine,
    account: FromPath[str],
    queue: FromPath[str],
    after: Annotated[str | None, Parameter(pattern=PEEK_CURSOR_PATTERN, max_length=5_000)] = None,
    task: Annotated[str | None, Parameter(max_length=64)] = None,
    purged: Annotated[int | None, Parameter(ge=0)] = None,
) -> Response[Any]:
    gate = await _gate(request)
    if isinstance(gate, Response):
        return gate
    session, cookie = gate
    history = _history(request)
    definition = await engine.queue(account, queue, fresh=True)
    key = (account, queue)
    history.viewed(key)
    stats = (await _statistics(engine, history, [definition]))[key]
    siblings = await engine.list_queues(account)
    view = await pointer_view(engine, definition)
    partitions = (
        await partition_rows(engine, definition) if definition.options.stored_partitions > 1 else []
    )
    subscriptions = await subscription_rows(engine, definition)
    messages, next_after = await engine.peek(account, queue, PEEK_LIMIT, after)
    redrive = None if task is None else await engine.redrive_status(account, queue, task)
    samples = history.samples(key)
    rates = history.rates(key)
    page = _page(
        "queue.html",
        account=account,
        queue=definition,
        stats=stats,
        view=view,
        partitions=partitions,
        subscriptions=subscriptions,
        messages=messages,
        next_after=next_after,
        preview=BODY_PREVIEW,
        dead_letter_for=sorted(q.name for q in siblings if q.options.dlq_name == queue),
        redrive=redrive,
        session=session,
        purged=purged,
        refresh=REFRESH_S,
        # The reload keeps following a redrive task, and forgets a one-off notice.
        refresh_url=_queue_location(account, queue) + (f"?task={quote(task)}" if task else ""),
        depth_chart=line_chart("Size and in flight", [
            Series("size", "#1f77b4", [(s.at, s.size) for s in samples]),
            Series("in flight", "#ff7f0e", [(s.at, s.in_flight) for s in samples]),
        ]),
        age_chart=line_chart("Oldest message age", [
            Series("oldest age", "#9467bd",
                   [(s.at, s.oldest_age_s or 0.0) for s in samples]),
        ], unit=" s"),
        rate_chart=line_chart("Rates", [
            Series("sent/s", "#2ca02c", [(r.at, r.sent) for r in rates]),
            Series("delivered/s", "#d62728", [(r.at, r.delivered) for r in rates]),
            Series("acked/s", "#17becf", [(r.at, r.acked) for r in rates]),
        ], unit="/s"),
    )  # fmt: skip
    return _with_cookie(request, page, cookie)


async def _form_gate(request: Request[Any, Any, Any]) -> Response[Any] | None:
    """None when the operator's session posted this form (its CSRF token, from this site);
    else the page to answer instead."""
    gate = await _gate(request)
    if isinstance(gate, Response):
        return gate
    session, cookie = gate
    form = await request.form()
    if cookie is not None or not csrf_ok(request, session, str(form.get("csrf", ""))):
        # A new session (dev mode, no cookie) was never shown a form: no valid token.
        message = "The form's CSRF token is missing or stale: reload the page."
        return _page("message.html", 403, title="Refused", message=message)
    if request.url.path.endswith("/delete") and form.get("confirm") != "yes":
        message = "Tick the box that confirms the deletion: nothing was deleted."
        return _page("message.html", 422, title="Refused", message=message)
    return None


def _refused(refused: InvalidArgument | Conflict) -> Response[str]:
    """Said on the page, as the API says it in its body (no dead-letter queue, a task
    already running)."""
    status = 409 if isinstance(refused, Conflict) else 422
    return _page("message.html", status, title="Refused", message=str(refused))


def _queue_location(account: str, queue: str) -> str:
    return f"/console/accounts/{quote(account)}/queues/{quote(queue)}"


@post("/accounts/{account:str}/queues/{queue:str}/redrive", include_in_schema=False)
async def redrive(
    request: Request[Any, Any, Any], engine: Engine, account: FromPath[str], queue: FromPath[str]
) -> Response[Any]:
    if (refusal := await _form_gate(request)) is not None:
        return refusal
    try:
        started = await engine.start_redrive(account, queue, None, None)
    except (InvalidArgument, Conflict) as refused:
        return _refused(refused)
    return Redirect(
        _queue_location(account, queue), query_params={"task": started.id}, status_code=303
    )


@post("/accounts/{account:str}/queues/{queue:str}/purge", include_in_schema=False)
async def purge(
    request: Request[Any, Any, Any], engine: Engine, account: FromPath[str], queue: FromPath[str]
) -> Response[Any]:
    """Every message put before now, as v2's purge (level d)."""
    if (refusal := await _form_gate(request)) is not None:
        return refusal
    purged = await engine.purge(account, queue)
    return Redirect(
        _queue_location(account, queue), query_params={"purged": str(purged)}, status_code=303
    )


@post("/accounts/{account:str}/queues/{queue:str}/delete", include_in_schema=False)
async def delete_queue(
    request: Request[Any, Any, Any], engine: Engine, account: FromPath[str], queue: FromPath[str]
) -> Response[Any]:
    """The queue and its messages, as v1's queue delete; asks for a ticked confirmation."""
    if (refusal := await _form_gate(request)) is not None:
        return refusal
    await engine.delete_queue(account, queue)
    return Redirect("/console/", query_params={"deleted": f"{account}/{queue}"}, status_code=303)


def console_router() -> Router:
    return Router(
        path="/console",
        route_handlers=[
            login_form,
            login,
            logout,
            overview,
            queue_page,
            redrive,
            purge,
            delete_queue,
        ],
        include_in_schema=False,
    )
