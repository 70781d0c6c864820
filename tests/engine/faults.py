"""Fault injection around a real store: make one primitive fail once, before or after it runs.

Not a stand-in for the database: every call still goes to the real store.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from cassieq.engine import FakeClock, Observer, QueueEngine
from cassieq.model import QueueDefinition, QueueId
from tests.engine.conftest import make_queue


class InjectedFault(RuntimeError):
    pass


class TargetGoneAtItsMonoton:
    """The real store, where the ``target`` queue is deleted, its state too (as its deletion
    job does once the grace is over), right before a monoton is taken there: after the
    move into it looked it up. With ``finalize_first``, the bucket of the copy is finalized
    at its insert before that (the copy then needs a monoton taken again). ``asked``: how
    many monotons the take that found it gone asked for."""

    def __init__(self, inner: Any, engine: QueueEngine | None = None) -> None:
        self.inner = inner
        self.engine = engine
        self.target: QueueDefinition | None = None
        self.finalize_first = False
        self.asked = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def cas_monoton(self, queue: QueueId, expected: int, new: int) -> tuple[bool, int]:
        target = self.target
        if target is not None and queue == target.id and not self.finalize_first:
            assert self.engine is not None
            self.target, self.asked = None, new - expected
            await self.engine.queues.delete(queue.account, queue.queue)
            await self.inner.delete_queue_state(queue, 4)
        result: tuple[bool, int] = await self.inner.cas_monoton(queue, expected, new)
        return result

    async def insert_messages(self, queue: QueueId, bucket: int, *args: Any) -> bool:
        if self.finalize_first and self.target is not None and queue == self.target.id:
            self.finalize_first = False
            await self.inner.finalize_bucket(queue, bucket, 0)
        written: bool = await self.inner.insert_messages(queue, bucket, *args)
        return written


class FaultyStore:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._faults: dict[str, tuple[str, Callable[..., bool], Callable[[str], Exception]]] = {}
        self._gates: dict[str, tuple[asyncio.Event, Callable[..., bool]]] = {}
        # Every call made, in order, as (primitive, arguments).
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self._done: Counter[str] = Counter()  # calls that returned or raised, by primitive
        self._finished = asyncio.Condition()

    def fail_once(
        self,
        primitive: str,
        *,
        after: bool = False,
        when: Callable[..., bool] = lambda *a: True,
        error: Callable[[str], Exception] = lambda name: InjectedFault(f"injected fault in {name}"),
    ) -> None:
        """The next call of ``primitive`` matching ``when`` raises ``error(primitive)`` (after
        running, if ``after``)."""
        self._faults[primitive] = ("after" if after else "before", when, error)

    def hold(self, primitive: str, *, when: Callable[..., bool] = lambda *a: True) -> asyncio.Event:
        """Calls of ``primitive`` matching ``when`` wait until the returned event is set (a
        slow LWT, a slow read)."""
        gate = asyncio.Event()
        self._gates[primitive] = (gate, when)
        return gate

    async def until(self, check: Callable[[], bool]) -> None:
        """Wait until ``check()`` holds, asked again at each call's start and end."""
        async with self._finished:
            await self._finished.wait_for(check)

    async def finished(self, primitive: str, calls: int) -> None:
        """Wait until ``calls`` calls of ``primitive`` have returned (or raised)."""
        async with self._finished:
            await self._finished.wait_for(lambda: self._done[primitive] >= calls)

    async def _count_done(self, name: str) -> None:
        async with self._finished:
            self._done[name] += 1
            self._finished.notify_all()

    def armed(self, primitive: str) -> bool:
        """Whether the fault set for ``primitive`` is still waiting for its call."""
        return primitive in self._faults

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if not inspect.iscoroutinefunction(target):
            return target  # add_lwt_observer: not a call to the database

        async def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args))
            async with self._finished:
                self._finished.notify_all()
            try:
                return await run(*args, **kwargs)
            finally:
                await self._count_done(name)

        async def run(*args: Any, **kwargs: Any) -> Any:
            gate = self._gates.get(name)
            if gate is not None and gate[1](*args):
                await gate[0].wait()
            fault = self._faults.get(name)
            if fault is not None and fault[1](*args):
                del self._faults[name]
                if fault[0] == "after":
                    await target(*args, **kwargs)
                raise fault[2](name)
            return await target(*args, **kwargs)

        return call


async def faulty_queue(
    store: Any,
    clock: FakeClock,
    account: str,
    count: int,
    *,
    observers: Sequence[Observer] = (),
    **options: Any,
) -> tuple[FaultyStore, QueueEngine, QueueDefinition, list[str]]:
    """An engine (with ``observers``) on a faulty store and a queue "q" (with ``options``)
    holding ``count`` messages, m0, m1, ...; and their payloads. Another server wrote them:
    the engine knows them only by reading the buckets (its own puts would be its
    snapshots)."""
    faulty = FaultyStore(store)
    engine = QueueEngine(faulty, clock, observers=observers)
    queue = await make_queue(engine, account, **options)
    writer = QueueEngine(store, clock, instance_id="writer")
    payloads = [f"m{i}" for i in range(count)]
    for payload in payloads:
        await writer.put(account, "q", payload)
    return faulty, engine, queue, payloads
