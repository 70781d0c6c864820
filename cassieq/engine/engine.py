"""QueueEngine: the one object the API, CLI and benchmarks talk to."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence

from cassieq.engine.clock import Clock, SystemClock
from cassieq.engine.context import EngineContext, Tuning
from cassieq.engine.errors import EngineError, InvalidArgument
from cassieq.engine.hints import BucketHints
from cassieq.engine.inspect import Inspector, Pointers
from cassieq.engine.life.ack import Acker
from cassieq.engine.life.fair import FairRouter, to_lane
from cassieq.engine.life.fifo import sequence_number
from cassieq.engine.life.long_poll import Waiters
from cassieq.engine.life.long_poll_slots import LongPollSlots
from cassieq.engine.life.monotons import MonotonStrategy
from cassieq.engine.life.partitions import (
    Rotation,
    by_partition,
    in_groups,
    peek_across,
    receipt_partition,
    receive_across,
    split_by_partition,
    sum_statistics,
)
from cassieq.engine.life.peek import MAX_LIMIT as MAX_PEEK
from cassieq.engine.life.peek import Peeker
from cassieq.engine.life.purge import Purger
from cassieq.engine.life.put import Publisher
from cassieq.engine.life.receive import Reader
from cassieq.engine.life.redeliver import InvisibilitySide
from cassieq.engine.life.redrive import DEFAULT_PER_SECOND, MAX_PER_SECOND, Redriver
from cassieq.engine.life.take import Deliverer
from cassieq.engine.observe import Observer, Observers
from cassieq.engine.policy import MAX_INVISIBILITY_S as MAX_INVISIBILITY_S
from cassieq.engine.policy import check_seconds
from cassieq.engine.replay.subscriptions import Subscriptions
from cassieq.engine.stats import StatisticsReader
from cassieq.engine.tenancy.accounts import Accounts
from cassieq.engine.tenancy.keyspace_secrets import (
    CONSOLE_SESSION_SECRET,
    RECEIPT_SECRET,
    KeyspaceSecrets,
    secret_bytes,
)
from cassieq.engine.tenancy.queues import QueueDirectory
from cassieq.engine.upkeep.deletion_jobs import DeletionLog
from cassieq.engine.upkeep.leases import Leases
from cassieq.engine.upkeep.queue_deletion import Deleter
from cassieq.engine.upkeep.repair import Repairer
from cassieq.model import (
    Account,
    BucketState,
    Delivery,
    KeyspaceSecret,
    MessageRow,
    OutgoingMessage,
    PeekedMessage,
    PopReceipt,
    QueueDefinition,
    QueueOptions,
    RedriveTask,
    Sent,
    Statistics,
    StatsSnapshot,
    VisibilityChange,
)
from cassieq.store.base import SchemaStatus, Store


class QueueEngine:
    def __init__(
        self,
        store: Store,
        clock: Clock | None = None,
        *,
        tuning: Tuning | None = None,
        monotons: MonotonStrategy = "grouped",
        instance_id: str | None = None,
        key_encryption_key: bytes | None = None,
        previous_key_encryption_keys: Sequence[bytes] = (),
        observers: Sequence[Observer] = (),
    ) -> None:
        # Instrumentation (metrics, tests' call counts): hooks the parts call (observe.py).
        hub = Observers(observers)
        self.ctx = EngineContext(
            store=hub.attach(store),
            clock=clock or SystemClock(),
            tuning=tuning or Tuning(),
            instance_id=instance_id or secrets.token_hex(8),
            observers=hub,
        )
        self.secrets = KeyspaceSecrets(self.ctx)
        hints = BucketHints(self.ctx)
        self.publisher = Publisher(self.ctx, monotons, hints)
        # A queue deletion leaves its job in the engine's own jobs queue.
        self.deletion_log = DeletionLog(self.ctx, self.publisher)
        self.queues = QueueDirectory(self.ctx, self.deletion_log)
        # Account keys are sealed under this key, or (None) the keyspace's own random one.
        self.accounts = Accounts(
            self.ctx, self.queues, self.secrets, key_encryption_key, previous_key_encryption_keys
        )
        self.leases = Leases(self.ctx)
        self.waiters = Waiters(self.ctx)
        self.long_poll_slots = LongPollSlots(
            self.ctx.tuning.long_poll_max_waiting, self.ctx.tuning.long_poll_max_waiting_per_account
        )
        self.publisher.on_written = self.waiters.written
        deliverer = Deliverer(self.ctx, self.publisher, self.queues)
        invisibility = InvisibilitySide(self.ctx, deliverer)
        self.reader = Reader(self.ctx, deliverer, invisibility, hints)
        self.acker = Acker(self.ctx, invisibility, hints)
        self.acker.fifo = self.publisher.fifo
        self.fair = FairRouter(self.ctx)
        # Waiting receives wake when a lease this server gave or changed ends.
        deliverer.on_leased = self.acker.on_leased = self.waiters.visible_at
        self.repairer = Repairer(self.ctx, self.publisher, self.leases)
        self.deleter = Deleter(self.ctx, self.deletion_log, self.reader, self.acker, self.repairer)
        self.statistics_reader = StatisticsReader(self.ctx)
        self.peeker = Peeker(self.ctx)
        self.purger = Purger(self.ctx)
        self.redriver = Redriver(self.ctx, deliverer.dead_letters, self.queues)
        self.inspector = Inspector(self.ctx)
        parts = (self.publisher, self.waiters, self.long_poll_slots)
        self._subscriptions = Subscriptions(self.ctx, self.queues, *parts)
        self._rotation = Rotation()  # where keyless puts go, where receives start (#35)

    @property
    def subscriptions(self) -> Subscriptions:
        return self._subscriptions  # issue 36's façade, for the adapters (this is at its limit)

    @property
    def default_partitions(self) -> int:
        """The partitions of a queue whose creation does not say (a server setting)."""
        return self.ctx.tuning.default_partitions

    # The message operations by account and queue name, as the API sees them.
    async def create_queue(
        self,
        account: str,
        name: str,
        options: QueueOptions,
        *,
        error_if_exists: bool = False,
        tags: dict[str, str] | None = None,
    ) -> tuple[QueueDefinition, bool]:
        return await self.queues.create(
            account, name, options, error_if_exists=error_if_exists, tags=tags
        )

    async def put(
        self, account: str, queue: str, message: str, initial_invisibility_s: int | None = None
    ) -> int:
        """Store one message (v1); no initial invisibility: the queue's delaySeconds."""
        delay_ms = None
        if initial_invisibility_s is not None:
            check_seconds("initialInvisibilitySeconds", initial_invisibility_s)
            delay_ms = initial_invisibility_s * 1000
        definition = await self.queues.get(account, queue)
        if definition.options.partitions > 1:
            partition = self.publisher.pick_partition(definition, self._rotation)
            definition = definition.in_partition(partition)
        return await self.publisher.put(definition, message, delay_ms)

    async def get_next(self, account: str, queue: str, invisibility_s: int = 30) -> Delivery | None:
        check_seconds("invisibilityTimeSeconds", invisibility_s)
        got = await self._receive(await self.queues.get(account, queue), 1, invisibility_s * 1000)
        return got[0] if got else None

    async def ack(self, account: str, queue: str, receipt: PopReceipt) -> None:
        definition = await self.queues.get(account, queue)
        await self.acker.ack(definition.in_partition(receipt.partition), receipt)

    async def update(
        self,
        account: str,
        queue: str,
        receipt: PopReceipt,
        message: str | None,
        invisibility_s: int,
    ) -> PopReceipt:
        check_seconds("newInvisibilitySeconds", invisibility_s)
        definition = (await self.queues.get(account, queue)).in_partition(receipt.partition)
        return await self.acker.update(definition, receipt, message, invisibility_s * 1000)

    # v2 (api-v2.md). Batches answer per entry, in request order; the caller validated the
    # counts (1-100); the queue's policy (sizes, default delay) is the publisher's. Each is
    # one conditional batch per bucket partition, every row conditioned on its own state
    # (Reader.receive, Acker.ack_many, Acker.change_many); the one-message operations of
    # v1 are their one-entry cases.

    async def send(self, account: str, queue: str, messages: list[OutgoingMessage]) -> list[Sent]:
        definition = await self.queues.get(account, queue)
        # One group per partition: one monoton range, one conditional batch per bucket.
        parts = split_by_partition(
            definition, messages, lambda: self.publisher.pick_partition(definition, self._rotation)
        )
        if not definition.options.fifo:
            noisy = self.fair.noisy(definition.id, messages)
            if any(noisy):
                definition, parts = await to_lane(self.queues, definition, parts, noisy)

        fifo = definition.options.fifo

        async def put(view: QueueDefinition, part: list[OutgoingMessage]) -> list[Sent]:
            rows = await self.publisher.send_rows(view, part)
            return [
                Sent(
                    monoton=r.monoton,
                    tag=r.tag,
                    # A duplicate's answer is the first send's message, wherever it is.
                    partition=view.partition if duplicate_of is None else duplicate_of,
                    sequence_number=(
                        sequence_number(
                            view.partition if duplicate_of is None else duplicate_of, r.monoton
                        )
                        if fifo
                        else None
                    ),
                    duplicate=duplicate_of is not None,
                )
                for r, duplicate_of in rows
            ]

        return await in_groups(definition, messages, parts, put)

    async def receive(
        self,
        account: str,
        queue: str,
        max_messages: int = 1,
        invisibility_s: int | None = None,
        wait_s: int = 0,
        *,
        attempt_id: str | None = None,
    ) -> list[Delivery]:
        """Up to ``max_messages``; with ``wait_s``, wait for the first one that long. On a
        FIFO queue, ``attempt_id`` (SQS's ReceiveRequestAttemptId) answers a retried receive
        within 5 minutes with the same deliveries."""
        definition = await self.queues.get(account, queue)
        if attempt_id is not None and definition.options.fifo:
            kept = await self.publisher.fifo.replay(definition.id, attempt_id)
            if kept is not None:
                return kept
            got = await self.receive(account, queue, max_messages, invisibility_s, wait_s)
            await self.publisher.fifo.keep(definition.id, attempt_id, got)
            return got
        if invisibility_s is None:
            invisibility_s = definition.options.visibility_timeout_seconds
        check_seconds("visibilityTimeoutSeconds", invisibility_s)
        invisibility_ms = invisibility_s * 1000

        async def receive() -> list[Delivery]:
            return await self._receive(definition, max_messages, invisibility_ms)

        if wait_s <= 0:
            return await receive()
        with self.long_poll_slots.hold(account) as may_wait:
            if not may_wait:  # this account's share of waiting receives, or all, are taken
                return await receive()
            partitions = definition.options.stored_partitions
            return await self.waiters.receive(
                definition.id, receive, wait_s, max_messages, partitions
            )

    async def _receive(
        self, definition: QueueDefinition, want: int, invisibility_ms: int
    ) -> list[Delivery]:
        async def one(view: QueueDefinition, wanted: int) -> list[Delivery]:
            return await self.reader.receive(view, wanted, invisibility_ms)

        return await receive_across(definition, want, self._rotation, one)

    async def ack_batch(
        self, account: str, queue: str, receipts: list[PopReceipt]
    ) -> list[EngineError | None]:
        return await by_partition(
            await self.queues.get(account, queue), receipts, receipt_partition, self.acker.ack_many
        )

    async def change_visibility(
        self, account: str, queue: str, changes: list[VisibilityChange]
    ) -> list[PopReceipt | EngineError]:
        return await by_partition(
            await self.queues.get(account, queue),
            changes,
            lambda change: change.receipt.partition,
            self.acker.change_many,
        )

    async def current_receipt(
        self, account: str, queue: str, receipt: PopReceipt, deliveries: int
    ) -> PopReceipt | None:
        """The receipt now of the delivery (the ``deliveries``-th) ``receipt`` was given
        for, None when that delivery is over (the SQS endpoint's receipt handles)."""
        definition = (await self.queues.get(account, queue)).in_partition(receipt.partition)
        return await self.acker.current(definition, receipt, deliveries)

    async def update_queue(
        self,
        account: str,
        queue: str,
        changes: dict[str, object] | Callable[[QueueOptions], dict[str, object]],
    ) -> QueueDefinition:
        """Change options (``QueueOptions`` field names) of an existing queue (v2 PATCH);
        the new definition. bucket_size cannot change. ``changes`` may be a function of the
        current options, applied within the compare-and-set (SQS's AddPermission)."""
        return await self.queues.update(account, queue, changes)

    async def peek(
        self, account: str, queue: str, limit: int, after: str | None = None
    ) -> tuple[list[PeekedMessage], str | None]:
        """Messages still in the queue after the cursor ``after``, in monoton order in each
        partition, the partitions merged by sent time; the next cursor (opaque)."""
        if not 1 <= limit <= MAX_PEEK:
            raise InvalidArgument(f"limit must be between 1 and {MAX_PEEK}")
        definition = await self.queues.get(account, queue)
        try:
            found, following = await peek_across(definition, limit, after, self.peeker.peek)
        except ValueError:
            raise InvalidArgument("after is not a cursor this queue gave") from None
        return [m for _, m in found], following

    async def purge(self, account: str, queue: str) -> int:
        """Drop every message put before the call; how many were dropped."""
        definition = await self.queues.get(account, queue, fresh=True)
        return sum(await asyncio.gather(*map(self.purger.purge, definition.partition_views())))

    async def start_redrive(
        self, account: str, queue: str, to: str | None, max_per_second: int | None
    ) -> RedriveTask:
        """Move the dead-lettered messages of ``queue`` back to ``to`` (default: its sources)."""
        per_second = DEFAULT_PER_SECOND if max_per_second is None else max_per_second
        if not 1 <= per_second <= MAX_PER_SECOND:
            raise InvalidArgument(f"maxPerSecond must be between 1 and {MAX_PER_SECOND}")
        if to == queue:
            raise InvalidArgument("to must name another queue than the one redriven")
        dlq = await self.queues.get(account, queue, fresh=True)
        target = None if to is None else await self.queues.get(account, to, fresh=True)
        return await self.redriver.start(dlq, target, per_second)

    async def redrive_status(self, account: str, queue: str, task_id: str) -> RedriveTask:
        return await self.redriver.status(await self.queues.get(account, queue), task_id)

    async def list_redrives(self, account: str, queue: str) -> list[RedriveTask]:
        """The redrive tasks of ``queue`` (kept a week), the latest started first."""
        return await self.redriver.tasks(await self.queues.get(account, queue))

    async def cancel_redrive(self, account: str, queue: str, task_id: str) -> RedriveTask:
        """Stop a running redrive at its next message (from any server)."""
        return await self.redriver.cancel(await self.queues.get(account, queue), task_id)

    async def retag_queue(
        self, account: str, queue: str, add: dict[str, str], remove: list[str]
    ) -> QueueDefinition:
        return await self.queues.retag(account, queue, add, remove)

    async def statistics(self, account: str, queue: str) -> Statistics:
        return await self.queue_statistics(await self.queues.get(account, queue))

    async def statistics_snapshot(self, account: str, queue: str) -> StatsSnapshot | None:
        """The pipeline's latest snapshot of this queue (None: none yet for this version)."""
        current = await self.queues.get(account, queue)
        snapshot = await self.ctx.store.read_stats_snapshot(account, queue)
        # A snapshot of a deleted predecessor of the same name says nothing about this queue.
        return snapshot if snapshot is not None and snapshot.queue == current.id else None

    # ------------------------------------------------ tenancy: accounts and queue directory

    def now(self) -> int:
        """The engine's clock (epoch ms): the time every lease and receipt is judged by."""
        return self.ctx.clock.now()

    async def create_account(self, name: str, keys: dict[str, str] | None = None) -> Account:
        return await self.accounts.create(name, keys)

    async def account(self, name: str) -> Account:
        return await self.accounts.get(name)

    async def account_for_auth(self, name: str) -> Account:
        """The account whose keys a request's credential is checked against (cached)."""
        return await self.accounts.get_for_auth(name)

    async def list_accounts(self) -> list[Account]:
        return await self.accounts.list()

    async def reseal_account_keys(self) -> tuple[int, int]:
        """(accounts, keys unreadable): every key re-sealed under the current key-encryption
        key (`cassieq secrets reseal-keys`)."""
        return await self.accounts.reseal_all()

    async def account_names(self) -> list[str]:
        """Every account's name, without opening its keys (metrics, background listings)."""
        return [a.name for a in await self.ctx.store.list_accounts()]

    async def delete_account(self, name: str) -> None:
        await self.accounts.delete(name)

    async def add_key(self, account: str, key_name: str) -> str:
        return await self.accounts.add_key(account, key_name)

    async def delete_key(self, account: str, key_name: str) -> None:
        await self.accounts.delete_key(account, key_name)

    async def queue(self, account: str, name: str, *, fresh: bool = False) -> QueueDefinition:
        """The queue's definition (QueueNotFound when there is none); ``fresh``: not from
        this server's short cache."""
        return await self.queues.get(account, name, fresh=fresh)

    async def find_queue(
        self, account: str, name: str, *, fresh: bool = False
    ) -> QueueDefinition | None:
        return await self.queues.find(account, name, fresh=fresh)

    async def list_queues(self, account: str) -> list[QueueDefinition]:
        return await self.queues.list(account)

    async def delete_queue(self, account: str, name: str) -> QueueDefinition:
        """Delete the queue (its version is gone at once; its rows go in the background)."""
        return await self.queues.delete(account, name)

    async def queue_statistics(self, queue: QueueDefinition) -> Statistics:
        """Summed over the queue's partitions."""
        views = queue.partition_views()
        return sum_statistics(await asyncio.gather(*map(self.statistics_reader.read, views)))

    async def console_session_secret(self) -> bytes:
        """The keyspace's random key of web-console sessions (shared by every server)."""
        return secret_bytes((await self.secrets.get_or_create(CONSOLE_SESSION_SECRET)).value)

    async def end_console_sessions(self) -> None:
        """A new console session key: every session signed with the old one ends."""
        await self.secrets.rotate(CONSOLE_SESSION_SECRET, grace_ms=0)

    async def receipt_secret(self) -> KeyspaceSecret:
        """The keyspace's own receipt secret (created by the first server that asks)."""
        return await self.secrets.get_or_create(RECEIPT_SECRET)

    # ------------------------------------------------ inspection (debug, console, metrics)

    async def inspect_pointers(self, queue: QueueDefinition) -> Pointers:
        """The pointers of ``queue``'s own partition (a definition: partition 0)."""
        return await self.inspector.pointers(queue)

    async def inspect_partition_pointers(self, queue: QueueDefinition) -> list[Pointers]:
        """The pointers of every partition of the queue, in partition order."""
        return list(await asyncio.gather(*map(self.inspector.pointers, queue.partition_views())))

    async def inspect_bucket(self, queue: QueueDefinition, bucket: int) -> BucketState:
        return await self.inspector.bucket(queue, bucket)

    async def inspect_buckets(
        self, queue: QueueDefinition, buckets: list[int]
    ) -> list[BucketState]:
        return await self.inspector.buckets(queue, buckets)

    async def inspect_message(self, queue: QueueDefinition, monoton: int) -> MessageRow | None:
        return await self.inspector.message(queue, monoton)

    def long_polls_waiting(self, account: str | None = None) -> int:
        """Receives waiting now on this server (of ``account``, or of all)."""
        return self.long_poll_slots.waiting(account)

    # ------------------------------------------------ the server's life

    def open(self) -> None:
        """Start what serves long polls (the app's start)."""
        self.waiters.open()

    async def release_waiters(self) -> None:
        """Answer every waiting receive now ([]) and take no more waits: shutdown begins."""
        await self.waiters.close()

    async def stop_redrives(self) -> None:
        """End this server's redrive tasks (they say "interrupted")."""
        await self.redriver.close()

    async def schema_status(self) -> SchemaStatus:
        """Readiness: whether the store answers and has this server's schema."""
        return await self.ctx.store.schema_status()

    async def settle(self) -> None:
        """Wait for the work gets leave running (seals, reader pointer moves and the reads
        of the sealed buckets for the invisibility side)."""
        await self.reader.settle()

    async def repair(self, account: str, queue: str) -> int | None:
        """One repair pass of every partition; the last partition's answer (the pointer)."""
        definition = await self.queues.get(account, queue, fresh=True)
        answers = [await self.repairer.run_once(view) for view in definition.partition_views()]
        return answers[-1]
