"""The Store in process memory: dev mode and fast property tests.

Same compare-and-set meaning as the Cassandra store. No method awaits between
reading and writing its state, so each one is atomic on the event loop, as a
lightweight transaction is atomic in Cassandra.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from cassieq.model import (
    Account,
    BucketState,
    DeletionJob,
    InvisibilityState,
    KeyspaceSecret,
    Lease,
    MessageRow,
    QueueDefinition,
    QueueId,
    RedriveTask,
    StatsSnapshot,
)
from cassieq.store.base import DedupClaim, PointerKind, SchemaStatus
from cassieq.store.batches import AckEntry, check_ack_entries, check_cas_entries
from cassieq.store.memory_fifo import MemoryFifo
from cassieq.store.memory_shared import MemorySharedSubscriptions
from cassieq.store.memory_subscriptions import MemorySubscriptions
from cassieq.store.observer import LwtObserver, LwtObservers


@dataclass
class _Bucket:
    sealed_at: int | None = None
    finalized_at: int | None = None
    messages: dict[int, MessageRow] = field(default_factory=dict)


class MemoryStore(MemoryFifo, MemorySubscriptions, MemorySharedSubscriptions):
    def __init__(self) -> None:
        # Kept for the protocol's sake: this store decides every compare-and-set at once,
        # under no contention but its own, and reports no LWT outcomes.
        self._lwt_observers = LwtObservers()
        self._accounts: dict[str, Account] = {}
        self._queues: dict[tuple[str, str], QueueDefinition] = {}
        self._monotons: dict[QueueId, int] = {}
        self._buckets: dict[tuple[QueueId, int], _Bucket] = {}
        self._pointers: dict[tuple[QueueId, PointerKind], int] = {}
        self._invisibility: dict[QueueId, InvisibilityState] = {}
        self._leases: dict[str, Lease] = {}
        self._jobs: dict[QueueId, DeletionJob] = {}
        self._stats: dict[tuple[str, str], StatsSnapshot] = {}
        self._secrets: dict[str, KeyspaceSecret] = {}
        self._deleting: dict[str, tuple[int, int]] = {}  # created_at, marked at
        self._redrive_tasks: dict[tuple[QueueId, str], RedriveTask] = {}
        # FIFO (schema 0013). No TTLs here: the engine judges a claim's or an attempt's age.
        self._groups: dict[tuple[QueueId, str], set[int]] = {}
        self._group_ids: dict[QueueId, set[str]] = {}  # schema 0016
        self._dedup: dict[tuple[QueueId, str], DedupClaim] = {}
        self._group_dedup: dict[tuple[QueueId, str, str], DedupClaim] = {}  # schema 0017
        self._attempts: dict[tuple[QueueId, str], tuple[int, bytes]] = {}
        self._subscriptions = {}  # schema 0014 (memory_subscriptions.py)
        self._sub_deliveries = {}  # schema 0015 (memory_shared.py)

    def add_lwt_observer(self, observer: LwtObserver) -> None:
        self._lwt_observers.add(observer)

    async def schema_status(self) -> SchemaStatus:
        # Memory has no schema to fall behind: always the one this server was built with.
        return SchemaStatus("memory store", ok=True, detail="memory store")

    # ----------------------------------------------------------------- accounts
    async def insert_account(self, account: Account) -> bool:
        if account.name in self._accounts:
            return False
        self._accounts[account.name] = account
        return True

    async def read_account(self, name: str) -> Account | None:
        return self._accounts.get(name)

    async def list_accounts(self) -> list[Account]:
        return sorted(self._accounts.values(), key=lambda a: a.name)

    async def delete_account(self, name: str, created_at: int) -> None:
        current = self._accounts.get(name)
        if current is not None and current.created_at == created_at:
            del self._accounts[name]

    async def mark_account_deleting(self, name: str, created_at: int, now: int) -> None:
        self._deleting[name] = (created_at, now)

    async def read_account_deletion(self, name: str) -> tuple[int, int] | None:
        return self._deleting.get(name)

    async def unmark_account_deleting(self, name: str) -> None:
        self._deleting.pop(name, None)

    async def add_key(self, account: str, key_name: str, key: str) -> bool:
        current = self._accounts.get(account)
        if current is None or key_name in current.keys:
            return False
        keys = {**current.keys, key_name: key}
        self._accounts[account] = Account(name=account, keys=keys, created_at=current.created_at)
        return True

    async def remove_key(self, account: str, key_name: str) -> None:
        current = self._accounts.get(account)
        if current is not None:
            keys = {k: v for k, v in current.keys.items() if k != key_name}
            self._accounts[account] = Account(
                name=account, keys=keys, created_at=current.created_at
            )

    async def replace_key(self, account: str, key_name: str, expected: str, new: str) -> bool:
        current = self._accounts.get(account)
        if current is None or current.keys.get(key_name) != expected:
            return False
        keys = {**current.keys, key_name: new}
        self._accounts[account] = Account(name=account, keys=keys, created_at=current.created_at)
        return True

    # ----------------------------------------------------------------- secrets
    async def read_secret(self, name: str) -> KeyspaceSecret | None:
        return self._secrets.get(name)

    async def insert_secret(self, secret: KeyspaceSecret) -> bool:
        if secret.name in self._secrets:
            return False
        self._secrets[secret.name] = secret
        return True

    async def replace_secret(self, secret: KeyspaceSecret, expected_version: int) -> bool:
        current = self._secrets.get(secret.name)
        if current is None or current.version != expected_version:
            return False
        self._secrets[secret.name] = secret
        return True

    # ----------------------------------------------------------------- queues
    async def insert_queue(self, queue: QueueDefinition) -> QueueDefinition | None:
        existing = self._queues.get((queue.account, queue.name))
        if existing is not None:
            return existing
        self._queues[(queue.account, queue.name)] = queue
        return None

    async def replace_queue(
        self, queue: QueueDefinition, expected_version: int, expected_rev: int | None = None
    ) -> bool:
        existing = self._queues.get((queue.account, queue.name))
        if existing is None or existing.version != expected_version:
            return False
        if expected_rev is not None and existing.options_rev != expected_rev:
            return False
        self._queues[(queue.account, queue.name)] = queue
        return True

    async def read_queue(self, account: str, name: str) -> QueueDefinition | None:
        return self._queues.get((account, name))

    async def list_queues(self, account: str) -> list[QueueDefinition]:
        return sorted(
            (q for (a, _), q in self._queues.items() if a == account), key=lambda q: q.name
        )

    async def list_queues_page(
        self, account: str, after: str | None, limit: int
    ) -> list[QueueDefinition]:
        rows = await self.list_queues(account)
        return [q for q in rows if after is None or q.name > after][:limit]

    # ----------------------------------------------------------------- monotons
    async def read_monoton(self, queue: QueueId) -> int:
        return self._monotons.get(queue, 0)

    async def cas_monoton(self, queue: QueueId, expected: int, new: int) -> tuple[bool, int]:
        current = self._monotons.get(queue, 0)
        if current != expected:
            return False, current
        self._monotons[queue] = new
        return True, new

    # ----------------------------------------------------------------- buckets
    async def read_bucket(self, queue: QueueId, bucket: int) -> BucketState:
        b = self._buckets.get((queue, bucket))
        if b is None:
            return BucketState(bucket=bucket, sealed_at=None, finalized_at=None, messages=())
        return BucketState(
            bucket=bucket,
            sealed_at=b.sealed_at,
            finalized_at=b.finalized_at,
            messages=tuple(b.messages[m] for m in sorted(b.messages)),
        )

    async def read_message(self, queue: QueueId, bucket: int, monoton: int) -> MessageRow | None:
        b = self._buckets.get((queue, bucket))
        return None if b is None else b.messages.get(monoton)

    async def insert_messages(
        self, queue: QueueId, bucket: int, rows: list[MessageRow], now: int
    ) -> bool:
        b = self._buckets.setdefault((queue, bucket), _Bucket())
        if rows[0].monoton in b.messages:
            return True  # a second try of the same write (monotons are never reused)
        if b.finalized_at is not None:
            return False
        for row in rows:
            b.messages[row.monoton] = row
        return True

    async def cas_message(
        self,
        queue: QueueId,
        bucket: int,
        expected_version: int,
        row: MessageRow,
        *,
        unsealed: bool = False,
    ) -> bool:
        return self._cas(queue, bucket, expected_version, row, unsealed=unsealed, keep_body=False)

    def _cas_holds(
        self, queue: QueueId, bucket: int, expected_version: int, row: MessageRow, *, unsealed: bool
    ) -> bool:
        b = self._buckets.get((queue, bucket))
        current = None if b is None else b.messages.get(row.monoton)
        if b is None or current is None or current.version != expected_version:
            return False
        return not (unsealed and b.sealed_at is not None)

    def _cas(
        self,
        queue: QueueId,
        bucket: int,
        expected_version: int,
        row: MessageRow,
        *,
        unsealed: bool,
        keep_body: bool,
    ) -> bool:
        if not self._cas_holds(queue, bucket, expected_version, row, unsealed=unsealed):
            return False
        b = self._buckets[(queue, bucket)]
        current = b.messages[row.monoton]
        if keep_body:
            b.messages[row.monoton] = _state_change(current, row)
            return True
        # The attributes (and their types) and the dead-letter source are kept as stored,
        # as the Cassandra update leaves them; so are an ack's time and a repair move's
        # target, which are set once (a row without them does not clear them).
        b.messages[row.monoton] = msgspec.structs.replace(
            row,
            attributes=current.attributes,
            attribute_types=current.attribute_types,
            dead_letter_source=current.dead_letter_source,
            acked_at=_set_once(current.acked_at, row.acked_at),
            republished_to=_set_once(current.republished_to, row.republished_to),
        )
        return True

    async def ack_message(
        self, queue: QueueId, bucket: int, monoton: int, version: int, tag: str, now: int
    ) -> bool:
        b = self._buckets.get((queue, bucket))
        row = None if b is None else b.messages.get(monoton)
        if b is None or row is None or row.version != version or row.tag != tag:
            return False
        b.messages[monoton] = msgspec.structs.replace(
            row, version=version + 1, acked=True, acked_at=now, updated_at=now
        )
        return True

    async def seal_bucket(self, queue: QueueId, bucket: int, now: int) -> int:
        b = self._buckets.setdefault((queue, bucket), _Bucket())
        if b.sealed_at is None:
            b.sealed_at = now
        return b.sealed_at

    async def finalize_bucket(self, queue: QueueId, bucket: int, now: int) -> None:
        b = self._buckets.setdefault((queue, bucket), _Bucket())
        if b.finalized_at is None:
            b.finalized_at = now

    async def delete_bucket(self, queue: QueueId, bucket: int) -> None:
        # The markers stay (as in Cassandra): a finalized bucket must stay closed to writers.
        b = self._buckets.get((queue, bucket))
        if b is not None:
            b.messages.clear()

    # ----------------------------------------------------------------- pointers
    async def read_pointer(self, queue: QueueId, kind: PointerKind) -> int:
        return self._pointers.get((queue, kind), 0)

    async def cas_pointer(self, queue: QueueId, kind: PointerKind, expected: int, new: int) -> bool:
        if self._pointers.get((queue, kind), 0) != expected:
            return False
        self._pointers[(queue, kind)] = new
        return True

    async def read_invisibility(self, queue: QueueId) -> InvisibilityState:
        return self._invisibility.get(queue) or InvisibilityState()

    async def cas_invisibility(
        self, queue: QueueId, expected_rev: int, new: InvisibilityState
    ) -> bool:
        current = self._invisibility.get(queue) or InvisibilityState()
        if current.rev != expected_rev:
            return False
        self._invisibility[queue] = new
        return True

    # ----------------------------------------------------------------- leases
    async def acquire_lease(self, name: str, owner: str, now: int, ttl_ms: int) -> bool:
        current = self._leases.get(name)
        if current is None or current.owner == owner or current.expires_at <= now:
            self._leases[name] = Lease(name=name, owner=owner, expires_at=now + ttl_ms)
            return True
        return False

    # ----------------------------------------------------------------- deletion
    async def add_deletion_job(self, job: DeletionJob) -> None:
        self._jobs[job.queue] = job

    async def list_deletion_jobs(self, after: QueueId | None, limit: int) -> list[DeletionJob]:
        # In the order of the Cassandra table's clustering key: the queue id as text.
        jobs = sorted(self._jobs.values(), key=lambda j: str(j.queue))
        return [j for j in jobs if after is None or str(j.queue) > str(after)][:limit]

    async def remove_deletion_job(self, job: DeletionJob) -> None:
        self._jobs.pop(job.queue, None)

    async def delete_queue_state(self, queue: QueueId, buckets: int) -> None:
        for key in [k for k in self._buckets if k[0] == queue and k[1] < buckets]:
            del self._buckets[key]
        self._monotons.pop(queue, None)
        self._invisibility.pop(queue, None)
        self._pointers.pop((queue, "reader"), None)
        self._pointers.pop((queue, "repair"), None)
        self._pointers.pop((queue, "retention"), None)
        for group_key in [g for g in self._groups if g[0] == queue]:  # Cassandra's: a TTL
            del self._groups[group_key]

    # ----------------------------------------------------------------- statistics
    async def write_stats_snapshot(self, snapshot: StatsSnapshot) -> None:
        self._stats[(snapshot.queue.account, snapshot.queue.queue)] = snapshot

    async def read_stats_snapshot(self, account: str, queue: str) -> StatsSnapshot | None:
        return self._stats.get((account, queue))

    async def delete_stats_snapshot(self, account: str, queue: str) -> None:
        self._stats.pop((account, queue), None)

    # ----------------------------------------------------------------- redrive tasks
    async def write_redrive_task(self, queue: QueueId, task: RedriveTask) -> None:
        # As the Cassandra store: a progress write never clears a cancel request.
        held = self._redrive_tasks.get((queue, task.id))
        cancel = task.cancel_requested or (held is not None and held.cancel_requested)
        self._redrive_tasks[(queue, task.id)] = msgspec.structs.replace(
            task, cancel_requested=cancel
        )

    async def read_redrive_task(self, queue: QueueId, task_id: str) -> RedriveTask | None:
        return self._redrive_tasks.get((queue, task_id))

    async def list_redrive_tasks(self, queue: QueueId) -> list[RedriveTask]:
        return [t for (q, _), t in self._redrive_tasks.items() if q == queue]

    async def cancel_redrive_task(self, queue: QueueId, task_id: str) -> None:
        held = self._redrive_tasks.get((queue, task_id))
        if held is not None:
            self._redrive_tasks[(queue, task_id)] = msgspec.structs.replace(
                held, cancel_requested=True
            )

    # ----------------------------------------------------------------- v2 batches
    # Each entry is decided on its own, as the Cassandra store's rounds decide them: an
    # entry whose condition held is applied, whatever the other entries' conditions. The
    # awaited primitives never suspend, so the whole batch is still one atomic step.
    async def cas_messages(
        self,
        queue: QueueId,
        bucket: int,
        entries: list[tuple[int, MessageRow]],
        *,
        unsealed: bool = False,
        keep_body: bool = False,
        units: list[int] | None = None,
    ) -> list[bool]:
        check_cas_entries(entries, units)
        if units is not None:
            # A unit goes only whole: its entries whose condition fails take the rest out.
            lost = {
                unit
                for unit, (expected, row) in zip(units, entries, strict=True)
                if not self._cas_holds(queue, bucket, expected, row, unsealed=unsealed)
            }
            return [
                unit not in lost
                and self._cas(queue, bucket, expected, row, unsealed=unsealed, keep_body=keep_body)
                for unit, (expected, row) in zip(units, entries, strict=True)
            ]
        return [
            self._cas(queue, bucket, expected, row, unsealed=unsealed, keep_body=keep_body)
            for expected, row in entries
        ]

    async def ack_messages(
        self, queue: QueueId, bucket: int, entries: list[AckEntry], now: int
    ) -> list[bool]:
        check_ack_entries(entries)
        return [
            await self.ack_message(queue, bucket, monoton, version, tag, now)
            for monoton, version, tag in entries
        ]


def _state_change(current: MessageRow, row: MessageRow) -> MessageRow:
    """``current`` changed as a ``keep_body`` write of ``row`` changes it: an acked row
    (a retirement) brings its version, the ack with its reasons and times, and its change
    token; an unacked one (a take) its version, deliveries, lease, update and first
    delivery times and change token. Nothing else, as the Cassandra store's shorter
    updates (statements.MESSAGE_TAKE and MESSAGE_RETIRE) write nothing else."""
    if row.acked:
        return msgspec.structs.replace(
            current,
            version=row.version,
            acked=True,
            dead_lettered=current.dead_lettered or row.dead_lettered,
            expired=current.expired or row.expired,
            purged=current.purged or row.purged,
            acked_at=_set_once(current.acked_at, row.acked_at),
            updated_at=row.updated_at,
            change=row.change,
        )
    return msgspec.structs.replace(
        current,
        version=row.version,
        delivery_count=row.delivery_count,
        next_visible_on=row.next_visible_on,
        updated_at=row.updated_at,
        change=row.change,
        first_delivered_at=_set_once(current.first_delivered_at, row.first_delivered_at),
    )


def _set_once(stored: int | None, written: int | None) -> int | None:
    """A column set once and never cleared: a write without a value leaves the stored one
    (the Cassandra store leaves it unset)."""
    return stored if written is None else written
