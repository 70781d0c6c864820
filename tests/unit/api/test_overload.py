"""The overload-aware fair share's decisions (cassieq.api.overload), on an injected clock and
an injected saturation signal: throttled only while saturated, only with more than one
account active, only the account over its share, and nothing once the overload passes."""

from __future__ import annotations

import asyncio
import time

import pytest

from cassieq.api.overload import FairShare, InFlight, LoopLag, ServiceDelay
from cassieq.api.rate_limit import AccountBudgets
from cassieq.config import Settings

THRESHOLD_S = 0.005


class World:
    """A clock and a saturation signal the test moves by hand."""

    def __init__(self) -> None:
        self.t = 100.0
        self.delay = 0.0

    def fair(self, **kwargs: float) -> FairShare:
        return FairShare(THRESHOLD_S, lambda: self.delay, lambda: self.t, **kwargs)


def _requests(fair: FairShare, account: str, n: int, *, one_at_a_time: bool = False) -> list[bool]:
    """``n`` requests of ``account`` at this instant: True for each one throttled. Unless
    ``one_at_a_time``, another request of the account is in flight meanwhile (a client with
    several connections: one at a time is never throttled)."""
    standing = None if one_at_a_time else fair.admitted(account)
    refused = []
    for _ in range(n):
        throttled = bool(fair.over_share(account))
        if not throttled:
            fair.admitted(account).answered()
        refused.append(throttled)
    if standing is not None:
        standing.answered()
    return refused


def _two_tenants(world: World, fair: FairShare) -> None:
    """A heavy tenant (40 requests) and a light one (4) within the last window."""
    _requests(fair, "heavy", 40)
    _requests(fair, "light", 4)
    world.t += 0.2  # past the recount period: both are counted active


def test_under_the_threshold_nothing_is_throttled_even_with_two_tenants() -> None:
    world = World()
    fair = world.fair()
    _two_tenants(world, fair)
    world.delay = THRESHOLD_S * 0.9
    assert _requests(fair, "heavy", 50) == [False] * 50
    assert fair.refused == 0


def test_over_the_threshold_the_heavy_tenant_is_throttled_and_the_light_one_served() -> None:
    world = World()
    fair = world.fair()
    _two_tenants(world, fair)
    world.delay = THRESHOLD_S * 2
    standing = fair.admitted("heavy")  # a request of it in flight
    assert fair.over_share("heavy") == 2  # throttled, two accounts active
    standing.answered()
    assert _requests(fair, "light", 3) == [False] * 3
    assert all(_requests(fair, "heavy", 10))
    # Refused requests still count as the heavy tenant's: while it floods, the light
    # tenant is never the one over its share.
    world.t += 1.5
    _requests(fair, "heavy", 30)
    _requests(fair, "light", 5)
    world.t += 0.2
    assert _requests(fair, "light", 5) == [False] * 5
    assert fair.refused >= 11


def test_a_lone_tenant_is_never_throttled_however_saturated() -> None:
    world = World()
    fair = world.fair()
    world.delay = 10.0
    for _ in range(10):
        assert _requests(fair, "alone", 100) == [False] * 100
        world.t += 0.15
    assert fair.refused == 0
    # A tenant that made a single request (a monitoring probe) does not make it two.
    _requests(fair, "probe", 1)
    world.t += 0.15
    assert _requests(fair, "alone", 10) == [False] * 10


def test_throttling_ends_when_the_overload_passes_and_when_the_other_tenant_leaves() -> None:
    world = World()
    fair = world.fair(calm_s=0.5)
    _two_tenants(world, fair)
    world.delay = THRESHOLD_S * 2
    fair.admitted("heavy")  # in flight for the rest of the test
    assert fair.over_share("heavy")
    world.delay = 0.0
    # The overload has passed: the heavy tenant climbs back at a rate that doubles every
    # second while the server keeps up (its connections must not all come back at once),
    # and after ten seconds of keeping up nothing holds it back. The light one stays active.
    admitted = []
    for _ in range(24):
        world.t += 0.5
        _requests(fair, "light", 2)
        admitted.append(_requests(fair, "heavy", 40).count(False))
    assert 1 <= admitted[0] < 40  # some, not all
    assert admitted[4] > admitted[2] > admitted[0]  # more each second
    assert admitted[-1] == 40  # released
    assert fair.refused > 0
    # Saturated again, but the light tenant has made no request for a whole window: the
    # heavy one is alone.
    world.delay = THRESHOLD_S * 2
    _requests(fair, "heavy", 10)
    world.t += 1.1
    assert _requests(fair, "heavy", 20) == [False] * 20


def test_one_request_at_a_time_is_never_throttled_however_heavy() -> None:
    world = World()
    fair = world.fair()
    _two_tenants(world, fair)
    world.delay = 10.0
    for _ in range(10):
        assert _requests(fair, "heavy", 50, one_at_a_time=True) == [False] * 50
        _requests(fair, "light", 2)  # still active
        world.t += 0.15
    # Two at a time, it is over its share; once its last one is answered, served again.
    standing = fair.admitted("heavy")
    assert fair.over_share("heavy") == 2
    standing.answered()
    assert fair.over_share("heavy") == 0
    assert fair._in_flight == {}  # every request answered: none left counted


def test_a_parked_long_poll_is_not_in_flight_while_it_waits() -> None:
    world = World()
    fair = world.fair()
    _two_tenants(world, fair)
    world.delay = 10.0
    poll = fair.admitted("heavy")  # a receive: it works, then parks on an empty queue
    assert fair.over_share("heavy") == 2
    poll.parked()
    assert fair.over_share("heavy") == 0  # waiting for a message, it holds no one up
    poll.resumed()  # woken: it works again
    assert fair.over_share("heavy") == 2
    poll.parked()
    poll.resumed()
    world.t += 0.3  # its time, mostly a wait, is not a service sample
    poll.answered()
    poll.answered()  # told twice, it uncounts once
    assert fair._in_flight == {}
    assert [slot[1] for slot in fair.service._slots if slot[1] > 0] == []
    # Answered while parked (the wait ended by shutdown): nothing left counted either.
    other = fair.admitted("heavy")
    other.parked()
    other.answered()
    other.resumed()
    assert fair._in_flight == {}


def test_budgets_answer_the_fair_share_refusal_without_spending_a_token() -> None:
    world = World()
    budgets = AccountBudgets(rate=1.0, burst=100, now=lambda: world.t, fair=world.fair())
    answers: list[InFlight] = []

    def at_end(flight: InFlight) -> bool:
        answers.append(flight)  # every request stays in flight
        return True

    assert budgets.admit("heavy") is None  # told nothing will call back: not in flight
    assert budgets.fair is not None and "heavy" not in budgets.fair._in_flight
    for _ in range(39):
        assert budgets.admit("heavy", at_end) is None
    for _ in range(4):
        assert budgets.admit("light") is None
    world.t += 0.2
    world.delay = 1.0
    tokens = budgets._buckets["heavy"].tokens
    refusal = budgets.admit("heavy")
    assert refusal is not None and refusal.wait == 1.0
    assert "over its fair share" in refusal.detail and "2 accounts active" in refusal.detail
    assert budgets._buckets["heavy"].tokens == tokens  # no token spent (refilled lazily)
    assert budgets.admit("light") is None
    assert budgets.throttled == 1


def test_the_switch_turns_it_off() -> None:
    assert FairShare.of(Settings(account_fair_share=False)) is None
    assert AccountBudgets.of(Settings(account_fair_share=False)).fair is None
    on = FairShare.of(Settings(account_fair_share_delay_ms=7))
    assert on is not None and on.delay_threshold_s == pytest.approx(0.007)
    env = Settings.from_env({"CASSIEQ_ACCOUNT_FAIR_SHARE": "false"})
    assert env.account_fair_share is False


def test_the_service_delay_is_the_quickest_recent_request_over_the_quickest_lately() -> None:
    t = [0.0]
    delay = ServiceDelay(
        slot_s=0.1, recent_slots=3, baseline_slots=100, min_samples=4, now=lambda: t[0]
    )
    assert delay.delay() == 0.0  # nothing served
    for _ in range(20):  # two seconds of quick requests (and some slow ones)
        delay.observe(0.004)
        delay.observe(0.050)
        t[0] += 0.1
    assert delay.delay() == pytest.approx(0.0)
    for _ in range(5):  # every request now waits 20 ms more
        delay.observe(0.024)
        delay.observe(0.070)
        t[0] += 0.1
    assert delay.delay() == pytest.approx(0.020)
    delay.observe(30.0)  # a long poll's wait: not service
    assert delay.delay() == pytest.approx(0.020)
    t[0] += 0.2  # two slots without a request: too few served lately to tell
    delay.observe(0.070)
    assert delay.delay() == 0.0
    for _ in range(5):
        delay.observe(0.070)
    assert delay.delay() == pytest.approx(0.066)  # enough now, every one of them slow
    t[0] += 20  # the quick past is out of the window: the new normal
    for _ in range(5):
        delay.observe(0.024)
        t[0] += 0.1
    assert delay.delay() == pytest.approx(0.0)


async def test_the_loop_lag_sees_a_busy_loop_and_stops_when_nobody_asks() -> None:
    lag = LoopLag(interval=0.01, idle_s=0.05)
    assert lag.current() == 0.0  # started now
    time.sleep(0.1)  # noqa: ASYNC251 (the loop blocked 100 ms: the lag being measured)
    assert lag.current() >= 0.05
    ticks = 0
    while lag._due is not None and ticks < 1000:
        await asyncio.sleep(0.01)
        ticks += 1
    assert lag._due is None and lag.lag == 0.0  # stopped: nobody asked for idle_s
