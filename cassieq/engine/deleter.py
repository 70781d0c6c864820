"""Background removal of a deleted queue version's rows."""

from __future__ import annotations

from cassieq.engine.context import EngineContext
from cassieq.engine.leases import Leases
from cassieq.model import DeletionJob


class Deleter:
    def __init__(self, ctx: EngineContext, leases: Leases) -> None:
        self._ctx = ctx
        self._leases = leases

    async def run_once(self) -> int:
        """Run every pending job this instance can take; the number finished."""
        finished = 0
        now = self._ctx.clock.now()
        for job in await self._ctx.store.list_deletion_jobs():
            # A young job waits: the version bump may still be on its way, and other
            # servers may still put into the old version from their queue cache.
            if now - job.created_at < self._ctx.tuning.deletion_grace_ms:
                continue
            name = f"delete:{job.queue}"
            if not await self._leases.hold(name):
                continue
            await self._run(job)
            await self._leases.release(name)
            finished += 1
        return finished

    async def _run(self, job: DeletionJob) -> None:
        store, qid = self._ctx.store, job.queue
        current = await store.read_queue(qid.account, qid.queue)
        if current is not None and current.version == qid.version and current.status == "active":
            # The delete never happened (crash before the version bump): keep the queue.
            await store.remove_deletion_job(job)
            return
        # Every bucket up to the monoton's, and one past it for a repair copy in flight.
        buckets = (await store.read_monoton(qid)) // job.bucket_size + 2
        await store.delete_queue_state(qid, buckets)
        snapshot = await store.read_stats_snapshot(qid.account, qid.queue)
        if snapshot is not None and snapshot.queue == qid:
            # Only this version's: a re-created queue's own snapshot stays. (A stats job
            # writing the new version's first snapshot between the read and the delete
            # loses it until its next run: a snapshot is derived data, never the truth.)
            await store.delete_stats_snapshot(qid.account, qid.queue)
        await store.remove_deletion_job(job)
        self._ctx.log.info("queue_version_deleted", queue=str(qid), buckets=buckets)
