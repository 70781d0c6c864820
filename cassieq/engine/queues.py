"""Queue definitions: create, look up (briefly cached), list, delete (version bump)."""

from __future__ import annotations

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import InvalidArgument, QueueExists, QueueNotFound
from cassieq.engine.recent import Recent
from cassieq.model import DeletionJob, QueueDefinition, QueueOptions, name_problem

MAX_BUCKET_SIZE = 10_000


class QueueDirectory:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx
        self._cache: Recent[tuple[str, str], QueueDefinition] = Recent(
            ctx, ctx.tuning.queue_cache_ms, max_entries=10_000
        )

    async def create(
        self, account: str, name: str, options: QueueOptions, *, error_if_exists: bool = False
    ) -> tuple[QueueDefinition, bool]:
        """Return (definition, created). An existing active queue is returned as it is."""
        validate_options(name, options)
        store, now = self._ctx.store, self._ctx.clock.now()
        fresh = QueueDefinition(
            account=account, name=name, version=1, status="active", options=options, created_at=now
        )
        for _ in range(self._ctx.tuning.max_cas_attempts):
            existing = await store.insert_queue(fresh)
            if existing is None:
                return self._remember(fresh), True
            if existing.status == "active":
                if error_if_exists:
                    raise QueueExists(f"queue {name!r} already exists")
                return self._remember(existing), False
            # A deleted queue's row keeps its bumped version: the new queue takes it,
            # so it shares no rows with the old one being cleaned up.
            revived = msgspec.structs.replace(fresh, version=existing.version)
            if await store.replace_queue(revived, existing.version):
                return self._remember(revived), True
        raise QueueExists(f"queue {name!r} is being changed concurrently; retry")

    async def get(self, account: str, name: str, *, fresh: bool = False) -> QueueDefinition:
        cached = None if fresh else self._cache.get((account, name))
        if cached is not None:
            return cached
        queue = await self._ctx.store.read_queue(account, name)
        if queue is None or queue.status != "active":
            self._cache.drop((account, name))
            raise QueueNotFound(f"queue {name!r} not found in account {account!r}")
        return self._remember(queue)

    async def find(self, account: str, name: str) -> QueueDefinition | None:
        try:
            return await self.get(account, name)
        except QueueNotFound:
            return None

    async def list(self, account: str) -> list[QueueDefinition]:
        return [q for q in await self._ctx.store.list_queues(account) if q.status == "active"]

    async def delete(self, account: str, name: str) -> QueueDefinition:
        """Bump the version (the queue is gone at once) and leave a deletion job for the rows."""
        store, now = self._ctx.store, self._ctx.clock.now()
        for _ in range(self._ctx.tuning.max_cas_attempts):
            queue = await store.read_queue(account, name)
            if queue is None or queue.status != "active":
                raise QueueNotFound(f"queue {name!r} not found in account {account!r}")
            # The job is written first: a crash after it and before the bump leaves a
            # job for a live queue, which the deleter recognises and drops.
            job = DeletionJob(queue=queue.id, bucket_size=queue.options.bucket_size, created_at=now)
            await store.add_deletion_job(job)
            gone = msgspec.structs.replace(queue, version=queue.version + 1, status="deleted")
            if await store.replace_queue(gone, queue.version):
                self._cache.drop((account, name))
                self._ctx.log.info("queue_deleted", queue=str(queue.id))
                return queue
        raise QueueNotFound(f"queue {name!r} is being changed concurrently; retry")

    def _remember(self, queue: QueueDefinition) -> QueueDefinition:
        self._cache.put((queue.account, queue.name), queue)
        return queue


def validate_options(name: str, options: QueueOptions) -> None:
    if problem := name_problem("queueName", name):
        raise InvalidArgument(problem)
    if not 1 <= options.bucket_size <= MAX_BUCKET_SIZE:
        raise InvalidArgument(f"bucketSize must be between 1 and {MAX_BUCKET_SIZE}")
    if options.max_delivery_count < 1:
        raise InvalidArgument("maxDeliveryCount must be >= 1")
    if options.repair_poll_seconds < 1:
        raise InvalidArgument("repairWorkerPollSeconds must be >= 1")
    if options.finalize_seconds < 1:
        raise InvalidArgument("repairWorkerBucketFinalizeTimeSeconds must be >= 1")
    if options.dlq_name is not None and (problem := name_problem("dlqName", options.dlq_name)):
        raise InvalidArgument(problem)
    if options.dlq_name == name:
        raise InvalidArgument("a queue cannot be its own dead-letter queue")
