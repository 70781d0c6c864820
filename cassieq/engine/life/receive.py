"""Get next: the invisibility side first, then the reader bucket; seal and advance."""

from __future__ import annotations

import asyncio
import math

from cassieq.engine.context import EngineContext
from cassieq.engine.hints import BucketHints
from cassieq.engine.life.fifo_turns import FifoTurns
from cassieq.engine.life.redeliver import InvisibilitySide, Leaving
from cassieq.engine.life.take import Deliverer, candidate, latest_only
from cassieq.engine.recent import Recent
from cassieq.model import BucketState, Delivery, MessageRow, QueueDefinition, QueueId
from cassieq.singleflight import SingleFlight

MAX_STEPS = 64
# How many buckets this server's readers may be ahead of the stored reader pointer while
# their seals and pointer moves are written behind them, one after another.
MAX_AHEAD = 8
# How many buckets past a full one may be read at once for the receivers of this server
# still wanting messages.
READ_AHEAD = 8
# How often one receive of a FIFO queue on this server scans behind the reader, and walks
# the reader's buckets, at most. A FIFO receive finds its groups' heads by their records
# (life/fifo.py next_heads: expired leases and groups freed anywhere included); the scan
# and the walk are for the pointers (seals, passes, repair) and for groups missing from the
# list (the walk announces what it meets). Every 20 ms, a walk or a scan of a long window
# took a receive a second under load: most of the time of a FIFO queue's consumers.
FIFO_SCAN_MS = 1_000


class Reader:
    def __init__(
        self,
        ctx: EngineContext,
        deliverer: Deliverer,
        invisibility: InvisibilitySide,
        hints: BucketHints,
    ) -> None:
        self._ctx = ctx
        self._hints = hints
        # The reader pointer as this server last saw or moved it. Stale only behind (only
        # a compare-and-set moves it forward): the reader's takes are conditioned on the
        # bucket not being sealed, and _leave re-reads it unless this server moved it.
        self._pointers: Recent[QueueId, int] = Recent(ctx, ctx.tuning.state_cache_ms)
        self._prefetching: set[asyncio.Task[BucketState]] = set()
        # queue -> the seals and pointer moves of the buckets this server's readers just
        # left, oldest first, under way while they read on (see _leave): each waits for the
        # one before it, so the stored pointer still moves one bucket at a time, in order.
        self._moving: dict[QueueId, list[asyncio.Task[bool]]] = {}
        # queue -> the bucket this server's own move targets (or reached): its readers read
        # it even while the move is under way, and leaving it needs no read of the pointer
        # first (if another server moved on meanwhile, the CAS says so).
        self._ahead: dict[QueueId, int] = {}
        # queue -> buckets of the chain whose seal is stored and which the pointer has not
        # passed yet; and how far the last move of the chain took the pointer. A move takes
        # the pointer past every sealed bucket that follows its own in one CAS.
        self._sealed: dict[QueueId, set[int]] = {}
        self._moved_to: dict[QueueId, int] = {}
        self._deliverer = deliverer
        self._invisibility = invisibility
        self._turns = FifoTurns(ctx, deliverer, invisibility)
        # queue -> (reader bucket, when this server first saw monotons of it unwritten)
        self._missing_since: dict[QueueId, tuple[int, int]] = {}
        # queue -> the seal-and-advance this server is doing now: readers that find the
        # bucket exhausted at the same moment wait for one LWT pair instead of each racing.
        self._advancing: SingleFlight[tuple[QueueId, int], int | None] = SingleFlight()
        self._reading: SingleFlight[tuple[QueueId, int], BucketState] = SingleFlight()
        # queue -> messages this server's receivers want from the reader buckets and are
        # not trying to take yet.
        self._demand: dict[QueueId, int] = {}
        # FIFO queues: the scan behind the reader under way, and when the last began.
        self._scanning: set[QueueId] = set()
        self._fifo_walking: set[QueueId] = set()
        self._scanned: dict[QueueId, int] = {}
        self._walked: dict[QueueId, int] = {}

    async def get_next(self, queue: QueueDefinition, invisibility_ms: int) -> Delivery | None:
        got = await self.receive(queue, 1, invisibility_ms)
        return got[0] if got else None

    async def receive(
        self, queue: QueueDefinition, want: int, invisibility_ms: int
    ) -> list[Delivery]:
        """Up to ``want`` deliveries: the invisibility side's first, then the reader
        bucket's, sealing and advancing while fewer were taken and more may be there."""
        return latest_only(await self._receive(queue, want, invisibility_ms))

    async def _receive(
        self, queue: QueueDefinition, want: int, invisibility_ms: int
    ) -> list[Delivery]:
        started = self._ctx.clock.now()
        bucket = await self._pointer(queue.id)
        # Where this server's readers are: ahead of the stored pointer while the bucket
        # they left is being sealed. Its unacked rows are the invisibility side's from
        # the moment they left it (what lands there unseen is repair's, as after a seal).
        bucket = max(bucket, self._ahead.get(queue.id, bucket))
        got = await self._turns.receive(queue, want, invisibility_ms) if queue.options.fifo else []
        if got and self._ctx.clock.now() - started > invisibility_ms // 2:
            # A FIFO receive this slow (a loaded cluster) answers what it holds while its
            # leases still run: more would come to a consumer whose first leases are over.
            return got
        if len(got) < want and self._may_scan(queue):
            try:
                got += await self._invisibility.deliver(
                    queue, bucket, want - len(got), invisibility_ms
                )
            finally:
                self._scanning.discard(queue.id)
        if len(got) >= want:
            return got
        walking = queue.options.fifo
        if walking:
            # A FIFO queue's reader only passes buckets on (_walk): one receive of this
            # server at a time walks it, at most every FIFO_SCAN_MS.
            now = self._ctx.clock.now()
            last = self._walked.get(queue.id, now - FIFO_SCAN_MS)
            if queue.id in self._fifo_walking or now - last < FIFO_SCAN_MS:
                return got
            self._fifo_walking.add(queue.id)
            self._walked[queue.id] = now
        self._want(queue.id, want - len(got))
        try:
            await self._walk(queue, bucket, want, invisibility_ms, got)
        finally:
            self._want(queue.id, len(got) - want)  # what it still wanted, if anything
            if walking:
                self._fifo_walking.discard(queue.id)
        return got

    def _may_scan(self, queue: QueueDefinition) -> bool:
        """Whether this receive looks behind the reader now: on a standard queue, every
        receive; on a FIFO queue (whose heads are found by their records: fifo_turns.py)
        one receive of this server at a time, at most every FIFO_SCAN_MS."""
        if not queue.options.fifo:
            return True
        now = self._ctx.clock.now()
        if queue.id in self._scanning or now - self._scanned.get(queue.id, -FIFO_SCAN_MS) < (
            FIFO_SCAN_MS
        ):
            return False
        self._scanning.add(queue.id)
        self._scanned[queue.id] = now
        return True

    def _want(self, queue: QueueId, change: int) -> None:
        demand = self._demand.get(queue, 0) + change
        if demand > 0:
            self._demand[queue] = demand
        else:
            self._demand.pop(queue, None)

    async def _walk(
        self,
        queue: QueueDefinition,
        bucket: int,
        want: int,
        invisibility_ms: int,
        got: list[Delivery],
    ) -> None:
        """Take from the reader bucket into ``got``, sealing and advancing while fewer than
        ``want`` were taken and more may be there."""
        steps = self._ctx.tuning.fifo_walk_buckets if queue.options.fifo else MAX_STEPS
        for _ in range(steps):
            if len(got) >= want:
                break
            taken: list[Delivery] = []
            hint = self._hint(queue, bucket)
            fresh = hint is None
            size = queue.options.bucket_size
            if fresh and self._moving.get(queue.id) and self._ahead.get(queue.id) == bucket:
                # The bucket before it was left just now, complete: on a busy queue this one
                # likely is full too.
                self._read_ahead(queue, bucket, size)
            snap = hint if hint is not None else await self._passed_or_read(queue, bucket)
            if len(snap.messages) >= size and snap.sealed_at is None:
                self._read_ahead(queue, bucket, len(self._untried(queue, snap)))
            if fresh and snap.sealed_at is not None:
                # Sealed: the reader has left it (maybe another server, and this server's
                # view of the pointer is behind). What is in it is not the reader's.
                exhausted = True
            elif queue.options.fifo:
                # Its messages are taken by their groups' records (fifo_turns.py): the reader
                # passes its buckets on (seals, the pointer), listing the groups it meets.
                await self._deliverer.fifo.meet(queue, snap.messages)
                exhausted = True
            else:
                taken, exhausted = await self._take_from(
                    queue, snap, want - len(got), invisibility_ms
                )
            got += taken
            if len(got) >= want:
                break
            if not fresh or not exhausted:
                # What it showed was tried (taken, lost to another server, sealed under us,
                # or dead-lettered): trying the same snapshot again would only lose again.
                # Kept only of a full bucket whose every visible message this server took
                # or is taking (nothing lost): the readers after this one pass it unread.
                if len(snap.messages) < size or self._untried(queue, snap):
                    self._hints.drop(queue.id, bucket)
                continue
            next_bucket = await self._next_bucket(queue, snap)
            if next_bucket is None:
                break
            bucket = next_bucket

    async def _pointer(self, queue: QueueId) -> int:
        return await self._pointers.get_or_load(
            queue, lambda: self._ctx.store.read_pointer(queue, "reader")
        )

    def _hint(self, queue: QueueDefinition, bucket: int) -> BucketState | None:
        """A recent snapshot of the bucket, if it shows a message this server has not tried."""
        snap = self._hints.get(queue.id, bucket)
        return snap if snap is not None and self._untried(queue, snap) else None

    async def _passed_or_read(self, queue: QueueDefinition, bucket: int) -> BucketState:
        """A recent snapshot of the bucket if it is full (every message of it is there, and
        each visible one is being taken or was taken by this server: the hint had nothing
        untried), else a read of it. Readers of a busy queue walk over buckets the others
        are emptying: reading each again only to leave it made ten reads per receive."""
        snap = self._hints.get(queue.id, bucket)
        if snap is not None and len(snap.messages) >= queue.options.bucket_size:
            return snap
        return await self._read_bucket(queue, bucket)

    async def _read_bucket(self, queue: QueueDefinition, bucket: int) -> BucketState:
        """Readers of this server that want the same bucket at once share one read of it (a
        snapshot is only a hint: the LWT that consumes a message confirms it)."""

        async def read() -> BucketState:
            snap = await self._ctx.store.read_bucket(queue.id, bucket)
            self._hints.put(queue.id, snap)
            return snap

        return await self._reading.run((queue.id, bucket), read)

    async def _take_from(
        self, queue: QueueDefinition, snap: BucketState, want: int, invisibility_ms: int
    ) -> tuple[list[Delivery], bool]:
        """Try the snapshot's visible messages; (deliveries, whether the bucket looked empty).

        When other readers of this server are trying every candidate, wait for their
        outcomes and go on with the same snapshot: what they took is marked taken, so
        there is no need to read the bucket again to learn it.
        """
        for _ in range(MAX_STEPS):
            untried = self._untried(queue, snap)
            if untried:
                # What it tries is not wanted from the buckets ahead meanwhile (see
                # _read_ahead); what it does not get, it wants again.
                claimed = min(want, len(untried))
                self._want(queue.id, -claimed)
                taken: list[Delivery] = []
                try:
                    taken = await self._deliverer.take(
                        queue, snap.bucket, untried, want, invisibility_ms, unsealed=True
                    )
                finally:
                    self._want(queue.id, claimed - len(taken))
                return taken, False
            if len(snap.messages) >= queue.options.bucket_size:
                # A full bucket whose every visible message another reader of this server
                # is taking or has taken: move on now instead of waiting for their outcomes
                # (or reading it again). A message whose take fails stays behind, visible,
                # for the invisibility side.
                return [], True
            now = self._ctx.clock.now()
            # A FIFO message whose group is held is not to be had here now: the bucket is
            # as good as empty (trying it again at once would only find the group held).
            visible = [
                m
                for m in snap.messages
                if candidate(queue, m, now) and not self._deliverer.blocked(queue, m)
            ]
            if not self._deliverer.any_trying(queue, visible):
                # Everything visible in the snapshot was taken meanwhile (by this server):
                # it is as good as empty; a read of the bucket confirms it.
                return [], not visible
            await self._deliverer.wait_for_tries(queue, visible)
        return [], False

    async def _next_bucket(self, queue: QueueDefinition, snap: BucketState) -> int | None:
        """The bucket to read after an exhausted one, or None when the queue has nothing now.

        Single-flight per server: readers that find the bucket exhausted at the same time
        share one decision (one monoton read, one seal, one pointer CAS) and its answer.
        """
        return await self._advancing.run((queue.id, snap.bucket), lambda: self._leave(queue, snap))

    async def _leave(self, queue: QueueDefinition, snap: BucketState) -> int | None:
        # Leave the bucket only when no writer can still be given a monoton in it;
        # invisible messages stay behind for the invisibility side. Every get waits while
        # the reader leaves a bucket, so the reads are skipped where the answer is known.
        store, qid, bucket = self._ctx.store, queue.id, snap.bucket
        size = queue.options.bucket_size
        # Complete: every monoton of it has its row, or it was sealed (which is only done
        # once the monoton had passed it and its holes had their grace).
        complete = len(snap.messages) >= size or snap.sealed_at is not None
        ahead = self._ahead.get(qid)
        if ahead is not None and ahead > bucket:
            # This server's readers have left this bucket already and are on ahead (its
            # move is in the chain): go there, as a new receive would. Waiting for the
            # chain and reading the pointer here held every late reader of a busy queue
            # about 20 ms per bucket.
            return ahead
        while moving := self._moving.get(qid):
            # Ahead of the stored pointer only along this server's own chain of moves, at
            # most MAX_AHEAD buckets, and only past complete buckets: batch receives empty
            # a bucket in a round or two, and waiting for each seal and pointer CAS in turn
            # was what bounded them. Any other leave waits for the chain to end (its outcome
            # decides where this server's readers are; at the head of the queue, a get that
            # finds nothing answers once the buckets it passed are sealed).
            if complete and self._ahead.get(qid) == bucket and len(moving) < MAX_AHEAD:
                break
            await asyncio.wait([moving[0]])
        now = self._ctx.clock.now()
        if not complete and await store.read_monoton(qid) < (bucket + 1) * size:
            return None
        if self._ahead.get(qid) != bucket:
            # The bucket came from a read of the pointer, maybe a stale one: if another
            # server has moved on already, follow it rather than seal and lose a CAS.
            current = await store.read_pointer(qid, "reader")
            if current != bucket:
                # Ahead: another server moved on. Behind: this server's last move failed
                # and its readers ran ahead; go back rather than seal past an open bucket.
                self._follow(qid, current)
                return current
        if not complete and self._writes_may_be_in_flight(queue, bucket, now):
            return None
        # The next bucket is read while the seal and the pointer move are under way, and
        # this server's readers go on to it at once: waiting for those two LWTs (and for
        # the bucket's last takes, which go first) stalled every get of the queue at each
        # bucket. Their takes there are conditioned on its seal marker like any other, so
        # what they take is theirs whoever moves the pointer; if the move fails, the next
        # leave reads the pointer and follows it.
        self._prefetch(queue, bucket + 1)
        self._ahead[qid] = bucket + 1
        chain = self._moving.setdefault(qid, [])
        before = chain[-1] if chain else None
        leaving = self._invisibility.leaving(qid, bucket, size)
        task = asyncio.get_running_loop().create_task(
            self._seal_and_move(queue, bucket, before, leaving)
        )
        chain.append(task)
        task.add_done_callback(lambda done: self._moved(qid, bucket + 1, done, leaving))
        return bucket + 1

    async def _seal_and_move(
        self,
        queue: QueueDefinition,
        bucket: int,
        before: asyncio.Task[bool] | None,
        leaving: Leaving,
    ) -> bool:
        """Seal the bucket and move the pointer past it; whether this server moved it.

        The seals of the chain are written at once, each as soon as this server's takes
        from its bucket are done: a bucket with a predecessor in the chain is complete
        (every monoton of it has its row), so sealing it early turns no write into a late
        one, and what the reader has not taken from it the invisibility side delivers once
        the pointer has passed it. The pointer moves in order, one CAS at a time, each
        past every bucket sealed so far: a seal and a CAS per bucket in turn bounded
        batch receives.
        """
        sealed_at = await self._seal(queue, bucket)
        # Sealed: from now on, what this server's readers did not take is the invisibility
        # side's, and it learns the bucket's state. (A seal that failed is told by _moved.)
        self._invisibility.left(leaving, sealed_at=sealed_at)
        return await self._move(queue, bucket, before)

    async def _seal(self, queue: QueueDefinition, bucket: int) -> int:
        """Seal the bucket; the stored seal time (whoever stored it)."""
        store, qid, size = self._ctx.store, queue.id, queue.options.bucket_size
        # Takes from a sealed bucket are refused (the reader's takes are conditioned on
        # the seal marker), so this server's takes still under way go first.
        await self._deliverer.wait_for_all_tries(queue, bucket * size, (bucket + 1) * size)
        return await store.seal_bucket(qid, bucket, self._ctx.clock.now())

    async def _move(
        self, queue: QueueDefinition, bucket: int, before: asyncio.Task[bool] | None
    ) -> bool:
        """Move the pointer past the sealed bucket (and the ones sealed after it so far),
        after the move before it; whether this server moved it."""
        store, qid = self._ctx.store, queue.id
        sealed = self._sealed.setdefault(qid, set())
        sealed.add(bucket)
        if before is not None:
            await asyncio.wait([before])
            if before.cancelled() or before.exception() is not None or not before.result():
                # The move before this one did not bring the pointer here (another server
                # moved it, or its outcome is unknown): this server's readers go back to
                # the stored pointer, and whoever passes this bucket finds it sealed.
                self._pointers.drop(qid)
                self._ahead.pop(qid, None)
                self._sealed.pop(qid, None)
                return False
            if self._moved_to.get(qid, 0) > bucket:
                return True  # the move before this one took the pointer past it already
        target = bucket + 1
        while target in sealed:
            target += 1
        if await store.cas_pointer(qid, "reader", bucket, target):
            self._ctx.log.debug("reader_advanced", queue=str(qid), bucket=target)
            self._pointers.put(qid, target)
            self._moved_to[qid] = target
            sealed.difference_update(range(bucket, target))
            return True
        current = await store.read_pointer(qid, "reader")  # another server moved it
        self._follow(qid, current)
        self._sealed.pop(qid, None)
        return False

    def _moved(self, qid: QueueId, target: int, task: asyncio.Task[bool], leaving: Leaving) -> None:
        # Whatever became of the seal (a task cancelled before it ran included), the
        # invisibility side's gets must not skip the bucket for ever.
        self._invisibility.left(leaving, sealed_at=None)
        chain = self._moving.get(qid, [])
        if task in chain:
            chain.remove(task)
            if not chain:
                # The chain is over: what it sealed, its moves passed (or a failure dropped
                # it). Kept, the set would only grow for as long as the server runs.
                del self._moving[qid]
                self._moved_to.pop(qid, None)
                self._sealed.pop(qid, None)
        if task.cancelled() or task.exception() is not None:
            # Unknown how far it got: read the pointer next time and go from there. (Only
            # a shutdown cancels it: nothing to warn about, the next get redoes it.)
            log = self._ctx.log.debug if task.cancelled() else self._ctx.log.warning
            log(
                "reader_advance_failed",
                queue=str(qid),
                error="cancelled" if task.cancelled() else repr(task.exception()),
            )
            self._pointers.drop(qid)
            if self._ahead.get(qid) == target:
                del self._ahead[qid]

    def _follow(self, qid: QueueId, current: int) -> None:
        self._pointers.put(qid, current)
        self._ahead.pop(qid, None)

    async def settle(self) -> None:
        """Wait for the seals and pointer moves under way, and the reads after the seals
        (tests, shutdown)."""
        while under_way := [
            *(t for chain in self._moving.values() for t in chain),
            *self._invisibility.reads_after_seal(),
        ]:
            await asyncio.wait(under_way)

    def _read_ahead(self, queue: QueueDefinition, bucket: int, left: int) -> None:
        """Read at once the buckets after a full one (with ``left`` messages for this
        server's receivers) that their demand needs beyond it. Walking them one read at a
        time, the receivers of a busy queue each waited for every read in turn (a bucket
        serves a batch or two, the rest of them read on)."""
        beyond = self._demand.get(queue.id, 0) - left
        count = min(READ_AHEAD, math.ceil(beyond / queue.options.bucket_size))
        for ahead in range(bucket + 1, bucket + 1 + count):
            self._prefetch(queue, ahead)

    def _untried(self, queue: QueueDefinition, snap: BucketState) -> list[MessageRow]:
        """The snapshot's visible messages this server is not taking and has not taken (a
        hint: the LWT that consumes one confirms it)."""
        now = self._ctx.clock.now()
        return [
            m
            for m in snap.messages
            if candidate(queue, m, now) and not self._deliverer.busy(queue, m)
        ]

    def _prefetch(self, queue: QueueDefinition, bucket: int) -> None:
        """Read the bucket in the background, unless it was read a moment ago or is now."""
        if self._hints.get(queue.id, bucket) is not None or self._reading.running(
            (queue.id, bucket)
        ):
            return
        task = asyncio.get_running_loop().create_task(self._read_bucket(queue, bucket))
        self._prefetching.add(task)
        task.add_done_callback(self._prefetched)

    def _prefetched(self, task: asyncio.Task[BucketState]) -> None:
        self._prefetching.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._ctx.log.debug("prefetch_failed", error=str(task.exception()))

    def _writes_may_be_in_flight(self, queue: QueueDefinition, bucket: int, now: int) -> bool:
        """A taken monoton whose row is missing is a write in flight or a dead writer's hole.

        Sealing at once would turn every in-flight write into a late write that only
        repair delivers, after the finalize wait (the original design's behaviour under
        concurrent puts). Waiting a short grace lets them land; after it they are holes.
        """
        seen = self._missing_since.get(queue.id)
        if seen is None or seen[0] != bucket:
            self._missing_since[queue.id] = (bucket, now)
            return True
        return now - seen[1] < self._ctx.tuning.hole_grace_ms
