"""Fair admission: when the server is busy, accounts take turns (issue 40, finding 8).

The per-account request budget (cassieq.api.rate_limit) only bites above its rate, and its
default is above what one server serves on small hardware: below it, one tenant's flood of
closed-loop clients filled the event loop and another tenant's p95 was 3.5 to 7.8 times
its p95 alone (docs/performance/results.md). A fixed budget low enough to help would
throttle a tenant on an idle server too.

So an authenticated request takes one of ``slots`` places before its handler runs. While
one is free it takes it at once (an idle or lightly loaded server: nothing changes but a
counter). When none is, it waits in its account's line, and each place given back goes to
the next account in turn (round robin over the accounts waiting; within an account, first
come first served): a tenant with 32 requests waiting and a tenant with one each get the
next place in turn, so the second waits for about one place to come back, not for the
first's 32. Fewer requests in the handlers at once also means a shorter line on the event
loop and at the store for the ones admitted.

A request gives its place back when it ends, or after ``hold_s`` if it is still running
then (a long poll's wait, a slow store): places are for work on the loop, not for waiting;
a receive waiting for messages must not hold them (its wait is bounded by the long-poll
limits instead). Waiting in line is bounded by the server's concurrency cap (requests in
progress, CASSIEQ_HTTP_MAX_CONCURRENCY), which every request already counts against.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

from litestar.connection import ASGIConnection
from litestar.types import ASGIApp, Receive, Scope, Send

from cassieq.config import Settings

# Where a request keeps its place, in its ASGI scope.
_PLACE = "cassieq.admission"
# What is to be called when the request ends (the fair share's timing: cassieq.api.overload).
_AT_END = "cassieq.at_end"


class _Place:
    __slots__ = ("held", "timer")

    def __init__(self) -> None:
        self.held = True
        self.timer: asyncio.TimerHandle | None = None


class FairAdmission:
    def __init__(self, slots: int, hold_s: float = 0.5) -> None:
        """``slots``: requests admitted at once (0: admission is off, every request goes)."""
        self.slots = slots
        self.hold_s = hold_s
        self._free = slots
        # Each account waiting, in turn order, with its line of waiters.
        self._lines: OrderedDict[str, deque[asyncio.Future[_Place]]] = OrderedDict()
        self.waited = 0  # requests that waited for a place (for benches and tests)

    @classmethod
    def of(cls, settings: Settings) -> FairAdmission:
        return cls(settings.http_fair_admission_slots, settings.http_fair_admission_hold_seconds)

    @property
    def waiting(self) -> int:
        return sum(len(line) for line in self._lines.values())

    async def enter(self, account: str) -> _Place | None:
        """A place for a request of ``account``, at once or in its turn (None: admission is
        off). Give it back with ``leave``."""
        if not self.slots:
            return None
        if self._free > 0 and not self._lines:
            self._free -= 1
            return self._held(_Place())
        future: asyncio.Future[_Place] = asyncio.get_running_loop().create_future()
        line = self._lines.get(account)
        if line is None:
            line = self._lines[account] = deque()
        line.append(future)
        self.waited += 1
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.leave(future.result())  # given a place as it was cancelled: back
            else:
                self._forget(account, future)
            raise

    def leave(self, place: _Place | None) -> None:
        """Give ``place`` back (at most once: a second call, or the hold's end, is nothing)."""
        if place is None or not place.held:
            return
        place.held = False
        if place.timer is not None:
            place.timer.cancel()
        self._free += 1
        self._next()

    def _held(self, place: _Place) -> _Place:
        if self.hold_s > 0:
            place.timer = asyncio.get_running_loop().call_later(self.hold_s, self.leave, place)
        return place

    def _next(self) -> None:
        """Each free place to the next account in turn."""
        while self._free > 0 and self._lines:
            account, line = next(iter(self._lines.items()))
            future = line.popleft()
            if line:
                self._lines.move_to_end(account)  # its next waiter after the others' turns
            else:
                del self._lines[account]
            if future.done():  # cancelled meanwhile
                continue
            self._free -= 1
            future.set_result(self._held(_Place()))

    def _forget(self, account: str, future: asyncio.Future[_Place]) -> None:
        line = self._lines.get(account)
        if line is None:
            return
        try:
            line.remove(future)
        except ValueError:
            return
        if not line:
            del self._lines[account]


async def admit(connection: ASGIConnection[Any, Any, Any, Any], account: str) -> None:
    """For the v1 and v2 guards and the SQS route, once the request is authenticated and
    within its budget: wait for a place (given back by ``GivesPlacesBack`` at the end)."""
    # The list GivesPlacesBack put in the scope: a route may see a copy of the scope (the
    # SQS dispatch rewrites the path), and a copy shares the list.
    places: list[tuple[FairAdmission, _Place]] | None = connection.scope.get(_PLACE)  # type: ignore[assignment]
    if places is None:
        return  # not behind GivesPlacesBack: no one would give a place back
    admission: FairAdmission = connection.app.state.cassieq.admission
    place = await admission.enter(account)
    if place is not None:
        places.append((admission, place))


def at_end(connection: ASGIConnection[Any, Any, Any, Any], callback: Callable[[], None]) -> bool:
    """Call ``callback`` when the request ends, whatever the end: True, or False (it will
    never be called) when the app is not behind GivesPlacesBack."""
    ends: list[Callable[[], None]] | None = connection.scope.get(_AT_END)  # type: ignore[assignment]
    if ends is None:
        return False
    ends.append(callback)
    return True


class GivesPlacesBack:
    """Around the app: a request's place is given back when it ends, whatever the end (and
    what ``at_end`` asked for is called)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        places: list[tuple[FairAdmission, _Place]] = []
        ends: list[Callable[[], None]] = []
        scope[_PLACE] = places  # type: ignore[literal-required]
        scope[_AT_END] = ends  # type: ignore[literal-required]
        try:
            await self._app(scope, receive, send)
        finally:
            for admission, place in places:
                admission.leave(place)
            for end in ends:
                end()
