"""Redrive: move a dead-letter queue's messages back, as a task with stored progress.

Each message goes to the queue given as ``to``, else to the queue its dead-letter copy
came from (recorded on the copy since schema 0008), else, for copies that do not say,
to the only queue that names this one as its dead-letter queue; with none of these it is
counted as ``failed`` and stays. Each move is the dead-letter move's protocol run the
other way (``DeadLetters.redrive``): exactly once, and a move cut short by a crash is redone
to the same row by whoever finds its claim (a later redrive, or a get of the dead-letter
queue), never a second copy.

A task runs in the background of the server that started it, at most ``max_per_second``
moves a second; its progress is a row any server reads, written after every message. A
task that stops without finishing says "interrupted": written by a server that shuts down
mid-task, and answered for a "running" task whose progress row has not been written for
``STALE_MS`` (its server died); "cancelled" instead when a cancel had been asked. There is
no takeover: start a redrive again, which moves what is left and finishes the claims the
stopped one left.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import msgspec

from cassieq.engine.clock import Clock
from cassieq.engine.context import EngineContext
from cassieq.engine.errors import Conflict, InvalidArgument, NotFound
from cassieq.engine.life.dead_letter import DeadLetters
from cassieq.engine.tenancy.queues import QueueDirectory
from cassieq.model import MessageRow, QueueDefinition, RedriveTask
from cassieq.tokens import new_token

DEFAULT_PER_SECOND = 100
MAX_PER_SECOND = 10_000
# A running task writes its progress at least once a second plus one move (a few store
# calls, each bounded by the driver's timeout): a row this old belongs to a stopped server.
STALE_MS = 60_000
# Tasks one queue keeps (each a row of its partition for a week, the table's TTL, then a
# tombstone until compaction purges it): every start and every listing reads them all, so
# their number must not be a tenant's to grow (#40 finding 1). Beyond, a start is refused.
MAX_TASKS_KEPT = 100


class TaskNotFound(NotFound):
    pass


class TaskNotRunning(InvalidArgument):
    pass


class RateLimiter:
    """At most ``per_second`` takes a second, timed by the engine's clock; the waiting
    itself is a sleep (injectable)."""

    def __init__(
        self,
        clock: Clock,
        per_second: int,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._clock = clock
        self._interval_ms = 1000 / per_second
        self._sleep = sleep
        self._next: float | None = None

    async def take(self) -> None:
        now = self._clock.now()
        if self._next is not None and now < self._next:
            await self._sleep((self._next - now) / 1000)
        # From the schedule, not from the end of the sleep: a slow move does not lower the rate
        # below the limit, and a burst after an idle spell is one message, not many.
        self._next = max(float(now), self._next or 0.0) + self._interval_ms


# A message to redrive: the partition it is in, its bucket, the row as first seen.
_Candidate = tuple[QueueDefinition, int, MessageRow]


class Redriver:
    def __init__(
        self, ctx: EngineContext, dead_letters: DeadLetters, queues: QueueDirectory
    ) -> None:
        self._ctx = ctx
        self._dead_letters = dead_letters
        self._queues = queues
        self._running: dict[str, asyncio.Task[None]] = {}
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep  # tests replace it

    async def start(
        self, dlq: QueueDefinition, to: QueueDefinition | None, per_second: int
    ) -> RedriveTask:
        """Count what is to move, store the task, and start moving in the background."""
        sources = [
            q for q in await self._queues.list(dlq.account) if q.options.dlq_name == dlq.name
        ]
        if to is None and not sources:
            # Refused up front: accepted, the task only failed message after message, with
            # no reason given anywhere.
            raise InvalidArgument(
                f"queue {dlq.name!r} is no dead-letter queue: no queue of the account names it "
                "as its dlqName, so its messages have no queue to go back to; name one (to)"
            )
        # Two tasks on one queue would move the same messages side by side and count each
        # other's. Checked, not locked: two starts at the same instant can still both run
        # (each message moves once all the same: a move is a compare-and-set).
        kept = await self.tasks(dlq)
        running = [t for t in kept if t.status == "running"]
        if running:
            raise Conflict(
                f"redrive task {running[0].id} is already running on queue {dlq.name!r}: "
                "cancel it or wait for its end"
            )
        if len(kept) >= MAX_TASKS_KEPT:
            raise Conflict(
                f"queue {dlq.name!r} keeps {len(kept)} redrive tasks, the most a queue keeps "
                f"({MAX_TASKS_KEPT}): each is kept 7 days after its last progress, start "
                "again once the oldest have gone"
            )
        rows = await self._candidates(dlq)
        task = RedriveTask(
            id=new_token(),
            status="running",
            moved=0,
            total=len(rows),
            target=None if to is None else to.name,
            updated_at=self._ctx.clock.now(),
            started_at=self._ctx.clock.now(),
            max_per_second=per_second,
        )
        await self._ctx.store.write_redrive_task(dlq.id, task)
        job = asyncio.get_running_loop().create_task(
            self._run(dlq, to, sources, rows, task, per_second)
        )
        self._running[task.id] = job
        job.add_done_callback(lambda _: self._running.pop(task.id, None))
        self._ctx.log.info("redrive_started", queue=str(dlq.id), task=task.id, total=task.total)
        return task

    async def status(self, dlq: QueueDefinition, task_id: str) -> RedriveTask:
        task = await self._ctx.store.read_redrive_task(dlq.id, task_id)
        if task is None:
            raise TaskNotFound(f"no redrive task {task_id} for queue {dlq.name}")
        return self._as_seen(task)

    async def tasks(self, dlq: QueueDefinition) -> list[RedriveTask]:
        """This queue's tasks (kept a week), the latest started first."""
        tasks = [self._as_seen(t) for t in await self._ctx.store.list_redrive_tasks(dlq.id)]
        return sorted(tasks, key=lambda t: (t.started_at, t.id), reverse=True)

    def _as_seen(self, task: RedriveTask) -> RedriveTask:
        """The stored task, "interrupted" if it says running but its server stopped writing
        progress (a server that dies cannot say so itself); "cancelled" if it stopped so
        after a cancel was asked (what was asked is what happened: it stopped)."""
        stale = task.status == "running" and self._ctx.clock.now() - task.updated_at > STALE_MS
        if stale or task.status == "interrupted":
            status = "cancelled" if task.cancel_requested else "interrupted"
            return msgspec.structs.replace(task, status=status)
        return task

    async def cancel(self, dlq: QueueDefinition, task_id: str) -> RedriveTask:
        """Ask a running task to stop (whichever server runs it); the task as it stands.
        Messages moved so far stay moved."""
        task = await self.status(dlq, task_id)
        if task.status != "running":
            raise TaskNotRunning(f"redrive task {task_id} is {task.status}, not running")
        await self._ctx.store.cancel_redrive_task(dlq.id, task_id)
        self._ctx.log.info("redrive_cancel_requested", queue=str(dlq.id), task=task_id)
        return msgspec.structs.replace(task, cancel_requested=True)

    async def join(self) -> None:
        """Wait for this server's running tasks (tests; shutdown)."""
        while self._running:
            await asyncio.gather(*self._running.values(), return_exceptions=True)

    async def close(self) -> None:
        for job in list(self._running.values()):
            job.cancel()
        await asyncio.gather(*self._running.values(), return_exceptions=True)

    async def _candidates(self, dlq: QueueDefinition) -> list[_Candidate]:
        """The messages in the dead-letter queue now, partition after partition."""
        found: list[_Candidate] = []
        for view in dlq.partition_views():
            found += [(view, bucket, row) for bucket, row in await self._in_partition(view)]
        return found

    async def _in_partition(self, dlq: QueueDefinition) -> list[tuple[int, MessageRow]]:
        """The messages in one partition of the dead-letter queue now: neither acked nor in
        a consumer's lease nor being moved on to its own dead-letter queue (unfinished
        redrive claims are taken: they are finished)."""
        store, qid = self._ctx.store, dlq.id
        repair, state = await asyncio.gather(
            store.read_pointer(qid, "repair"), store.read_invisibility(qid)
        )
        cut = await store.read_monoton(qid)
        if cut == 0:
            return []
        first = min(repair, state.bucket)
        buckets = sorted({*state.stragglers, *range(first, dlq.bucket_of(cut - 1) + 1)})
        now = self._ctx.clock.now()
        found: list[tuple[int, MessageRow]] = []
        for bucket in buckets:
            snap = await store.read_bucket(qid, bucket)
            found += [(bucket, m) for m in snap.messages if _movable(m, now)]
        return found

    async def _run(
        self,
        dlq: QueueDefinition,
        to: QueueDefinition | None,
        sources: list[QueueDefinition],
        rows: list[_Candidate],
        task: RedriveTask,
        per_second: int,
    ) -> None:
        ctx = self._ctx
        limiter = RateLimiter(ctx.clock, per_second, lambda s: self.sleep(s))
        only = sources[0] if len(sources) == 1 else None
        try:
            for source, bucket, seen in rows:
                await limiter.take()
                # One read a move (a move is several compare-and-sets): a cancel from
                # any server is seen at the next message.
                stored = await ctx.store.read_redrive_task(dlq.id, task.id)
                if stored is not None and stored.cancel_requested:
                    task = _with(task, ctx, status="cancelled")
                    break
                row = await ctx.store.read_message(source.id, bucket, seen.monoton)
                if row is None or not _movable(row, ctx.clock.now()):
                    task = _with(task, ctx, total=task.total - 1)  # consumed meanwhile
                else:
                    target = await self._target(dlq, row, to, only)
                    moved = target is not None and await self._dead_letters.redrive(
                        source, bucket, row, target
                    )
                    if moved:
                        task = _with(task, ctx, moved=task.moved + 1)
                    else:
                        task = _with(task, ctx, failed=task.failed + 1)
                await ctx.store.write_redrive_task(dlq.id, task)
            if task.status != "cancelled":
                status = "completed" if task.failed == 0 else "failed"
                task = _with(task, ctx, status=status)
        except asyncio.CancelledError:
            # This server is shutting down: the task says so, rather than "running" until
            # it goes stale. The moves done stay done; a new redrive moves the rest.
            task = _with(task, ctx, status="interrupted")
            await ctx.store.write_redrive_task(dlq.id, task)
            ctx.log.info("redrive_interrupted", queue=str(dlq.id), task=task.id, moved=task.moved)
            raise
        except Exception:
            ctx.log.exception("redrive_failed", queue=str(dlq.id), task=task.id)
            task = _with(task, ctx, status="failed")
        await ctx.store.write_redrive_task(dlq.id, task)
        ctx.log.info(
            "redrive_finished",
            queue=str(dlq.id),
            task=task.id,
            status=task.status,
            moved=task.moved,
            failed=task.failed,
        )

    async def _target(
        self,
        dlq: QueueDefinition,
        row: MessageRow,
        to: QueueDefinition | None,
        only: QueueDefinition | None,
    ) -> QueueDefinition | None:
        if row.redrive_to is not None:
            # A move begun (by a task that died): finished to its recorded target.
            begun = await self._queues.find(dlq.account, row.redrive_to, fresh=True)
            if begun is not None and begun.version == row.dlq_version:
                return begun
        if to is not None:
            return to
        if row.dead_letter_source is not None:
            return await self._queues.find(dlq.account, row.dead_letter_source, fresh=True)
        return only


def _movable(row: MessageRow, now: int) -> bool:
    if row.acked or row.republished_to is not None:
        return False
    if row.redrive_to is not None:
        return True  # an unfinished redrive claim
    if row.dead_letter_pending:
        return False  # on its way to this queue's own dead-letter queue
    return not (row.delivery_count > 0 and row.next_visible_on > now)  # not leased


def _with(task: RedriveTask, ctx: EngineContext, **changes: object) -> RedriveTask:
    return msgspec.structs.replace(task, updated_at=ctx.clock.now(), **changes)
