"""Per-account request budgets: a token bucket per account, on each server (issue 40, finding 8).

Measured before: one tenant's put flood took another's p50 from 16 to 334 ms and its p95
from 27 to 1,383 ms. Each account's bucket holds up to ``burst`` requests and refills at
``rate`` per second; a request that finds it empty is answered 429 with ``Retry-After`` (the
whole seconds until a token is back), in the shape of the API it came to: v1 ``{"code",
"message", "detail"}`` (the shape of statuses without a richer body), v2 ``{"code",
"message"}``, SQS ``ThrottlingException``, which AWS SDKs back off and retry.

Only authenticated requests spend: anyone may name an account in a path, and a budget that
strangers could spend would be a lockout of its own. The bucket is spent after the
credentials are checked (``spend_or_429`` in cassieq.api.security, ``over_budget`` in the
SQS route).

An answer of 429 is held ``hold_s`` before it is sent, for up to ``hold_per_account``
requests of one account and ``hold_total`` in all (a quarter of the server's concurrency
cap, which held requests count against) at a time; beyond, at once. Answered at once, a
client that ignores Retry-After (a flood of closed-loop clients) sends its next request
right away, and the server spends its event loop answering 429s while the other tenants'
requests wait their turn behind them: measured, tenant B's p95 under such a flood was still
3 to 10 times its p95 alone. Held, 32 flooding connections cost the server 32 answers a
second.

Memory stays bounded by the accounts that are in use: a bucket full again is the same as no
bucket, and such buckets are dropped as the table grows.

The same 429 (held alike, counted alike) answers an account over its fair share of a server
that is overloaded while other accounts are active (cassieq.api.overload): that one bites at
the default settings, where the budget does not.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from litestar.connection import ASGIConnection
from litestar.exceptions import TooManyRequestsException

from cassieq.api.admission import at_end
from cassieq.api.overload import FairShare, InFlight
from cassieq.api.overload import detail as fair_share_detail
from cassieq.config import Settings
from cassieq.engine import PARKING

# Tells an admitted request's InFlight when it is answered (and parks); False: it cannot.
AtEnd = Callable[[InFlight], bool]

# Beyond this many buckets, the full ones are swept out (one pass per doubling).
_SWEEP_AT = 1024


@dataclass
class _Bucket:
    tokens: float
    at: float  # when ``tokens`` was counted (the clock's seconds)


class AccountBudgets:
    def __init__(
        self,
        rate: float,
        burst: int,
        now: Callable[[], float] = time.monotonic,
        *,
        hold_s: float = 0.0,
        hold_per_account: int = 32,
        hold_total: int = 250,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        fair: FairShare | None = None,
    ) -> None:
        self.rate = rate
        self.fair = fair  # None: no fair share (CASSIEQ_ACCOUNT_FAIR_SHARE=false)
        self.burst = burst
        self._now = now
        self.hold_s = hold_s
        self.hold_per_account = hold_per_account
        self.hold_total = hold_total
        self._holding: dict[str, int] = {}
        self._held = 0  # over every account
        self._sleep = sleep
        self._jitter = random.Random()
        self._buckets: dict[str, _Bucket] = {}
        self._sweep_at = _SWEEP_AT
        self.throttled = 0  # requests found over their budget (for benches)
        # Requests answered 429, by API ("v1", "v2", "sqs"): /metrics' series, no account
        # label (one series per account would be one per tenant, unbounded).
        self.refused: Counter[str] = Counter()

    @classmethod
    def of(cls, settings: Settings) -> AccountBudgets:
        return cls(
            settings.account_requests_per_second,
            settings.account_request_burst,
            hold_s=settings.account_throttle_hold_seconds,
            hold_per_account=settings.account_throttle_hold_per_account,
            # Many accounts flooding at once must not hold every request slot.
            hold_total=max(1, settings.http_max_concurrency // 4),
            fair=FairShare.of(settings),
        )

    async def spend_or_hold(self, account: str, at_end: AtEnd | None = None) -> Refusal | None:
        """``admit``; when refused, first hold the request (see the module's doc): then None
        or the refusal, its wait the seconds still to wait after the hold."""
        refusal = self.admit(account, at_end)
        if refusal is None:
            return None
        wait = refusal.wait
        holding = self._holding.get(account, 0)
        if self.hold_s <= 0 or holding >= self.hold_per_account or self._held >= self.hold_total:
            return refusal
        # The whole hold, not only until a token is back (at a rate of 100/s that is 10 ms,
        # and 32 flooding connections would take turns at it): the answer is a 429 anyway.
        # Between half of it and all of it: held alike, a flood's connections would come
        # back together, in waves that other tenants' requests queue behind.
        held = self.hold_s * self._jitter.uniform(0.5, 1.0)
        self._holding[account] = holding + 1
        self._held += 1
        try:
            await self._sleep(held)  # the hold itself: no synchronisation waits on it
        finally:
            self._held -= 1
            left = self._holding[account] - 1
            if left:
                self._holding[account] = left
            else:
                del self._holding[account]
        return Refusal(max(wait - held, 1e-3), refusal.detail)

    def admit(self, account: str, at_end: AtEnd | None = None) -> Refusal | None:
        """None (the request goes on, counted), or why it is refused: over its fair share of
        an overloaded server (spends no token), or over its budget. ``at_end``: how to be
        told when an admitted request is answered (its time is the fair share's sample)."""
        if self.fair is not None and (active := self.fair.over_share(account)):
            self.throttled += 1
            return Refusal(_FAIR_SHARE_RETRY_S, fair_share_detail(account, active))
        if wait := self.spend(account):
            return Refusal(wait, detail(account, self))
        if self.fair is not None:
            # ``at_end`` says whether it will call back: an app not behind GivesPlacesBack
            # (admission.py) would never tell the fair share the request was answered.
            flight = self.fair.admitted(account)
            if at_end is None or not at_end(flight):
                self.fair.not_in_flight(account)
        return None

    def spend(self, account: str) -> float:
        """Take one request from the account's budget: 0.0, or (none left) the seconds
        until one is back."""
        now = self._now()
        bucket = self._buckets.get(account)
        if bucket is None:
            bucket = self._buckets[account] = _Bucket(float(self.burst), now)
            if len(self._buckets) >= self._sweep_at:
                self._sweep(now)
        else:
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
            bucket.at = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        self.throttled += 1
        return (1 - bucket.tokens) / self.rate

    def _sweep(self, now: float) -> None:
        full = [
            name
            for name, b in self._buckets.items()
            if b.tokens + (now - b.at) * self.rate >= self.burst
        ]
        for name in full:
            del self._buckets[name]
        self._sweep_at = max(_SWEEP_AT, 2 * len(self._buckets))


# An account over its fair share is told to come back in a second: the overload is measured
# over about that long, and the hold already spent up to a second of it.
_FAIR_SHARE_RETRY_S = 1.0


@dataclass(frozen=True)
class Refusal:
    wait: float  # seconds until the account may expect to be served
    detail: str


def retry_after(seconds: float) -> str:
    """Retry-After in whole seconds (RFC 9110 10.2.3), at least 1."""
    return str(max(1, math.ceil(seconds)))


def detail(account: str, budgets: AccountBudgets) -> str:
    return (
        f"account {account} is over its request budget on this server "
        f"({budgets.rate:g} requests/s, bursts of {budgets.burst}): retry later"
    )


def _told(connection: ASGIConnection[Any, Any, Any, Any], flight: InFlight) -> bool:
    """The request's end answers ``flight``; and, in the request's task, a long poll parked
    on an empty queue is not in flight meanwhile (the engine tells: cassieq.engine.parking)."""
    if not at_end(connection, flight.answered):
        return False
    PARKING.set(flight)
    return True


async def spend_or_429(connection: ASGIConnection[Any, Any, Any, Any], account: str) -> None:
    """For the v1 and v2 guards: spend one request of ``account``'s budget, or raise 429
    (answered in the API's error shape by cassieq.api.errors)."""
    budgets: AccountBudgets = connection.app.state.cassieq.budgets
    refusal = await budgets.spend_or_hold(account, partial(_told, connection))
    if refusal is not None:
        budgets.refused["v2" if connection.scope["path"].startswith("/api/v2/") else "v1"] += 1
        raise TooManyRequestsException(
            detail=refusal.detail, headers={"Retry-After": retry_after(refusal.wait)}
        )


async def over_budget(
    connection: ASGIConnection[Any, Any, Any, Any], account: str
) -> tuple[str, str] | None:
    """For the SQS route, once SigV4 is verified: spend one request of ``account``'s
    budget; None, or (none left) the detail and the Retry-After of its ThrottlingException."""
    budgets: AccountBudgets = connection.app.state.cassieq.budgets
    refusal = await budgets.spend_or_hold(account, partial(_told, connection))
    if refusal is None:
        return None
    budgets.refused["sqs"] += 1
    return refusal.detail, retry_after(refusal.wait)
