"""Deletion jobs: a queue of the engine's own, which the background pass consumes.

Deleting a queue bumps its version at once and leaves a job: remove the old version's
rows. The jobs were rows of one table partition (``deletion_jobs``, shard 0) that every
server listed whole on every pass, each finished job a row tombstone kept ten days: one
tenant churning queues made every pass read thousands of tombstones, and at Cassandra's
failure threshold the pass failed on every server (/ready 503, deleted rows kept).

The jobs are now messages of a queue of the engine itself, so the pass reads what a
receive reads: the reader bucket (at most ``bucket_size`` rows), the invisibility side's
few buckets, the repair bucket; never the jobs done, whatever their number. What the
engine guarantees for a tenant's queue holds for the jobs: a job is taken by one server
at a time (its delivery is the lease; a server that dies mid-job leaves it to be taken
again once the lease is over), a put that lands late is re-published by repair, finished
buckets are finalized and dropped whole (a partition nobody reads again), never row by row.
See docs/design/background-reads.md.

The queue lives under an account name no tenant can have (names are ``[a-zA-Z0-9_.-]+``)
and has no row in the queue directory: its definition is ``jobs_queue()``, so no listing
shows it and no tenant request reaches it. Its layout (bucket size, version) must never
change: stored jobs are found by it.
"""

from __future__ import annotations

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.life.put import Publisher
from cassieq.model import DeletionJob, QueueDefinition, QueueOptions

JOBS_ACCOUNT = "~cassieq"
# A job is never dead-lettered nor expired: it is retried until done.
_NEVER = 2**31 - 1
JOBS_QUEUE_NAME = "deletion-jobs"


def jobs_queue(name: str = JOBS_QUEUE_NAME) -> QueueDefinition:
    """The jobs queue named ``name`` (Tuning.deletion_jobs_queue): every server of a keyspace
    uses the default one."""
    return QueueDefinition(
        account=JOBS_ACCOUNT,
        name=name,
        version=1,
        status="active",
        options=QueueOptions(
            bucket_size=100,
            max_delivery_count=_NEVER,
            repair_poll_seconds=5,
            finalize_seconds=15,
            delete_buckets_after_finalize=True,
            # Servers take jobs side by side: a random visible one each, not all the oldest.
            strict_fifo=False,
            message_retention_seconds=_NEVER,
        ),
        created_at=0,
    )


JOBS_QUEUE = jobs_queue()

_decode = msgspec.json.Decoder(DeletionJob).decode


def encode_job(job: DeletionJob) -> str:
    return msgspec.json.encode(job).decode()


def decode_job(message: str) -> DeletionJob:
    return _decode(message)


class DeletionLog:
    """Where a queue deletion leaves its job."""

    def __init__(self, ctx: EngineContext, publisher: Publisher) -> None:
        self._ctx = ctx
        self._publisher = publisher
        self.queue = jobs_queue(ctx.tuning.deletion_jobs_queue)

    async def add(self, job: DeletionJob) -> None:
        """Put the job, visible once ``deletion_grace_ms`` after its creation is over: the
        version bump may still be on its way, and other servers may still put into the old
        version from their cached definition."""
        ctx = self._ctx
        delay_ms = max(0, job.created_at + ctx.tuning.deletion_grace_ms - ctx.clock.now())
        await self._publisher.put(self.queue, encode_job(job), delay_ms)
