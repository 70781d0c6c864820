"""Per-account quotas: messages stored, and messages in flight (issue 40, finding 8).

A production operator wants one tenant unable to fill the cluster's disks (a producer with
no consumer) or to hold a queue's worth of leases (a consumer that never acks), and wants
the check to cost the hot path nothing. So a put or a receive is checked against figures
the server already has: the /metrics sample (cassieq.api.metrics.sampler), which reads
every queue's statistics (a bounded number of reads each, cassieq.engine.stats) and sums
them per account. Each server refreshes it every ``account_quota_refresh_seconds`` while a
quota is set (a scrape refreshes it too, and both share one pass per
``metrics_cache_seconds``); a check is a dictionary look-up.

The figures are approximate, and the quota soft: between two refreshes nothing is counted,
and a refresh within the metrics' cache period reuses the cached sample, so an account can go
over its quota by what all servers accept from it in the refresh period plus the cache period
plus the length of a pass (and a batch checked at one message under the quota adds its whole
batch). Puts and receives are refused once the last figure is at or over the
quota, and accepted again once a refresh finds the account under it. When no sample could
be read (the store did not answer), nothing is refused: quotas fail open, as a quota is no
reason to stop a healthy tenant when the figures are missing.

Over a quota the answer is 403, not 429: this is a limit, not a rate; retrying soon does
not help until messages are acked or expire (SQS answers ``OverLimit``, a 403, when a
queue's in-flight messages are at its limit; the SQS endpoint does the same for both).
v1: ``{"code": 403, "message": "HTTP 403 Forbidden", "detail": ...}``, v2: ``{"code": 403,
"message": ...}``; the detail names the quota and its setting.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, Protocol

import structlog
from litestar.connection import ASGIConnection
from litestar.exceptions import HTTPException
from litestar.handlers.base import BaseRouteHandler

from cassieq.config import Settings

log = structlog.get_logger("cassieq.quotas")

Quota = Literal["stored", "in_flight"]
Api = Literal["v1", "v2", "sqs"]

# The operations each quota holds back (v1/v2 by operation id, SQS by action).
_OPERATIONS: dict[str, Quota] = {
    "putMessage": "stored",
    "sendMessages": "stored",
    "getNextMessage": "in_flight",
    "receiveMessages": "in_flight",
}
_SQS_ACTIONS: dict[str, Quota] = {
    "SendMessage": "stored",
    "SendMessageBatch": "stored",
    "ReceiveMessage": "in_flight",
}
_WORDS: dict[Quota, tuple[str, str]] = {
    "stored": ("stored messages", "CASSIEQ_ACCOUNT_MAX_STORED_MESSAGES"),
    "in_flight": ("messages in flight", "CASSIEQ_ACCOUNT_MAX_IN_FLIGHT_MESSAGES"),
}
_REMEDY: dict[Quota, str] = {
    "stored": "ack messages or let them expire",
    "in_flight": "ack the messages received or let their leases end",
}


class AccountLoad(Protocol):
    """An account's sums over its queues (cassieq.api.metrics.sampler.AccountLoad)."""

    @property
    def stored(self) -> int: ...
    @property
    def in_flight(self) -> int: ...


class AccountQuotas:
    def __init__(
        self,
        max_stored: int,
        max_in_flight: int,
        figures: Callable[[], Mapping[str, AccountLoad]] = dict,
        *,
        refresh: Callable[[], Awaitable[object]] | None = None,
        refresh_s: float = 10.0,
    ) -> None:
        """``figures``: the latest per-account sums; ``refresh``: reads them again (the
        metrics sampler's refresh), called every ``refresh_s`` by ``start``'s task."""
        self.max_stored = max_stored
        self.max_in_flight = max_in_flight
        self._figures = figures
        self._refresh = refresh
        self._refresh_s = refresh_s
        self._task: asyncio.Task[None] | None = None
        # Requests refused, by API and quota (for /metrics: no account label).
        self.refused: Counter[tuple[Api, Quota]] = Counter()

    @classmethod
    def of(
        cls,
        settings: Settings,
        figures: Callable[[], Mapping[str, AccountLoad]],
        refresh: Callable[[], Awaitable[object]],
    ) -> AccountQuotas:
        return cls(
            settings.account_max_stored_messages,
            settings.account_max_in_flight_messages,
            figures,
            refresh=refresh,
            refresh_s=settings.account_quota_refresh_seconds,
        )

    @property
    def enabled(self) -> bool:
        return bool(self.max_stored or self.max_in_flight)

    def refusal(self, account: str, quota: Quota, api: Api) -> str | None:
        """None, or (the account's last figure at or over ``quota``) why it is refused."""
        limit = self.max_stored if quota == "stored" else self.max_in_flight
        if not limit:
            return None
        load = self._figures().get(account)
        if load is None:
            return None
        figure = load.stored if quota == "stored" else load.in_flight
        if figure < limit:
            return None
        self.refused[api, quota] += 1
        what, setting = _WORDS[quota]
        return (
            f"account {account} is over its quota of {what}: about {figure} at the last count, "
            f"the quota is {limit} ({setting}); {_REMEDY[quota]}, then retry"
        )

    def start(self) -> None:
        """Refresh the figures every period while a quota is set (none: no task)."""
        if self.enabled and self._refresh is not None and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="quotas")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        assert self._refresh is not None
        while True:
            try:
                await self._refresh()
            except Exception:
                # The previous figures stay; the next period tries again.
                log.warning("quota_refresh_failed", exc_info=True)
            await asyncio.sleep(self._refresh_s)  # the period itself, not a synchronisation


def refuse_over_quota(
    connection: ASGIConnection[Any, Any, Any, Any], account: str, handler: BaseRouteHandler
) -> None:
    """For the v1 and v2 guards, once the request is authenticated: a put (receive) of an
    account at its stored (in-flight) quota is refused 403, naming the quota."""
    quota = _OPERATIONS.get(str(getattr(handler, "operation_id", "") or ""))
    if quota is None:
        return
    quotas: AccountQuotas = connection.app.state.cassieq.quotas
    api: Api = "v2" if connection.scope["path"].startswith("/api/v2/") else "v1"
    if why := quotas.refusal(account, quota, api):
        raise HTTPException(status_code=403, detail=why)


def sqs_over_quota(
    connection: ASGIConnection[Any, Any, Any, Any], account: str, action: str
) -> str | None:
    """For the SQS route: None, or the message of the OverLimit that refuses ``action``."""
    quota = _SQS_ACTIONS.get(action)
    if quota is None:
        return None
    quotas: AccountQuotas = connection.app.state.cassieq.quotas
    return quotas.refusal(account, quota, "sqs")
