"""Queue definitions: create, look up (briefly cached), list, delete (version bump)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Protocol

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import (
    AccountNotFound,
    FifoCannotChange,
    InvalidArgument,
    PartitionsCannotShrink,
    QueueExists,
    QueueLimitReached,
    QueueNotFound,
)
from cassieq.engine.recent import Recent
from cassieq.model import (
    MAX_PARTITIONS,
    MAX_QUEUE_MESSAGE_BYTES,
    Account,
    DeletionJob,
    QueueDefinition,
    QueueOptions,
    name_problem,
)
from cassieq.singleflight import SingleFlight

MAX_BUCKET_SIZE = 10_000
# v2 option bounds (api-v2.md), SQS's where it has one.
MIN_RETENTION_S, MAX_RETENTION_S = 60, 14 * 24 * 3600
MAX_VISIBILITY_TIMEOUT_S = 7 * 24 * 3600  # the engine's longest lease
MAX_DELAY_S = 15 * 60
MAX_RECEIVE_WAIT_S = 20  # SQS's longest long poll
DELETE_AT_ONCE = 16


class DeletionJobs(Protocol):
    """Where a deletion leaves the job that removes the old version's rows (the jobs queue,
    engine/upkeep/deletion_jobs.py; a protocol here: the queue's publisher must not import this
    module's users back)."""

    async def add(self, job: DeletionJob) -> None: ...


class QueueDirectory:
    def __init__(self, ctx: EngineContext, jobs: DeletionJobs) -> None:
        self._ctx = ctx
        self._jobs = jobs
        self._cache: Recent[tuple[str, str], QueueDefinition] = Recent(
            ctx, ctx.tuning.queue_cache_ms, max_entries=10_000
        )
        self._loading: SingleFlight[tuple[str, str], QueueDefinition] = SingleFlight()

    async def create(
        self,
        account: str,
        name: str,
        options: QueueOptions,
        *,
        error_if_exists: bool = False,
        tags: dict[str, str] | None = None,
    ) -> tuple[QueueDefinition, bool]:
        """Return (definition, created). An existing active queue is returned as it is.

        Refused when the account does not exist, when it has ``max_queues_per_account``
        active queues, or when ``options`` name a dead-letter queue that does not exist (a
        message past its deliveries would have nowhere to go).
        """
        validate_options(name, options)
        store, now = self._ctx.store, self._ctx.clock.now()
        owner = await store.read_account(account)
        if owner is None:
            raise AccountNotFound(f"account {account!r} not found")
        # One read of the account's partition answers the three questions: does the queue
        # exist, does its dead-letter queue, how many queues are there.
        active = {q.name: q for q in await store.list_queues(account) if q.status == "active"}
        if name in active:
            if error_if_exists:
                raise QueueExists(f"queue {name!r} already exists")
            return self._remember(active[name]), False
        if options.dlq_name is not None and options.dlq_name not in active:
            raise InvalidArgument(f"dlqName {options.dlq_name!r} must name an existing queue")
        if options.dlq_name is not None:
            _check_fifo_dlq(options, active[options.dlq_name])
        limit = self._ctx.tuning.max_queues_per_account
        # Counted before the insert: creates racing each other may each see room and
        # overshoot the limit by a few. It bounds a tenant's queues, it is not an invariant.
        if len(active) >= limit:
            raise QueueLimitReached(
                f"account {account!r} has {len(active)} queues, the most allowed ({limit}): "
                "delete one first"
            )
        fresh = QueueDefinition(
            account=account,
            name=name,
            version=1,
            status="active",
            options=options,
            created_at=now,
            tags=tags or {},
        )
        for _ in range(self._ctx.tuning.max_cas_attempts):
            existing = await store.insert_queue(fresh)
            if existing is None:
                return await self._created(owner, fresh), True
            if existing.status == "active":
                if error_if_exists:
                    raise QueueExists(f"queue {name!r} already exists")
                return self._remember(existing), False
            # A deleted queue's row keeps its bumped version: the new queue takes it,
            # so it shares no rows with the old one being cleaned up.
            revived = msgspec.structs.replace(
                fresh, version=existing.version, options_rev=existing.options_rev
            )
            if await store.replace_queue(revived, existing.version):
                return await self._created(owner, revived), True
        raise QueueExists(f"queue {name!r} is being changed concurrently; retry")

    async def update(
        self,
        account: str,
        name: str,
        changes: dict[str, object] | Callable[[QueueOptions], dict[str, object]],
    ) -> QueueDefinition:
        """Change options (``QueueOptions`` field names) of an existing queue; the new definition.
        ``changes`` may be a function of the current options (SQS's AddPermission edits the
        kept Policy): it is called on each version read, so the change applies to the
        version it was computed from, never over a concurrent one.

        A compare-and-set on the queue row's version (the incarnation: an update never lands
        on a queue deleted, or deleted and re-created, meanwhile) and on its options_rev
        (two updates racing each other cannot both apply: the loser reads again and applies
        its changes on top). Other servers see the change once their cached definition
        expires (``queue_cache_ms``).
        """
        store = self._ctx.store
        for _ in range(self._ctx.tuning.max_cas_attempts):
            current = await self.get(account, name, fresh=True)
            wanted = changes(current.options) if callable(changes) else changes
            try:
                options = msgspec.structs.replace(current.options, **wanted)
            except TypeError as exc:  # an unknown field name: the caller's mistake
                raise InvalidArgument(str(exc)) from exc
            if options.bucket_size != current.options.bucket_size:
                raise InvalidArgument(
                    "bucketSize cannot change: the queue's messages are laid out by it"
                )
            if options.fifo != current.options.fifo:
                raise FifoCannotChange(
                    "fifo cannot change: a queue is FIFO or standard from its creation"
                )
            if options.fifo and options.partitions != current.options.partitions:
                raise FifoCannotChange(
                    "the partitions of a FIFO queue cannot change: each message group is "
                    "ordered within the partition its id hashes to"
                )
            if options.partitions < current.options.partitions:
                raise PartitionsCannotShrink(
                    f"partitions can only grow: the queue has {current.options.partitions}, "
                    "and a partition removed would strand its messages"
                )
            validate_options(name, options)
            new_dlq = options.dlq_name
            if new_dlq is not None and new_dlq != current.options.dlq_name:
                target = await self.find(account, new_dlq, fresh=True)
                if target is None:
                    raise InvalidArgument(
                        f"deadLetterQueue {new_dlq!r} must name an existing queue"
                    )
                _check_fifo_dlq(options, target)
            if options == current.options:
                return current
            updated = msgspec.structs.replace(
                current,
                options=options,
                options_rev=current.options_rev + 1,
                modified_at=self._ctx.clock.now(),
            )
            if await store.replace_queue(updated, current.version, current.options_rev):
                self._ctx.log.info("queue_updated", queue=str(updated.id), changes=sorted(wanted))
                return self._remember(updated)
        raise QueueExists(f"queue {name!r} is being changed concurrently; retry")

    async def retag(
        self, account: str, name: str, add: dict[str, str], remove: list[str]
    ) -> QueueDefinition:
        """Set ``add`` and drop ``remove`` among the queue's tags (SQS Tag/UntagQueue): a
        compare-and-set on the row's version and options_rev, as an option change."""
        store = self._ctx.store
        for _ in range(self._ctx.tuning.max_cas_attempts):
            current = await self.get(account, name, fresh=True)
            tags = {k: v for k, v in {**current.tags, **add}.items() if k not in remove}
            if tags == current.tags:
                return current
            updated = msgspec.structs.replace(
                current, tags=tags, options_rev=current.options_rev + 1
            )
            if await store.replace_queue(updated, current.version, current.options_rev):
                return self._remember(updated)
        raise QueueExists(f"queue {name!r} is being changed concurrently; retry")

    async def _created(self, owner: Account, queue: QueueDefinition) -> QueueDefinition:
        """Keep a queue just created only if its account is not being deleted.

        Account deletion marks the account, then deletes the queues it lists: a queue
        inserted after that list sees the mark here (or, once the deletion is done, the
        account gone or re-created) and deletes itself. So no queue of a deleted account
        is left for a new account of the same name.
        """
        store = self._ctx.store
        current, mark = await asyncio.gather(
            store.read_account(owner.name), store.read_account_deletion(owner.name)
        )
        if (
            current is not None
            and current.created_at == owner.created_at
            and (mark is None or mark[0] != owner.created_at)
        ):
            return self._remember(queue)
        with contextlib.suppress(QueueNotFound):
            await self.delete(queue.account, queue.name, version=queue.version)
        raise AccountNotFound(f"account {owner.name!r} is being deleted")

    async def get(self, account: str, name: str, *, fresh: bool = False) -> QueueDefinition:
        if not fresh:
            cached = self._cache.get((account, name))
            if cached is not None:
                return cached
            # Requests that miss together (every put, get and ack of a queue whose entry
            # just expired) share one read.
            return await self._loading.run(
                (account, name), lambda: self.get(account, name, fresh=True)
            )
        queue = await self._ctx.store.read_queue(account, name)
        if queue is None or queue.status != "active":
            self._cache.drop((account, name))
            raise QueueNotFound(f"queue {name!r} not found in account {account!r}")
        return self._remember(queue)

    async def find(self, account: str, name: str, *, fresh: bool = False) -> QueueDefinition | None:
        try:
            return await self.get(account, name, fresh=fresh)
        except QueueNotFound:
            return None

    # Before list(): in the class body below it, ``list`` names that method.
    async def list_page(self, account: str, after: str | None, limit: int) -> list[QueueDefinition]:
        """One bounded read of the account's directory: up to ``limit`` rows, deleted
        names' too, by name after ``after``."""
        return await self._ctx.store.list_queues_page(account, after, limit)

    async def list(self, account: str) -> list[QueueDefinition]:
        return [q for q in await self._ctx.store.list_queues(account) if q.status == "active"]

    async def delete(
        self, account: str, name: str, *, version: int | None = None
    ) -> QueueDefinition:
        """Bump the version (the queue is gone at once) and leave a deletion job for the rows.

        With ``version``, only that incarnation of the queue (another is not found).
        """
        store, now = self._ctx.store, self._ctx.clock.now()
        for _ in range(self._ctx.tuning.max_cas_attempts):
            queue = await store.read_queue(account, name)
            if queue is None or queue.status != "active" or version not in (None, queue.version):
                raise QueueNotFound(f"queue {name!r} not found in account {account!r}")
            # The job is written first: a crash after it and before the bump leaves a
            # job for a live queue, which the deleter recognises and drops.
            job = DeletionJob(
                queue=queue.id,
                bucket_size=queue.options.bucket_size,
                created_at=now,
                partitions=queue.options.stored_partitions,  # the lane too
            )
            await self._jobs.add(job)
            gone = msgspec.structs.replace(queue, version=queue.version + 1, status="deleted")
            if await store.replace_queue(gone, queue.version):
                self._cache.drop((account, name))
                self._ctx.log.info("queue_deleted", queue=str(queue.id))
                return queue
        raise QueueNotFound(f"queue {name!r} is being changed concurrently; retry")

    async def delete_all(self, account: str) -> int:
        """Delete every active queue of the account (as many at a time as DELETE_AT_ONCE);
        the number deleted here (one deleted meanwhile by someone else is not counted)."""
        queues = await self.list(account)
        deleted = 0
        for start in range(0, len(queues), DELETE_AT_ONCE):
            results = await asyncio.gather(
                *(
                    self.delete(account, q.name, version=q.version)
                    for q in queues[start : start + DELETE_AT_ONCE]
                ),
                return_exceptions=True,
            )
            for result in results:
                if isinstance(result, QueueNotFound):
                    continue
                if isinstance(result, BaseException):
                    raise result
                deleted += 1
        return deleted

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
    _check_range(
        "visibilityTimeoutSeconds", options.visibility_timeout_seconds, 0, MAX_VISIBILITY_TIMEOUT_S
    )
    _check_range("delaySeconds", options.delay_seconds, 0, MAX_DELAY_S)
    _check_range(
        "messageRetentionSeconds",
        options.message_retention_seconds,
        MIN_RETENTION_S,
        MAX_RETENTION_S,
    )
    _check_range("maxMessageBytes", options.max_message_bytes, 1, MAX_QUEUE_MESSAGE_BYTES)
    _check_range("receiveWaitSeconds", options.receive_wait_seconds, 0, MAX_RECEIVE_WAIT_S)
    _check_range("partitions", options.partitions, 1, MAX_PARTITIONS)


def _check_range(label: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise InvalidArgument(f"{label} must be between {low} and {high}")


def _check_fifo_dlq(options: QueueOptions, dlq: QueueDefinition) -> None:
    """A FIFO queue's dead letters keep their groups' order only in a FIFO queue (SQS's rule
    too); a standard queue's may go to either."""
    if options.fifo and not dlq.options.fifo:
        raise InvalidArgument(
            f"the dead-letter queue {dlq.name!r} of a FIFO queue must be a FIFO queue"
        )
