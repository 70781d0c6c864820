"""Overload-aware fair share: while the server is saturated and more than one account is
active, an account using more than its share is throttled (issue 40, finding 8).

The per-account budget (cassieq.api.rate_limit) is a fixed rate, and its default is above
what one server serves on small hardware: one tenant's closed-loop flood then filled the
event loop, and another tenant's p95 was 2.4 to 7.8 times its p95 alone. A budget low enough
to help throttles a lone tenant on an idle server too, and fair admission (admission.py)
caps every tenant's concurrency, which halved a lone tenant's throughput.

This throttles only when throttling buys something, and only whom it should:

- **Saturated.** The signal is a queueing delay, the larger of two: the event loop's lag
  (``LoopLag``: how late a timer set every few milliseconds fires; a server with more ready
  work than it can run makes everything wait in the same line), and the requests' own
  delay (``ServiceDelay``: the shortest request of the last few tenths of a second against
  the shortest of the last half minute; when even the quickest request takes longer than
  the quickest did, every request is waiting for something: the loop, the store, the CPU
  the store shares). The first alone missed the bench's flood: the loop kept up while the
  store, on the same cores, did not, and the other tenant's p95 doubled. Once the delay is
  over the threshold, the server counts as saturated for ``calm_s`` more (a flood's
  connections come back together after their held 429s: without that margin throttling
  would flap on every lull).
- **More than one account active.** An account is active while its decayed count of
  requests (a time constant of ``window_s``) is at least ``ACTIVE_MIN`` and its last
  request is less than ``window_s`` old. A lone
  account is never throttled by this, however saturated the server: its throughput is the
  server's, as before.
- **Over its share.** Its count (requests admitted and refused) is more than ``slack``
  times the mean of the active accounts'. A light tenant is under it and keeps being
  served.
- **More than one request at a time.** A request of an account with none other in flight
  is admitted: a client that waits for each answer before it asks again has at most one
  request in the line, and cannot be what holds the others up. (Without this, on a loaded
  machine a test suite's tenants, one after another on one server, each asking in turn,
  were answered 429: the one asking looked heavy next to the one that had just finished.)
  An account cut back keeps at least that: one request at a time. A long poll parked on an
  empty queue is not in flight while it waits (cassieq.engine.parking): it uses none of the
  server, so a consumer waiting for a message while it sends is asking one thing at a time.

The heavy one is then admitted at a rate (``_Ramp``): half what it asked for, halved again
every half second the server stays saturated, doubled every second it keeps up, and let go
after ten seconds of keeping up (or as soon as it is alone). Measured first without the
ramp, refusing the heavy tenant outright while saturated and not at all once not: its
32 connections came back together after their held 429s, saturated the server again at
once, and the light tenant's p95 caught every such wave. Work-conserving: a server that
keeps up throttles nobody after the release, a lone tenant never.

Its 429s are the budget's (held, Retry-After, each API's shape, counted in
``cassieq_requests_throttled_total``): see rate_limit.spend_or_hold.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from cassieq.config import Settings

# An account with a decayed count below this (fewer than about two requests in the last
# window), or without a request for a whole window, is not active: a tenant's monitoring
# probe does not make a lone tenant two, and a tenant that stopped is not counted.
ACTIVE_MIN = 2.0
# How often the active accounts are counted while saturated (and, to drop the idle ones,
# every window otherwise): a count per request would cost a pass over every account.
_RECOUNT_S = 0.1
# An account over its share of a saturated server is admitted at a rate: half what it asked
# for, halved again at most every _CUT_EVERY_S while the server stays saturated, doubled
# every _DOUBLING_S while it keeps up, and let go after _RELEASE_S of the server keeping up.
# Its tokens hold at most _RAMP_BURST_S of that rate (at least one request).
_MIN_RATE = 1.0
_CUT_EVERY_S = 0.5
_DOUBLING_S = 1.0
_RELEASE_S = 10.0
_RAMP_BURST_S = 0.1


class LoopLag:
    """The event loop's lag: a timer every ``interval`` s, and how late it fires (smoothed).

    It runs while it is asked (``current``) and stops ``idle_s`` after the last question, so
    an idle server (or a test's app) keeps no timer going."""

    ALPHA = 0.25  # weight of the newest sample: a time constant of about 4 intervals

    def __init__(
        self,
        interval: float = 0.02,
        idle_s: float = 5.0,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = interval
        self.idle_s = idle_s
        self._now = now
        self.lag = 0.0  # smoothed seconds late
        self._due: float | None = None  # when the next tick should fire (None: not running)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._asked = 0.0

    def current(self) -> float:
        """The lag now, in seconds: the smoothed lateness, or how overdue the next tick is
        already (a loop stuck behind a backlog is seen before its tick runs)."""
        now = self._now()
        self._asked = now
        self._ensure_running(now)
        if self._due is None:
            return self.lag
        return max(self.lag, now - self._due)

    def _ensure_running(self, now: float) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # asked from outside a loop (a unit test): nothing to time
        if self._due is not None and loop is self._loop and not loop.is_closed():
            return
        self._loop, self.lag = loop, 0.0
        self._schedule(now)

    def _schedule(self, now: float) -> None:
        assert self._loop is not None
        self._due = now + self.interval
        self._loop.call_later(self.interval, self._tick, self._loop)

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        if loop is not self._loop or self._due is None:
            return  # a tick of an earlier loop (restarted on another one)
        now = self._now()
        late = max(0.0, now - self._due)
        self.lag += self.ALPHA * (late - self.lag)
        if now - self._asked > self.idle_s:
            self._due, self.lag = None, 0.0  # nobody asks: stop until asked again
            return
        self._schedule(now)


class ServiceDelay:
    """How much longer the quickest requests take now than the quickest did lately.

    Each request's time (admitted to answered) is folded into the minimum of its slot
    (``slot_s``); the delay is the minimum of the last ``recent_slots`` slots less the
    minimum of the last ``baseline_slots``. The minimum, not a mean or a percentile: a mix
    of quick and slow operations, or one slow request, moves neither; a line that every
    request waits in moves both. Fewer than ``min_samples`` requests in the recent slots
    say nothing (0.0): a server answering a request now and then has no line, and the few
    it answers may all be of its slower kinds. A request longer than ``longest_s`` is not
    service (a long poll's wait) and is left out."""

    def __init__(
        self,
        slot_s: float = 0.1,
        recent_slots: int = 3,
        baseline_slots: int = 300,
        longest_s: float = 1.0,
        min_samples: int = 8,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.slot_s = slot_s
        self.recent_slots = recent_slots
        self.baseline_slots = baseline_slots
        self.longest_s = longest_s
        self.min_samples = min_samples
        self._now = now
        # [slot, its shortest request, its number of requests]
        self._slots: deque[list[float]] = deque()
        self._baseline: float | None = None  # the older slots' minimum, while unchanged

    def observe(self, seconds: float) -> None:
        if seconds > self.longest_s:
            return
        slot = math.floor(self._now() / self.slot_s)
        if self._slots and self._slots[-1][0] == slot:
            last = self._slots[-1]
            last[2] += 1
            if seconds < last[1]:
                last[1] = seconds
            return
        self._slots.append([slot, seconds, 1])
        while self._slots[0][0] <= slot - self.baseline_slots:
            self._slots.popleft()
        self._baseline = None

    def delay(self) -> float:
        """Seconds: 0.0 when too little was served lately."""
        since = math.floor(self._now() / self.slot_s) - self.recent_slots
        recent, served = math.inf, 0
        for slot, shortest, count in reversed(self._slots):
            if slot <= since:
                break
            recent = min(recent, shortest)
            served += int(count)
        if served < self.min_samples:
            return 0.0
        if self._baseline is None:  # once per slot: the window holds up to 300 slots
            self._baseline = min(shortest for _, shortest, _ in self._slots)
        # The newest slot's minimum may have fallen since the baseline was taken.
        return max(0.0, recent - min(self._baseline, recent))


@dataclass
class _Ramp:
    """An account cut back by an overload: admitted at ``rate`` requests a second."""

    rate: float
    tokens: float
    at: float  # when ``tokens`` and ``rate`` were brought up to date
    cut_at: float  # the last cut


@dataclass
class _Use:
    count: float  # requests admitted, decayed by exp(-age / window)
    at: float  # when counted: the last request


class FairShare:
    def __init__(
        self,
        delay_threshold_s: float,
        signal: Callable[[], float] | None = None,
        now: Callable[[], float] = time.monotonic,
        *,
        window_s: float = 1.0,
        slack: float = 1.25,
        calm_s: float = 0.5,
    ) -> None:
        """``signal``: the server's saturation as a delay in seconds (default: the larger of
        the event loop's lag and the requests' delay); saturated beyond
        ``delay_threshold_s``."""
        self.delay_threshold_s = delay_threshold_s
        self.lag = LoopLag()
        self.service = ServiceDelay(now=now)
        self.signal = signal or self._delay
        self._now = now
        self.window_s = window_s
        self.slack = slack
        self.calm_s = calm_s
        self._uses: dict[str, _Use] = {}
        self._total = _Use(0.0, now())
        self._active = 0  # accounts active at the last count
        self._counted_at = -math.inf
        self._saturated_until = -math.inf
        self._ramps: dict[str, _Ramp] = {}  # accounts cut back by an overload
        self._in_flight: dict[str, int] = {}  # requests admitted, not yet answered
        self.refused = 0  # requests found over their share (for benches and tests)

    @classmethod
    def of(cls, settings: Settings) -> FairShare | None:
        if not settings.account_fair_share:
            return None
        return cls(settings.account_fair_share_delay_ms / 1000)

    def _delay(self) -> float:
        return max(self.lag.current(), self.service.delay())

    def now(self) -> float:
        return self._now()

    def saturated(self) -> bool:
        now = self._now()
        if self.signal() > self.delay_threshold_s:
            self._saturated_until = now + self.calm_s
        return now < self._saturated_until

    def over_share(self, account: str) -> int:
        """0, or (``account`` is to be throttled) the number of accounts active."""
        saturated = self.saturated()
        ramp = self._ramps.get(account)
        if not saturated and ramp is None:
            return 0  # the common case: one comparison and a dictionary look-up
        if account not in self._in_flight:
            return 0  # one request at a time (see the module's doc)
        now = self._now()
        if now - self._counted_at >= _RECOUNT_S:
            self._count(now)
        if self._active < 2:
            self._ramps.pop(account, None)  # alone: nothing holds it back
            return 0
        if saturated and self._over(account, now):
            ramp = self._cut(account, ramp, now)
        if ramp is None or self._ramp_admits(account, ramp, now, saturated):
            return 0
        self.refused += 1
        # Refused requests count too: the share is of the requests asked for, so a heavy
        # tenant held back stays the heavy one and the light one never looks heavy next to it.
        self._use(account, now)
        return self._active

    def _over(self, account: str, now: float) -> bool:
        mine = self._uses.get(account)
        if mine is None:
            return False
        total = self._decayed(self._total, now)
        return self._decayed(mine, now) > self.slack * total / self._active

    def _cut(self, account: str, ramp: _Ramp | None, now: float) -> _Ramp:
        """Halve what ``account`` is admitted at (at most every ``_CUT_EVERY_S``): from half
        what it asked for lately, the first time."""
        if ramp is None:
            asked = self._decayed(self._uses[account], now) / self.window_s
            ramp = self._ramps[account] = _Ramp(max(_MIN_RATE, asked / 2), 0.0, now, now)
        elif now - ramp.cut_at >= _CUT_EVERY_S:
            ramp.rate, ramp.cut_at = max(_MIN_RATE, ramp.rate / 2), now
        return ramp

    def _ramp_admits(self, account: str, ramp: _Ramp, now: float, saturated: bool) -> bool:
        """Whether ``account``, cut back by an overload, is admitted now: at its ramp's rate,
        which doubles every ``_DOUBLING_S`` while the server keeps up (a flood's connections
        coming back all at once would saturate it again at once). Released once the server
        has kept up for ``_RELEASE_S``."""
        if not saturated and now - self._saturated_until >= _RELEASE_S:
            del self._ramps[account]
            return True
        elapsed, ramp.at = now - ramp.at, now
        if not saturated:
            ramp.rate *= 2 ** (elapsed / _DOUBLING_S)
        ramp.tokens = min(max(1.0, ramp.rate * _RAMP_BURST_S), ramp.tokens + elapsed * ramp.rate)
        if ramp.tokens >= 1:
            ramp.tokens -= 1
            return True
        return False

    def admitted(self, account: str) -> InFlight:
        """Count one request of ``account`` as served and in flight: tell what it returns
        when the request is answered, once (``answered``), or ``not_in_flight`` here when
        nothing will."""
        now = self._now()
        self._use(account, now)
        self._in_flight[account] = self._in_flight.get(account, 0) + 1
        return InFlight(self, account, now)

    def now_in_flight(self, account: str) -> None:
        self._in_flight[account] = self._in_flight.get(account, 0) + 1

    def not_in_flight(self, account: str) -> None:
        """A request of ``account`` is no longer in flight."""
        left = self._in_flight[account] - 1
        if left:
            self._in_flight[account] = left
        else:
            del self._in_flight[account]  # the table holds only accounts with some

    def _use(self, account: str, now: float) -> None:
        use = self._uses.get(account)
        if use is None:
            use = self._uses[account] = _Use(0.0, now)
        use.count = self._decayed(use, now) + 1
        use.at = now
        self._total.count = self._decayed(self._total, now) + 1
        self._total.at = now
        if now - self._counted_at >= self.window_s:
            self._count(now)  # also drops the idle accounts: the table stays small

    def _decayed(self, use: _Use, now: float) -> float:
        return use.count * math.exp(-(now - use.at) / self.window_s)

    def _count(self, now: float) -> None:
        """Count the active accounts, forget the others (and recount the total exactly)."""
        total = 0.0
        for name in list(self._uses):
            use = self._uses[name]
            # ``at`` is its last request: none for a whole window, or too few, is not active.
            count = self._decayed(use, now)
            if now - use.at >= self.window_s or count < ACTIVE_MIN:
                del self._uses[name]
            else:
                total += count
        self._active = len(self._uses)
        for name in [n for n in self._ramps if n not in self._uses]:
            del self._ramps[name]  # gone quiet: its next request starts afresh
        self._total = _Use(total, now)
        self._counted_at = now


class InFlight:
    """One admitted request: in flight until answered, except while it is parked (a long
    poll waiting for a message uses none of the server: cassieq.engine.parking)."""

    __slots__ = ("_account", "_done", "_fair", "_parked", "_started", "_waited")

    def __init__(self, fair: FairShare, account: str, started: float) -> None:
        self._fair, self._account, self._started = fair, account, started
        self._parked = self._waited = self._done = False

    def parked(self) -> None:
        if not (self._parked or self._done):
            self._parked = self._waited = True
            self._fair.not_in_flight(self._account)

    def resumed(self) -> None:
        if self._parked and not self._done:
            self._parked = False
            self._fair.now_in_flight(self._account)

    def answered(self) -> None:
        """Once, when the request is answered: its time is the requests' delay's sample,
        unless part of it was a wait for a message (that is not service)."""
        if self._done:
            return
        self._done = True
        if not self._waited:
            self._fair.service.observe(self._fair.now() - self._started)
        if not self._parked:
            self._fair.not_in_flight(self._account)


def detail(account: str, active: int) -> str:
    return (
        f"account {account} is over its fair share of this server while the server is "
        f"overloaded ({active} accounts active): retry later"
    )
