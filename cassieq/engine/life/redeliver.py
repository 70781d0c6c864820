"""The invisibility side: redelivery from the buckets the reader has left.

Division of labour behind the reader (see ``MessageRow.late_write``):
- this side owns every unacked message that was delivered, or written before the
  bucket was sealed (an initial invisibility kept the reader from taking it);
- repair owns late writes (written after the seal, never delivered).

Improvement on the original design: a get looks at every bucket of a short window
behind the reader, not only at the pointer's message, so one long-invisible message
does not delay messages whose invisibility expired after it; and once the bucket
holding such a message is otherwise done, the pointer moves on and keeps the bucket
as a *straggler* (bucket -> when it is due), looked at only when due.
"""

from __future__ import annotations

import asyncio
import functools
import operator
from collections.abc import Iterable

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.life.kept import kept_for_subscriptions
from cassieq.engine.life.take import Deliverer, candidate
from cassieq.engine.life.window import (
    LEAVING_MAX_MS,
    QUIET_MAX_MS,
    Leaving,
    Quiet,
    bump,
    due_of,
    pending,
    settled_counts,
    without_bodies,
)
from cassieq.engine.recent import Recent
from cassieq.model import (
    BucketState,
    Counts,
    Delivery,
    InvisibilityState,
    MessageRow,
    QueueDefinition,
    QueueId,
)
from cassieq.singleflight import SingleFlight

__all__ = ["LEAVING_MAX_MS", "QUIET_MAX_MS", "InvisibilitySide", "Leaving"]


class InvisibilitySide:
    def __init__(self, ctx: EngineContext, deliverer: Deliverer) -> None:
        self._ctx = ctx
        self._deliverer = deliverer
        # One pass of the pointer per queue at a time in this server: concurrent readers
        # would otherwise all spend an LWT trying to move it past the same bucket.
        self._passing: set[QueueId] = set()
        self._states: Recent[QueueId, InvisibilityState] = Recent(ctx, ctx.tuning.state_cache_ms)
        # What this server saw in buckets of the window that had nothing due: their unacked
        # monotons and when the first is due (none left: settled, waiting for the pointer
        # to pass). Gets skip such a bucket instead of reading it again, unless it is due,
        # or settled at the head and this get can move the pointer past it. Entries live
        # QUIET_MAX_MS at most: other servers' acks and updates are seen after that.
        self._quiet: Recent[tuple[QueueId, int], Quiet] = Recent(ctx, QUIET_MAX_MS)
        self._reading: SingleFlight[tuple[QueueId, int], BucketState] = SingleFlight()
        # monoton -> the version this server's ack of it held (the acked row is one more).
        self._acks: Recent[tuple[QueueId, int], dict[int, int]] = Recent(ctx, QUIET_MAX_MS)
        # Buckets this server's reader has just left and is sealing (a seal under way for
        # each entry). Gets leave them to what is known once the seal is stored (see left),
        # for LEAVING_MAX_MS at most: each get that came meanwhile waited for reads of them, one
        # before the seal (of rows its readers were still taking) and one after, about 45 ms
        # a receive under load. Only the seal's own outcome or that bound ends the skip,
        # never another get's read.
        self._leaving: dict[tuple[QueueId, int], list[Leaving]] = {}
        self._after_seal: set[asyncio.Task[BucketState]] = set()

    def note_acked(self, queue: QueueId, bucket: int, monoton: int, version: int) -> None:
        """This server acked the message at ``version`` (its receipt's)."""
        # Kept apart from the quiet entries and subtracted when one is consulted: a read
        # of the bucket in flight now may return a snapshot older than this ack.
        acked = self._acks.get((queue, bucket))
        if acked is None:
            self._acks.put((queue, bucket), acked := {})
        acked[monoton] = version

    def note_changed(self, queue: QueueId, bucket: int) -> None:
        self._quiet.drop((queue, bucket))
        # What the reader's takes left is no longer the whole story of those rows.
        self._deliverer.forget_reader_writes(queue, bucket)

    def leaving(self, queue: QueueId, bucket: int, size: int) -> Leaving:
        """This server's reader has left the bucket (of ``size`` messages) and seals it:
        gets skip it until then. The seal tells the outcome with ``left``, once."""
        leaving = Leaving(queue, bucket, size, self._ctx.clock.now())
        self._leaving.setdefault((queue, bucket), []).append(leaving)
        return leaving

    def left(self, leaving: Leaving, *, sealed_at: int | None) -> None:
        """The seal ``leaving`` stands for is over (a second call is ignored). Stored (at
        ``sealed_at``): gets go by the bucket as it was then, known here if this server's
        reader took every message of it, else read now (in the background). Not stored (a
        failure, a shutdown: None): gets read it as any other bucket of the window."""
        if leaving.told:
            return
        leaving.told = True
        writes = self._deliverer.pop_reader_writes(leaving.queue, leaving.bucket)
        if sealed_at is None:
            self._done_leaving(leaving)
            return
        now = self._ctx.clock.now()
        if (
            writes is not None
            and len(writes.rows) == leaving.size
            and 0 <= now - writes.since < QUIET_MAX_MS
        ):
            # Every monoton of the bucket has its row (no other row can appear in a complete
            # bucket), each as this server's reader's take left it: the read it saves was one
            # per bucket. A row another server changed since shows as still pending, never
            # the other way round: gets skip it until its lease ends, and the head is passed
            # unread only on this server's acks at exactly these versions (_settled). Trusted
            # from the first take, not from now: a change made after it is seen here within
            # QUIET_MAX_MS, as after a read.
            rows = writes.rows
            snap = BucketState(
                bucket=leaving.bucket,
                sealed_at=sealed_at,
                finalized_at=None,
                messages=tuple(rows[m] for m in sorted(rows)),
            )
            self._remember(leaving.queue, leaving.bucket, snap, snap, at=writes.since)
            self._done_leaving(leaving)
            return
        read = self._read_window_bucket(leaving.queue, leaving.bucket)
        task = asyncio.get_running_loop().create_task(read)
        self._after_seal.add(task)
        task.add_done_callback(lambda done: self._read_after_seal(leaving, done))

    def _read_after_seal(self, leaving: Leaving, task: asyncio.Task[BucketState]) -> None:
        self._after_seal.discard(task)
        self._done_leaving(leaving)
        if not task.cancelled() and task.exception() is not None:
            self._ctx.log.debug("read_after_seal_failed", error=str(task.exception()))

    def _done_leaving(self, leaving: Leaving) -> None:
        key = (leaving.queue, leaving.bucket)
        others = [other for other in self._leaving.get(key, []) if other is not leaving]
        if others:
            self._leaving[key] = others
        else:
            self._leaving.pop(key, None)

    def _being_sealed(self, queue: QueueId, bucket: int, now: int) -> bool:
        """Left by this server's reader and its seal under way (for LEAVING_MAX_MS at most)."""
        return any(now - x.since < LEAVING_MAX_MS for x in self._leaving.get((queue, bucket), []))

    def reads_after_seal(self) -> list[asyncio.Task[BucketState]]:
        """The reads of left buckets whose seal is stored, under way (tests, shutdown)."""
        return list(self._after_seal)

    def _skip(self, queue: QueueDefinition, bucket: int, now: int, can_pass: bool) -> bool:
        quiet = self._quiet.get((queue.id, bucket))
        if quiet is None:
            return False
        unacked = self._unacked(queue.id, bucket, quiet)
        if not unacked:
            return not can_pass  # settled: only a get that can pass the pointer reads it
        if queue.options.fifo and now >= quiet.due:
            # Due, but maybe only by messages whose groups this server found held a moment
            # ago (their turn comes with the head's ack): such a bucket is not read again
            # until one of its groups may go on (life/fifo.py).
            return all(
                m.next_visible_on > now or self._deliverer.blocked(queue, m)
                for m in quiet.snap.messages
                if m.monoton in unacked
            )
        return now < quiet.due

    def _unacked(self, queue: QueueId, bucket: int, quiet: Quiet) -> set[int]:
        return quiet.unacked - (self._acks.get((queue, bucket)) or {}).keys()

    def _settled(self, queue: QueueDefinition, bucket: int) -> BucketState | None:
        """The bucket as it is now, without reading it, if what is known of it after its
        seal (a read, or this server's takes: see left) showed it complete, every message in
        it acked or pending, and this server has acked each pending one since, at the very
        version shown: those rows are now that version plus one, acked, and nothing else
        about them changed. The rest cannot change: acked rows are final, and no row can
        appear in a complete bucket. (A late write may: a purge or a redrive retires it, and
        it must be counted then.) Passing the head took a second read of every bucket
        before, one more per bucket than its seal's. None: read it."""
        quiet = self._quiet.get((queue.id, bucket))
        if quiet is None or quiet.snap.sealed_at is None:
            return None
        snap = quiet.snap
        if len(snap.messages) < queue.options.bucket_size or not all(
            m.acked or m.monoton in quiet.unacked for m in snap.messages
        ):
            return None
        acked = self._acks.get((queue.id, bucket)) or {}
        rows: list[MessageRow] = []
        for m in snap.messages:
            if m.monoton in quiet.unacked:
                if acked.get(m.monoton) != m.version:
                    return None  # not acked here, or changed after that read: read it
                m = msgspec.structs.replace(m, version=m.version + 1, acked=True)
            rows.append(m)
        # Its finalized mark may be older than the bucket's: repair drops it then.
        return msgspec.structs.replace(quiet.snap, messages=tuple(rows))

    async def _read_window_bucket(self, queue: QueueId, bucket: int) -> BucketState:
        """Gets of this server that want the same bucket at once share one read of it, and
        remember what it showed."""

        async def read() -> BucketState:
            snap = await self._ctx.store.read_bucket(queue, bucket)
            self._remember(queue, bucket, snap, without_bodies(snap))
            return snap

        return await self._reading.run((queue, bucket), read)

    def _remember(
        self,
        queue: QueueId,
        bucket: int,
        snap: BucketState,
        kept: BucketState,
        at: int | None = None,
    ) -> None:
        """What gets go by until it is too old (counted from ``at``, default now): ``snap``,
        kept as ``kept`` (no bodies)."""
        left = pending(snap)
        quiet = Quiet({m.monoton for m in left}, due_of(left), kept)
        self._quiet.put((queue, bucket), quiet, at=at)

    async def _state(self, queue: QueueId) -> InvisibilityState:
        """The state as last seen by this server, if recent; else read. Every change is a
        compare-and-set on its rev, so a stale state can only lose one."""
        return await self._states.get_or_load(
            queue, lambda: self._ctx.store.read_invisibility(queue)
        )

    async def _cas(self, queue: QueueId, state: InvisibilityState, new: InvisibilityState) -> bool:
        if await self._ctx.store.cas_invisibility(queue, state.rev, new):
            self._states.put(queue, new)
            return True
        self._states.drop(queue)  # someone else moved it: read it next time
        return False

    async def deliver(
        self, queue: QueueDefinition, reader_bucket: int, want: int, invisibility_ms: int
    ) -> list[Delivery]:
        """Up to ``want`` redeliveries from the buckets behind the reader."""
        now = self._ctx.clock.now()
        state = await self._state(queue.id)
        got: list[Delivery] = []

        for bucket in sorted(state.stragglers):
            if len(got) >= want:
                return got
            # Another server may have settled or moved it since: go by the latest state.
            if state.stragglers.get(bucket, now + 1) > now:
                continue
            # Shared with this server's other gets, like the window's reads.
            snap = await self._read_window_bucket(queue.id, bucket)
            taken = await self._deliver_from(queue, snap, want - len(got), invisibility_ms)
            if taken:
                got += taken
                continue
            state = await self._settle_straggler(queue, state, snap)

        tuning = self._ctx.tuning
        scan = tuning.fifo_scan_buckets if queue.options.fifo else tuning.invisibility_scan_buckets
        limit = min(reader_bucket, state.bucket + scan)
        # A FIFO queue's window holds its groups' waiting messages: the buckets to look at
        # are read side by side first (one after another, a receive waited for each read
        # of a long window in turn: seconds under load).
        early = (
            await self._read_ahead(queue, state.bucket + 1, limit, now)
            if queue.options.fifo
            else {}
        )
        for bucket in range(state.bucket, limit):
            if len(got) >= want:
                return got
            # At the head while every bucket before this one was passed in this very get.
            at_head = bucket == state.bucket
            if self._being_sealed(queue.id, bucket, now):
                continue  # known once its seal is stored: gets go by that
            # A settled head is read only to pass it: by one get at a time (the others
            # joined its read, about 10 ms a receive under load, then could not pass).
            can_pass = (
                at_head
                and queue.id not in self._passing
                and not self._reading.running((queue.id, bucket))
            )
            if self._skip(queue, bucket, now, can_pass):
                continue
            settled = self._settled(queue, bucket) if can_pass else None
            snap = settled or early.get(bucket) or await self._read_window_bucket(queue.id, bucket)
            taken = await self._deliver_from(queue, snap, want - len(got), invisibility_ms)
            if taken:
                got += taken
                continue
            if at_head and (moved := await self._try_pass(queue, state, snap, limit)) is not None:
                state = moved
        return got

    async def _read_ahead(
        self, queue: QueueDefinition, first: int, limit: int, now: int
    ) -> dict[int, BucketState]:
        """The window's buckets from ``first`` that a get would read now, read at once."""
        wanted = [
            b
            for b in range(first, limit)
            if not self._being_sealed(queue.id, b, now) and not self._skip(queue, b, now, False)
        ]
        snaps = await asyncio.gather(
            *(self._read_window_bucket(queue.id, b) for b in wanted), return_exceptions=True
        )
        return {
            b: snap for b, snap in zip(wanted, snaps, strict=True) if isinstance(snap, BucketState)
        }

    async def _deliver_from(
        self, queue: QueueDefinition, snap: BucketState, want: int, invisibility_ms: int
    ) -> list[Delivery]:
        now = self._ctx.clock.now()
        # Rows this server's readers are taking right now (the tail of a bucket they have
        # just left) are not candidates: no read of the state is spent on them.
        ready = [
            m
            for m in pending(snap)
            if candidate(queue, m, now) and not self._deliverer.busy(queue, m)
        ]
        if not ready:
            return []
        if any(m.delivery_count == 0 for m in ready) and not await self.in_window(
            queue.id, snap.bucket
        ):
            # A never-delivered row in a bucket the pointer has passed (this server's view
            # of the state was behind): it landed after the pass, so it is repair's.
            return []
        return await self._deliverer.take(queue, snap.bucket, ready, want, invisibility_ms)

    async def in_window(self, queue: QueueId, bucket: int) -> bool:
        """Whether the bucket is still this side's, by the state as stored now."""
        return bucket in await self.in_window_of(queue, [bucket])

    async def in_window_of(self, queue: QueueId, buckets: Iterable[int]) -> set[int]:
        """The buckets that are still this side's, by the state as stored now (one read)."""
        state = await self._ctx.store.read_invisibility(queue)
        self._states.put(queue, state)
        return {b for b in buckets if b >= state.bucket or b in state.stragglers}

    async def _try_pass(
        self, queue: QueueDefinition, state: InvisibilityState, snap: BucketState, limit: int
    ) -> InvisibilityState | None:
        """Move the pointer past its bucket when nothing there needs it, and past the
        settled buckets right after it (before ``limit``) in the same compare-and-set: one
        bucket per compare-and-set fell behind the reader of a busy queue for as long as
        the load lasted. None if it stays (or another get of this server is passing: they
        would all spend an LWT on it)."""
        if queue.id in self._passing or snap.sealed_at is None:
            # Not sealed yet (this server's readers have just left it): a reader that still
            # takes from it (another server's, going by the stored pointer) must find the
            # bucket unpassed, or repair would move what it delivered, lease and all.
            return None
        self._passing.add(queue.id)
        try:
            return await self._pass(queue, state, snap, limit)
        finally:
            self._passing.discard(queue.id)

    async def _pass(
        self, queue: QueueDefinition, state: InvisibilityState, snap: BucketState, limit: int
    ) -> InvisibilityState | None:
        tuning, now = self._ctx.tuning, self._ctx.clock.now()
        left = pending(snap)
        if not left:
            after = await self._settled_after(queue, snap.bucket, limit)
            summary = functools.reduce(operator.add, after, state.summary + settled_counts(snap))
            new = bump(state, bucket=snap.bucket + 1 + len(after), summary=summary)
        elif (
            snap.finalized
            and len(state.stragglers) < tuning.max_stragglers
            and (due := due_of(left)) > now
        ):
            # Only deliveries in force are left (a long lease, or one kept alive by updates):
            # keep the bucket aside, due when the first of them ends, and move on. It is
            # counted into the summary when the straggler is settled.
            new = bump(
                state, bucket=snap.bucket + 1, stragglers={**state.stragglers, snap.bucket: due}
            )
        else:
            return None
        if not await self._cas(queue.id, state, new):
            return None
        self._ctx.log.debug("invisibility_pointer_moved", queue=str(queue.id), bucket=new.bucket)
        if not left:
            # Only the head can be finalized yet (repair's pointer is behind this one's):
            # repair drops the others when it finalizes them.
            await self._drop_if_finished(queue, snap)
        return new

    async def _settled_after(self, queue: QueueDefinition, bucket: int, limit: int) -> list[Counts]:
        """The counts of the buckets right after ``bucket`` (before ``limit``) that are
        sealed with nothing pending, read now (side by side) as the head was: up to the
        first that is not, or is known not to be (a delivery in force), or fails to read."""
        ahead: list[int] = []
        now = self._ctx.clock.now()
        for after in range(bucket + 1, limit):
            if self._being_sealed(queue.id, after, now):
                break  # not sealed yet (and its read is the seal's to make)
            quiet = self._quiet.get((queue.id, after))
            if quiet is not None and self._unacked(queue.id, after, quiet):
                break
            ahead.append(after)
        snaps = await asyncio.gather(
            *(self._settled_or_read(queue, b) for b in ahead), return_exceptions=True
        )
        settled: list[Counts] = []
        for snap in snaps:
            if isinstance(snap, BaseException) or snap.sealed_at is None or pending(snap):
                break
            settled.append(settled_counts(snap))
        return settled

    async def _settled_or_read(self, queue: QueueDefinition, bucket: int) -> BucketState:
        return self._settled(queue, bucket) or await self._read_window_bucket(queue.id, bucket)

    async def _settle_straggler(
        self, queue: QueueDefinition, state: InvisibilityState, snap: BucketState
    ) -> InvisibilityState:
        if snap.bucket not in state.stragglers:
            return state  # settled by someone else meanwhile
        left = pending(snap)
        stragglers = dict(state.stragglers)
        summary = state.summary
        if left:
            stragglers[snap.bucket] = due_of(left)
        else:
            del stragglers[snap.bucket]
            summary = summary + settled_counts(snap)
        if stragglers == state.stragglers:
            return state
        new = bump(state, stragglers=stragglers, summary=summary)
        if await self._cas(queue.id, state, new):
            if not left:
                await self._drop_if_finished(queue, snap)
            return new
        return await self._state(queue.id)

    async def lower_due(self, queue: QueueDefinition, bucket: int, due: int) -> None:
        """A delivery behind the pointer now ends earlier (an update): make sure its
        straggler is looked at then, not at the old, later time."""
        store = self._ctx.store
        for _ in range(self._ctx.tuning.max_cas_attempts):
            state = await store.read_invisibility(queue.id)
            current = state.stragglers.get(bucket)
            if current is None or current <= due:
                return
            if await self._cas(
                queue.id, state, bump(state, stragglers={**state.stragglers, bucket: due})
            ):
                return

    async def _drop_if_finished(self, queue: QueueDefinition, snap: BucketState) -> None:
        # Only a finalized bucket is safe to drop: before that a late write may still land.
        # Repair drops the ones that are not finalized yet when it finalizes them.
        finished = snap.finalized and all(m.acked for m in snap.messages)
        if (
            finished
            and queue.options.delete_buckets_after_finalize
            and not await kept_for_subscriptions(self._ctx, queue)  # kept for replay
        ):
            await self._ctx.store.delete_bucket(queue.id, snap.bucket)
