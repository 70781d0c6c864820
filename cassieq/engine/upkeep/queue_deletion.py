"""Background removal of a deleted queue version's rows: the jobs queue's consumer.

Each pass takes what jobs are visible in the jobs queue (upkeep/deletion_jobs.py), a few at
a time and at most MAX_JOBS_PER_PASS, so a pass stays bounded in time and in what it reads
however many queues tenants delete; the rest wait for the next pass. A job is acked once
done; one that fails (a node down, a timeout) is left to its lease, after which any server
takes it again. Doing a job twice is harmless: every step is idempotent.
"""

from __future__ import annotations

import asyncio
from typing import Literal

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.life.ack import Acker
from cassieq.engine.life.receive import Reader
from cassieq.engine.replay.shared_rows import delete_deliveries
from cassieq.engine.upkeep.deletion_jobs import DeletionLog, decode_job
from cassieq.engine.upkeep.repair import Repairer
from cassieq.model import MAX_PARTITIONS, DeletionJob, Delivery, QueueId

MAX_JOBS_PER_PASS = 1024
JOBS_AT_ONCE = 16
# A job's delivery is its lease: long enough for a queue of many buckets (each dropped
# whole, 64 at a time). One that outlasts it is taken again by another server, which does
# the same idempotent steps.
JOB_LEASE_MS = 5 * 60_000
# The table of the jobs written before the jobs queue is drained a page a pass into the
# queue. Once found empty it is looked at again this rarely (a server of the earlier
# version may still write one during a rolling upgrade): each look reads the tombstones
# that draining it left there, until compaction purges them.
LEGACY_PAGE = 64
LEGACY_RECHECK_MS = 10 * 60_000
Outcome = Literal["done", "dropped", "failed"]
DONE: Outcome = "done"
DROPPED: Outcome = "dropped"
FAILED: Outcome = "failed"


class Deleter:
    def __init__(
        self,
        ctx: EngineContext,
        log: DeletionLog,
        reader: Reader,
        acker: Acker,
        repairer: Repairer,
    ) -> None:
        self._ctx = ctx
        self._log = log
        self._reader = reader
        self._acker = acker
        self._repairer = repairer
        self._next_repair = 0
        self._legacy_after: QueueId | None = None
        self._legacy_due = 0

    async def run_once(self) -> int:
        """Take and do the visible jobs, at most MAX_JOBS_PER_PASS; the number finished."""
        await self._drain_legacy()
        await self._repair_jobs_queue()
        finished = 0
        while finished < MAX_JOBS_PER_PASS:
            want = min(JOBS_AT_ONCE, MAX_JOBS_PER_PASS - finished)
            try:
                taken = await self._reader.receive(self._log.queue, want, JOB_LEASE_MS)
            except Exception as exc:
                # Contention every server shares (one queue): the jobs wait for the next
                # pass, which this one's failure must not be (nor /ready's with it).
                self._ctx.log.warning("deletion_jobs_receive_failed", error=repr(exc))
                break
            outcomes = await asyncio.gather(*map(self._do, taken))
            done = [d for d, outcome in zip(taken, outcomes, strict=True) if outcome != FAILED]
            if done:
                await self._ack(done)
            finished += outcomes.count(DONE)
            if len(taken) < want:
                break  # no more visible now
        return finished

    async def _ack(self, done: list[Delivery]) -> None:
        """One conditional batch per bucket for the lot, not an LWT a job. A stale receipt
        (the lease ran out and another server took the job, which does it again) is no
        failure: the job is done either way; nor is an ack that cannot be settled (the jobs
        are done again once their lease is over)."""
        try:
            await self._acker.ack_many(self._log.queue, [d.receipt for d in done])
        except Exception as exc:
            self._ctx.log.warning("deletion_jobs_ack_failed", jobs=len(done), error=repr(exc))

    async def _do(self, delivery: Delivery) -> Outcome:
        """Do one job: DONE; DROPPED, a message that is no job; FAILED, left to its lease
        (after which any server takes it again)."""
        try:
            job = decode_job(delivery.message)
        except msgspec.DecodeError:
            # Never written by a server: nothing to do with it but drop it.
            self._ctx.log.error("deletion_job_unreadable", message=delivery.message[:200])
            return DROPPED
        try:
            await self._run(job)
        except Exception as exc:
            # One job that fails must not fail the pass (a failed pass on every server makes
            # /ready say 503 everywhere).
            self._ctx.log.warning("deletion_job_failed", queue=str(job.queue), error=repr(exc))
            return FAILED
        return DONE

    async def _repair_jobs_queue(self) -> None:
        """Repair the jobs queue as the pass repairs a tenant's queue (no account lists it):
        late puts re-published, finished buckets finalized and dropped."""
        now = self._ctx.clock.now()
        if now < self._next_repair:
            return
        self._next_repair = now + self._log.queue.options.repair_poll_seconds * 1000
        try:
            await self._repairer.run_once(self._log.queue)
        except Exception as exc:
            self._ctx.log.warning("deletion_jobs_repair_failed", error=repr(exc))

    async def _drain_legacy(self) -> None:
        """Move a page of the old table's jobs into the jobs queue, then remove them there.

        A crash between the two leaves a job in both: done twice, harmlessly. A failure here
        (the old partition can hold more tombstones than Cassandra reads) never fails the
        pass: it is tried again later."""
        ctx = self._ctx
        now = ctx.clock.now()
        if now < self._legacy_due:
            return
        try:
            jobs = await ctx.store.list_deletion_jobs(self._legacy_after, LEGACY_PAGE)
            for job in jobs:
                await self._log.add(job)
                await ctx.store.remove_deletion_job(job)
        except Exception as exc:
            ctx.log.warning("legacy_deletion_jobs_failed", error=repr(exc))
            self._legacy_due = now + LEGACY_RECHECK_MS
            return
        if jobs:
            ctx.log.info("legacy_deletion_jobs_moved", jobs=len(jobs))
        if len(jobs) == LEGACY_PAGE:
            self._legacy_after = jobs[-1].queue  # more to come: the next page next pass
        elif jobs or self._legacy_after is not None:
            self._legacy_after = None  # read again from the start next pass: empty yet?
        else:
            self._legacy_due = now + LEGACY_RECHECK_MS  # empty

    async def _run(self, job: DeletionJob) -> None:
        store, qid = self._ctx.store, job.queue
        current = await store.read_queue(qid.account, qid.queue)
        if current is not None and current.version == qid.version and current.status == "active":
            # The delete never happened (crash before the version bump): keep the queue.
            return
        buckets = 0
        # Shared subscriptions' delivery rows (schema 0015), before their definitions: a
        # job redone after a crash still finds the names.
        shared = [s.name for s in await store.read_subscriptions(qid) if s.mode == "shared"]
        for partition in range(MAX_PARTITIONS):
            pid = QueueId(qid.account, qid.queue, qid.version, partition)
            monoton = await store.read_monoton(pid)
            if partition >= job.partitions and monoton == 0:
                # Past the job's partitions, only a growth racing the delete (between the
                # job's write and the version bump) can have made more: each such one with
                # a message taken is deleted too; the first without ends them.
                break
            # Every bucket up to the monoton's, and one past it for a repair copy in flight.
            count = monoton // job.bucket_size + 2
            await delete_deliveries(store, [(pid, n, b) for n in shared for b in range(count)])
            await store.delete_queue_state(pid, count)
            buckets += count
        await store.delete_subscriptions(qid)  # the version's subscriptions (issue 36)
        snapshot = await store.read_stats_snapshot(qid.account, qid.queue)
        if snapshot is not None and snapshot.queue == qid:
            # Only this version's: a re-created queue's own snapshot stays. (A stats job
            # writing the new version's first snapshot between the read and the delete
            # loses it until its next run: a snapshot is derived data, never the truth.)
            await store.delete_stats_snapshot(qid.account, qid.queue)
        self._ctx.log.info("queue_version_deleted", queue=str(qid), buckets=buckets)
