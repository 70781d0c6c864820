"""Long polling: receives that wait for a message share one watcher per queue per server.

A waiting receive does not poll the store itself. Its queue's watcher (one task per queue
that has waiters on this server) wakes waiters, oldest first, when a message may be there:

- a put on this server (the publisher's ``written`` hook) wakes one waiter per message
  at once;
- a put on another server is seen by reading the queue's monoton once per tick
  (``Tuning.long_poll_check_ms``): the growth wakes that many waiters;
- every ``Tuning.long_poll_probe_ticks``-th tick reads no monoton but wakes the oldest
  waiter to try a real receive (the probe): that is how a message visible again (a lease
  that ran out, a delay that ended, a repair's re-publish) is found, within two ticks;
- a lease this server gave, or a delayed put it wrote, ends at a known time: the watcher
  wakes a waiter then (``due``), so such a message is received within milliseconds of its
  visibility, not up to two ticks late. Leases of other servers are the probe's.

So an idle queue costs one monoton read per tick and one receive's reads per probe,
however many receives wait on it. A woken waiter that finds nothing (another consumer
was faster) waits again until its deadline; one that received as many as it asked for
wakes the next, as more may be there. Closing (server shutdown) answers every waiter
``[]`` at once.

Deadlines are in the event loop's time, not the engine clock: a wait is a real duration
the client asked for, while the engine clock says when messages are visible.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from cassieq.engine.context import EngineContext
from cassieq.engine.parking import parked
from cassieq.model import MessageRow, QueueId

T = TypeVar("T")
# When messages of a queue become visible again (engine clock, ms), kept for this many
# queues and this many times each (the earliest): beyond, the probe finds them.
DUE_QUEUES = 4096
DUE_PER_QUEUE = 64


class _Waiter:
    __slots__ = ("woken",)

    def __init__(self) -> None:
        self.woken = asyncio.Event()


class QueueWatcher:
    """The waiters of one queue on this server, and the watching they share."""

    def __init__(self, ctx: EngineContext, queue: QueueId, due: list[int] | None = None) -> None:
        self._ctx = ctx
        self.queue = queue
        # Sorted times (engine clock) at which a message of the queue becomes visible again.
        self.due: list[int] = [] if due is None else due
        self.rescheduled = asyncio.Event()  # a new due time: the watching sleep is redone
        self.waiters: list[_Waiter] = []  # oldest first
        # The last receive attempt here found nothing and no put was seen since: a new
        # waiter joins without a receive of its own (idle waiters cost the watcher only).
        self.quiet = False
        self._news = 0  # counts the puts seen, so a stale "found nothing" is not believed
        # The queue's partitions (its monotons are checked); only grows, as a queue's do.
        self.partitions = 1
        self._seen: dict[int, int] = {}  # partition -> its monoton at the last check
        self._ticks = 0
        self._attempting = 0
        self._changed = asyncio.Event()  # set at every join, leave and attempt: for tests
        self.task: asyncio.Task[None] | None = None

    def wake(self, count: int, *, news: bool = True) -> None:
        """Wake up to ``count`` waiters not woken yet, oldest first."""
        if news:
            self.quiet = False
            self._news += 1
        for waiter in self.waiters:
            if count <= 0:
                break
            if not waiter.woken.is_set():
                waiter.woken.set()
                count -= 1

    def written(self, monotons: Sequence[int], visible: int, partition: int = 0) -> None:
        """Messages put on this server, ``visible`` of them at once: wake a waiter for
        each of those, and do not wake them again when the monoton check sees these."""
        # Only when they follow the last check's value: a gap before them may be puts of
        # other servers, which the check must still see (at worst ours wake twice).
        seen = self._seen.get(partition)
        if seen is not None and min(monotons) <= seen:
            self._seen[partition] = max(seen, max(monotons) + 1)
        if visible:
            self.wake(visible)

    async def tick(self) -> None:
        """One period of watching: a probe every ``long_poll_probe_ticks``, else a check."""
        self._ticks += 1
        if self._ticks % max(1, self._ctx.tuning.long_poll_probe_ticks) == 0:
            self.probe()
        else:
            await self.check()

    async def check(self) -> None:
        """Read the monoton of each partition (one read each, side by side): wake a waiter
        per message put since the last check (by any server)."""
        q, store = self.queue, self._ctx.store
        ids = [QueueId(q.account, q.queue, q.version, p) for p in range(self.partitions)]
        monotons = await asyncio.gather(*map(store.read_monoton, ids))
        grown = 0
        for partition, monoton in enumerate(monotons):
            seen = self._seen.get(partition)
            if seen is not None and monoton > seen:
                grown += monoton - seen
            self._seen[partition] = monoton if seen is None else max(seen, monoton)
        if grown:
            self.wake(grown)

    @property
    def checked(self) -> bool:
        """Every partition's monoton has its baseline."""
        return len(self._seen) >= self.partitions

    @property
    def seen(self) -> int | None:
        """The monotons at the last check, summed over the partitions (None: none yet)."""
        return sum(self._seen.values()) if self._seen else None

    def probe(self) -> None:
        """The oldest waiter tries a receive: finds messages that are visible again."""
        self.wake(1, news=False)

    def wake_due(self) -> bool:
        """Wake a waiter for the due times that have come (dropping them): whether any had."""
        now = self._ctx.clock.now()
        came = bisect.bisect_right(self.due, now)
        if not came:
            return False
        del self.due[:came]
        self.wake(1)  # news: a message may be visible now
        return True

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        period_s = self._ctx.tuning.long_poll_check_ms / 1000
        next_tick = loop.time() + period_s
        while True:
            try:
                # The watching period, or the next due time if sooner: a timed wait, not
                # a synchronisation (a new due time cuts it short).
                timeout = next_tick - loop.time()
                if self.due:
                    timeout = min(timeout, (self.due[0] - self._ctx.clock.now()) / 1000)
                self.rescheduled.clear()
                # asyncio.timeout, not wait_for: on 3.11 wait_for returns (and swallows the
                # task's cancellation) when the event is set in the very loop turn that
                # cancels the watcher, which then never stopped.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(0.0, timeout)):
                        await self.rescheduled.wait()
                self.wake_due()
                if loop.time() >= next_tick:
                    next_tick = loop.time() + period_s
                    await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a store hiccup: the next tick tries again
                self._ctx.log.warning(
                    "long_poll_check_failed", queue=str(self.queue), error=str(exc)
                )

    def join(self) -> _Waiter:
        waiter = _Waiter()
        self.waiters.append(waiter)
        self._changed.set()
        return waiter

    def leave(self, waiter: _Waiter) -> None:
        self.waiters.remove(waiter)
        self._changed.set()

    async def attempt(self, receive: Callable[[], Awaitable[list[T]]]) -> list[T]:
        """One receive by a waiter; an empty answer makes the queue quiet (unless a put was
        seen meanwhile)."""
        news = self._news
        self._attempting += 1
        try:
            got = await receive()
        finally:
            self._attempting -= 1
            self._changed.set()
        if not got and news == self._news:
            self.quiet = True
        elif got:
            self.quiet = False
        return got

    async def settled(self, waiters: int | None = None) -> None:
        """Until no waiter is in a receive attempt (and ``waiters`` wait): for tests."""
        while not (
            self._attempting == 0
            and (waiters is None or len(self.waiters) == waiters)
            and not any(w.woken.is_set() for w in self.waiters)
        ):
            self._changed.clear()
            await self._changed.wait()


class Waiters:
    """Every queue's watcher on this server."""

    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx
        self._watchers: dict[QueueId, QueueWatcher] = {}
        # Known visibility times per queue (a queue's list is its watcher's ``due``).
        self._due: OrderedDict[QueueId, list[int]] = OrderedDict()
        self._closed = False
        self._stopping: set[asyncio.Task[None]] = set()  # held: the loop keeps weak refs
        self._started: asyncio.Event | None = None  # only while a test awaits watching()

    def watcher(self, queue: QueueId) -> QueueWatcher | None:
        return self._watchers.get(queue)

    async def watching(self, queue: QueueId, waiters: int) -> QueueWatcher:
        """The queue's watcher once ``waiters`` receives wait on it: for tests."""
        while (watcher := self._watchers.get(queue)) is None:
            self._started = asyncio.Event()
            await self._started.wait()
        await watcher.settled(waiters)
        return watcher

    async def _ready(self, queue: QueueId, partitions: int = 1) -> QueueWatcher:
        """The queue's running watcher, with its baseline monotons read (so a put after
        this wakes the waiters)."""
        while True:
            watcher = self._watcher_for(queue)
            watcher.partitions = max(watcher.partitions, partitions)
            if watcher.checked:
                return watcher
            await watcher.check()

    def _watcher_for(self, queue: QueueId) -> QueueWatcher:
        watcher = self._watchers.get(queue)
        if watcher is None:
            watcher = self._watchers[queue] = QueueWatcher(self._ctx, queue, self._due_list(queue))
            watcher.task = asyncio.get_running_loop().create_task(watcher.run())
            if self._started is not None:
                self._started.set()
        return watcher

    def written(self, queue: QueueId, rows: Sequence[MessageRow]) -> None:
        """The publisher's hook, after a successful write on this server (``queue``: the
        partition written; its queue's waiters are woken)."""
        delayed = [row.next_visible_on for row in rows if row.next_visible_on > row.created_at]
        if delayed:
            # A delayed message wakes a waiter when it becomes visible.
            self.visible_at(queue, min(delayed))
        watcher = self._watchers.get(queue.whole)
        if watcher is not None and rows:
            monotons = [row.monoton for row in rows]
            watcher.written(monotons, len(rows) - len(delayed), queue.partition)

    def visible_at(self, queue: QueueId, at_ms: int) -> None:
        """A message of ``queue`` (any of its partitions) becomes visible again at
        ``at_ms`` (engine clock): a lease this server gave or shortened, a delayed put it
        wrote."""
        queue = queue.whole
        due = self._due_list(queue)
        bisect.insort(due, at_ms)
        del due[DUE_PER_QUEUE:]  # the earliest are kept: later ones are the probe's
        watcher = self._watchers.get(queue)
        if watcher is not None and due[0] == at_ms:
            watcher.rescheduled.set()

    def _due_list(self, queue: QueueId) -> list[int]:
        due = self._due.get(queue)
        if due is None:
            watcher = self._watchers.get(queue)  # its list, if it outlived its place here
            due = self._due[queue] = [] if watcher is None else watcher.due
            while len(self._due) > DUE_QUEUES:
                self._due.popitem(last=False)
        else:
            self._due.move_to_end(queue)
        # Times past are dropped as the list is touched (no queue keeps its old ones).
        del due[: bisect.bisect_right(due, self._ctx.clock.now() - 1)]
        return due

    async def receive(
        self,
        queue: QueueId,
        receive: Callable[[], Awaitable[list[T]]],
        wait_s: float,
        want: int,
        partitions: int = 1,
    ) -> list[T]:
        """``receive()``'s first non-empty answer within ``wait_s`` seconds, else []
        (``partitions``: the queue's, whose monotons the watcher checks)."""
        if self._closed:
            return await receive()
        if queue not in self._watchers:
            # Nobody waits on this queue here, so most likely a message is there (a busy
            # queue): try before paying for a watcher and its baseline read of the monoton.
            # On nothing, the watched path below tries again after the baseline, so a put
            # landing in between still wakes this receive.
            got = await receive()
            if got:
                return got
        watcher = await self._ready(queue, partitions)
        if not watcher.quiet:
            got = await watcher.attempt(receive)
            if got:
                self._stop_if_idle(queue, watcher)
                return got
            # Again: the last waiter may have left (and stopped that watcher) meanwhile.
            watcher = await self._ready(queue, partitions)
        # No await since _ready: the watcher joined is running and has its baseline.
        waiter = watcher.join()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        try:
            while not self._closed:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                with contextlib.suppress(TimeoutError), parked():
                    await asyncio.wait_for(waiter.woken.wait(), remaining)
                if not waiter.woken.is_set() or self._closed:
                    break  # the deadline, or shutdown
                waiter.woken.clear()
                got = await watcher.attempt(receive)
                if got:
                    if len(got) >= want:
                        watcher.wake(1, news=False)  # more may be there: the next one looks
                    return got
            return []
        finally:
            watcher.leave(waiter)
            self._stop_if_idle(queue, watcher)

    async def tick(self) -> None:
        """One tick of every watcher (tests drive the watching with it)."""
        for watcher in list(self._watchers.values()):
            await watcher.tick()

    def open(self) -> None:
        """(Again) accept waiting receives: the app's start."""
        self._closed = False

    async def close(self) -> None:
        """Shutdown: every waiting receive answers [] now; the watchers stop. Receives
        after it do not wait."""
        self._closed = True
        for queue, watcher in list(self._watchers.items()):
            for waiter in watcher.waiters:
                waiter.woken.set()
            self._stop(queue, watcher)
        await asyncio.gather(*self._stopping, return_exceptions=True)

    def _stop_if_idle(self, queue: QueueId, watcher: QueueWatcher) -> None:
        if not watcher.waiters and self._watchers.get(queue) is watcher:
            self._stop(queue, watcher)

    def _stop(self, queue: QueueId, watcher: QueueWatcher) -> None:
        self._watchers.pop(queue, None)
        if watcher.task is not None:
            watcher.task.cancel()
            self._stopping.add(watcher.task)
            watcher.task.add_done_callback(self._stopping.discard)
