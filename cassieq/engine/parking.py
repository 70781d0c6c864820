"""Who is told when a receive parks: waits for a message, using none of the server meanwhile.

The API's overload-aware fair share (cassieq.api.overload) counts each account's requests in
flight: a client with none other in flight is never throttled, as it cannot be what holds
the others up. A long poll parked on an empty queue holds no one up either, so it is not
counted while it waits: a consumer with a receive waiting and a put on its way is asking one
thing of the server at a time. The engine knows when a receive parks; the API knows whose
request it is. A context variable, set by the API for the request's task, joins the two
without the engine knowing the web framework.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol


class Parking(Protocol):
    def parked(self) -> None:
        """The request waits for a message from now on."""

    def resumed(self) -> None:
        """It works again (woken, or its wait is over)."""


PARKING: ContextVar[Parking | None] = ContextVar("cassieq_parking", default=None)


@contextmanager
def parked() -> Iterator[None]:
    """Around a receive's wait: tells this request's ``Parking`` (if any), always both ends."""
    parking = PARKING.get()
    if parking is None:
        yield
        return
    parking.parked()
    try:
        yield
    finally:
        parking.resumed()
