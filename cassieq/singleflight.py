"""Single flight: concurrent callers asking for the same thing share one piece of work."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SingleFlight(Generic[K, V]):
    def __init__(self) -> None:
        self._running: dict[K, asyncio.Future[V]] = {}

    def running(self, key: K) -> bool:
        return key in self._running

    async def run(self, key: K, work: Callable[[], Awaitable[V]]) -> V:
        while (running := self._running.get(key)) is not None:
            try:
                return await asyncio.shield(running)
            except asyncio.CancelledError:
                if not running.cancelled():
                    raise  # this caller was cancelled
                # The leader was cancelled (its client went away): do the work instead.
        shared: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        shared.add_done_callback(_retrieve)
        self._running[key] = shared
        try:
            value = await work()
        except asyncio.CancelledError:
            shared.cancel()
            raise
        except BaseException as exc:
            shared.set_exception(exc)
            raise
        finally:
            del self._running[key]
        shared.set_result(value)
        return value


def _retrieve(future: asyncio.Future[V]) -> None:
    # The leader raises its own error; there may be no waiter to see it: no warning.
    if not future.cancelled():
        future.exception()
