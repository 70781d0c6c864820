"""The event loop a server runs on: uvloop's (uvicorn[standard] brings it), else asyncio's.

`cassieq serve` calls uvicorn's ``Server.serve`` itself (two listeners, one engine), so
uvicorn's own loop set-up (``loop="auto"``, which picks uvloop) never ran and the server
spent its time in asyncio's pure-Python loop: in py-spy profiles of the bench's e2e turns
(#38) the selector loop, its handles and the socket transports' reads and writes were a
large share of the server's one busy thread. uvloop does the same work in C, with the same
semantics (tests run the app on either).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop factory, or None (asyncio's default) where uvloop is not installed."""
    try:
        import uvloop
    except ImportError:  # a platform without it (Windows): asyncio's loop
        return None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop above."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
