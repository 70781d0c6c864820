"""The Store protocol: every persistence primitive the engine uses.

Each primitive has one meaning in both implementations (Cassandra, memory).
Compare-and-set primitives return whether *this* call's change was applied (False
only when its condition is false); an implementation that cannot tell at first (a
timed-out lightweight transaction) must find out (read back at SERIAL) before it
answers, never guess, and try again while the condition still holds; when it cannot
settle the outcome it raises ``LwtUndecided``, never answers either way.
Absent rows read as their zero value (monoton 0, pointer 0, empty bucket), so no
row has to be created before first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import msgspec

from cassieq.model import (
    Account,
    BucketState,
    DeletionJob,
    InvisibilityState,
    KeyspaceSecret,
    MessageRow,
    QueueDefinition,
    QueueId,
    RedriveTask,
    StatsSnapshot,
)
from cassieq.model_subscriptions import SubscriptionDef
from cassieq.store.base_shared import SharedSubscriptionRows
from cassieq.store.batches import AckEntry
from cassieq.store.observer import LwtObserver

# "retention": on a queue that has (had) subscriptions, the first bucket its retention has
# not dropped yet, plus one (0: none set; issue 36).
PointerKind = Literal["reader", "repair", "retention"]


class StoreError(Exception):
    """A primitive could not give an answer (the engine lets it through; the API says 503)."""


class StoreUnavailable(StoreError):
    """Reads or plain writes kept failing (no quorum, timeouts) for every allowed try."""


class LwtUndecided(StoreError):
    """A compare-and-set that could not be settled either way, and so was not assumed.

    Either it kept timing out under contention (each time read back at SERIAL: not
    applied, its condition still holding) for every allowed try, or its outcome could not
    be read back at all (no quorum). Its change may still be applied by a later try.
    """

    def __init__(self, primitive: str, reason: str) -> None:
        super().__init__(f"{primitive}: {reason}")
        self.primitive = primitive


class DedupClaim(msgspec.Struct, frozen=True, kw_only=True):
    """A FIFO send's deduplication key, claimed for 5 minutes: the monoton (of
    ``partition``) its message was given, the message as the first send wrote it (so a
    retry can finish a send that died before writing it), the claim's own token, and
    whether the first send saw its message written."""

    key: str
    monoton: int
    partition: int
    tag: str
    created_at: int
    row: MessageRow
    written: bool = False


@dataclass(frozen=True)
class SchemaStatus:
    """What readiness says of a store: whether it answers, and whether its schema is the one
    this server was built with."""

    answers: str  # how the store answered, e.g. "answers" or "memory store"
    ok: bool  # the schema is complete
    detail: str


class Store(SharedSubscriptionRows, Protocol):
    def add_lwt_observer(self, observer: LwtObserver) -> None:
        """Tell ``observer`` the outcome of every LWT this store sends from now on, while
        the observer lives (held weakly: engines come and go on one store). The memory store
        decides every compare-and-set at once and reports none."""
        ...

    async def schema_status(self) -> SchemaStatus:
        """Whether every schema file this server was built with is applied; raises what the
        store raises when it does not answer."""
        ...

    # ----------------------------------------------------------------- accounts
    async def insert_account(self, account: Account) -> bool:
        """Create the account unless one of that name exists; True when created."""
        ...

    async def read_account(self, name: str) -> Account | None: ...

    async def list_accounts(self) -> list[Account]:
        """Every account, by name (on Cassandra read in pages: no response holds them all)."""
        ...

    async def delete_account(self, name: str, created_at: int) -> None:
        """Delete the account if it is still the one created at ``created_at`` (gone when
        this returns; a later account of the same name is left alone)."""
        ...

    async def mark_account_deleting(self, name: str, created_at: int, now: int) -> None:
        """Record that the account created at ``created_at`` is being deleted."""
        ...

    async def read_account_deletion(self, name: str) -> tuple[int, int] | None:
        """The deletion mark of the account of that name: (the ``created_at`` of the
        account being or last deleted, when the mark was last written); None: no mark."""
        ...

    async def unmark_account_deleting(self, name: str) -> None: ...

    async def add_key(self, account: str, key_name: str, key: str) -> bool:
        """Add a key unless the account lacks one or the name is taken; True when added."""
        ...

    async def remove_key(self, account: str, key_name: str) -> None: ...

    async def replace_key(self, account: str, key_name: str, expected: str, new: str) -> bool:
        """Store ``new`` as the key's value if it is still ``expected`` (a plaintext key
        re-stored encrypted: never a key deleted meanwhile brought back); True when replaced."""
        ...

    # ----------------------------------------------------------------- secrets
    async def read_secret(self, name: str) -> KeyspaceSecret | None: ...

    async def insert_secret(self, secret: KeyspaceSecret) -> bool:
        """Create the secret unless one of that name exists; True when created."""
        ...

    async def replace_secret(self, secret: KeyspaceSecret, expected_version: int) -> bool:
        """Overwrite the secret if its version is still ``expected_version``."""
        ...

    # ----------------------------------------------------------------- queues
    async def insert_queue(self, queue: QueueDefinition) -> QueueDefinition | None:
        """Create the queue row unless one exists; None when created, else the existing row."""
        ...

    async def replace_queue(
        self, queue: QueueDefinition, expected_version: int, expected_rev: int | None = None
    ) -> bool:
        """Overwrite the queue row if its version is still ``expected_version`` (and, with
        ``expected_rev``, its options_rev still that: an update of the options)."""
        ...

    async def read_queue(self, account: str, name: str) -> QueueDefinition | None: ...

    async def list_queues(self, account: str) -> list[QueueDefinition]:
        """Every queue row of the account, deleted ones too, by name (on Cassandra read in
        pages of a bounded number of rows)."""
        ...

    async def list_queues_page(
        self, account: str, after: str | None, limit: int
    ) -> list[QueueDefinition]:
        """Up to ``limit`` queue rows of the account whose names sort after ``after`` (from
        the first with None), by name, deleted ones too: one bounded read (the background
        pass walks a directory this way, a few pages a tick)."""
        ...

    # ----------------------------------------------------------------- monotons
    async def read_monoton(self, queue: QueueId) -> int:
        """The next monoton to hand out (0 for a new queue)."""
        ...

    async def cas_monoton(self, queue: QueueId, expected: int, new: int) -> tuple[bool, int]:
        """Move the monoton from ``expected`` to ``new``; return (applied, value now)."""
        ...

    # ----------------------------------------------------------------- buckets
    async def read_bucket(self, queue: QueueId, bucket: int) -> BucketState: ...

    async def read_message(
        self, queue: QueueId, bucket: int, monoton: int
    ) -> MessageRow | None: ...

    async def insert_messages(
        self, queue: QueueId, bucket: int, rows: list[MessageRow], now: int
    ) -> bool:
        """Write new messages into one bucket in one conditional step; False (and
        nothing written) when the bucket is already finalized. Idempotent: when the rows
        are already there (an earlier try of this write), True and nothing changes."""
        ...

    async def cas_message(
        self,
        queue: QueueId,
        bucket: int,
        expected_version: int,
        row: MessageRow,
        *,
        unsealed: bool = False,
    ) -> bool:
        """Replace a message's state if its version is still ``expected_version`` (and,
        with ``unsealed``, if the reader has not sealed its bucket yet). An ack time and a
        repair move's target are set once, never cleared: a row without them leaves the
        stored ones."""
        ...

    async def ack_message(
        self, queue: QueueId, bucket: int, monoton: int, version: int, tag: str, now: int
    ) -> bool:
        """Mark a message acked (version + 1) if it is still at ``version`` with ``tag``."""
        ...

    async def seal_bucket(self, queue: QueueId, bucket: int, now: int) -> int:
        """Mark that the reader left the bucket (first seal wins); return the seal time,
        which is stored when this returns (never an assumed one)."""
        ...

    async def finalize_bucket(self, queue: QueueId, bucket: int, now: int) -> None:
        """Close the bucket: no insert_messages into it succeeds afterwards (stored when
        this returns)."""
        ...

    async def delete_bucket(self, queue: QueueId, bucket: int) -> None:
        """Remove a finished bucket's messages. Its markers stay: a finalized bucket
        must stay closed to a writer that is very late."""
        ...

    # ----------------------------------------------------------------- pointers
    async def read_pointer(self, queue: QueueId, kind: PointerKind) -> int: ...

    async def cas_pointer(
        self, queue: QueueId, kind: PointerKind, expected: int, new: int
    ) -> bool: ...

    async def read_invisibility(self, queue: QueueId) -> InvisibilityState: ...

    async def cas_invisibility(
        self, queue: QueueId, expected_rev: int, new: InvisibilityState
    ) -> bool:
        """Replace the invisibility state if its rev is still ``expected_rev``
        (``new.rev`` must be ``expected_rev + 1``)."""
        ...

    # ----------------------------------------------------------------- leases
    async def acquire_lease(self, name: str, owner: str, now: int, ttl_ms: int) -> bool:
        """Take, renew or take over (when expired by ``now``) a lease; True when held. A
        lease is never released: it expires (the TTL clears the rows of owners long gone)."""
        ...

    # ----------------------------------------------------------------- deletion
    # The table of deletion jobs written by servers before the jobs queue (engine/
    # deletion_jobs.py): one partition every server listed whole on every pass, a row
    # tombstone per job done. Servers now only drain it, a page at a time, into the queue.
    async def add_deletion_job(self, job: DeletionJob) -> None:
        """Write a job into the old table (what a server of the earlier version does)."""
        ...

    async def list_deletion_jobs(self, after: QueueId | None, limit: int) -> list[DeletionJob]:
        """Up to ``limit`` jobs of the old table whose queue ids sort (as text) after
        ``after``'s (from the first with None), in that order: one bounded read."""
        ...

    async def remove_deletion_job(self, job: DeletionJob) -> None: ...

    async def delete_queue_state(self, queue: QueueId, buckets: int) -> None:
        """Drop a deleted queue version: bucket partitions 0..buckets-1 whole, its
        monoton, pointers and invisibility state."""
        ...

    # ----------------------------------------------------------------- statistics
    async def write_stats_snapshot(self, snapshot: StatsSnapshot) -> None:
        """Keep ``snapshot`` as its queue's latest (replacing any earlier one)."""
        ...

    async def read_stats_snapshot(self, account: str, queue: str) -> StatsSnapshot | None:
        """The latest snapshot of the queue name, of whichever version it described."""
        ...

    async def delete_stats_snapshot(self, account: str, queue: str) -> None: ...

    # ----------------------------------------------------------------- redrive tasks
    async def write_redrive_task(self, queue: QueueId, task: RedriveTask) -> None:
        """Keep the task's progress (a plain write: only the server running it writes it)."""
        ...

    async def read_redrive_task(self, queue: QueueId, task_id: str) -> RedriveTask | None: ...

    async def list_redrive_tasks(self, queue: QueueId) -> list[RedriveTask]:
        """Every stored task of this queue (kept a week), in no particular order."""
        ...

    async def cancel_redrive_task(self, queue: QueueId, task_id: str) -> None:
        """Mark the task to be cancelled (a plain write: the runner's progress writes
        never clear the mark, and the runner stops at its next message)."""
        ...

    # ----------------------------------------------------------------- v2 batches
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
        """``cas_message`` for several messages of one bucket: each entry is
        (expected_version, row) and is applied if the message is still at its expected
        version (and, with ``unsealed``, the bucket not sealed). Each entry is decided on
        its own (a stale one does not hold back the rest), except that entries of one
        ``units`` number go together or not at all; the answer says, in entry
        order, whether this call's change of each was applied. On Cassandra: one
        conditional batch on the bucket partition, sent again without the stale entries
        after a lost condition. Rows carry their own change token; their attributes are
        kept as stored (they never change after the insert). With ``keep_body`` the
        caller changes only the state of each message, a delivery or a retirement, and
        only that state is written (so a batch carries neither bodies nor the columns a
        take leaves alone): for an unacked row its version, delivery count, lease, update
        time, first delivery time (once set, kept) and change token; for an acked row its
        version, the ack, its reasons (dead-lettered, expired, purged: set, never
        cleared), its times and change token. Everything else is kept as stored.
        ValueError for two entries of one message or a row without a change token."""
        ...

    async def ack_messages(
        self, queue: QueueId, bucket: int, entries: list[AckEntry], now: int
    ) -> list[bool]:
        """``ack_message`` for several messages of one bucket, each entry (monoton,
        version, tag) decided on its own: True where this call acked it, False where the
        message is not at that version and tag (acked already, taken again, gone). One
        conditional batch per round, as ``cas_messages``. ValueError for two entries of
        one message."""
        ...

    # ----------------------------------------------------------------- FIFO (schema 0013)
    async def add_group_messages(
        self, queue: QueueId, group: str, monotons: list[int], now: int, ttl_s: int
    ) -> None:
        """Record unretired messages of a FIFO group (one plain write of the group's
        partition; kept ``ttl_s``)."""
        ...

    async def read_group_messages(self, queue: QueueId, group: str, limit: int) -> list[int]:
        """The group's recorded monotons, lowest first, at most ``limit``."""
        ...

    async def remove_group_messages(self, queue: QueueId, group: str, monotons: list[int]) -> None:
        """Remove records of a group (one write of the group's partition; absent ones are
        no matter)."""
        ...

    async def touch_group(self, queue: QueueId, group: str, now: int, ttl_s: int) -> None:
        """Record that the queue partition has (or had) messages of the group (schema 0016;
        a plain write, kept ``ttl_s``)."""
        ...

    async def list_groups(self, queue: QueueId, after: str, limit: int) -> list[str]:
        """The groups recorded for the queue partition whose ids sort after ``after`` ("":
        from the first), in id order, at most ``limit``."""
        ...

    async def read_dedup(self, queue: QueueId, key: str) -> DedupClaim | None:
        """The claim of a deduplication key, if one is kept (maybe older than 5 minutes on
        the memory store, which keeps no TTL: the engine judges the age)."""
        ...

    async def claim_dedup(self, claim: DedupClaim, queue: QueueId, ttl_s: int) -> DedupClaim | None:
        """Claim ``claim.key`` unless a claim of it is kept: None when this call's claim is
        stored, else the claim that is (a compare-and-set, resolved like every other)."""
        ...

    async def replace_dedup(
        self, queue: QueueId, expected_tag: str, claim: DedupClaim, ttl_s: int
    ) -> bool:
        """Replace the key's claim if it is still the one with ``expected_tag`` (a stale
        claim, or one whose message was never written)."""
        ...

    async def mark_dedup_written(self, queue: QueueId, key: str, ttl_s: int) -> None:
        """Record that the claim's message is written (a plain write)."""
        ...

    async def read_group_dedup(
        self, queue: QueueId, group: str, keys: Sequence[str]
    ) -> dict[str, DedupClaim]:
        """``read_dedup`` of a group's keys (schema 0017), by key; keys without one left out."""
        ...

    async def claim_group_dedup(
        self, queue: QueueId, group: str, claims: Sequence[DedupClaim], ttl_s: int
    ) -> dict[str, DedupClaim]:
        """``claim_dedup`` of a group's keys, by key the claims kept of those not claimed."""
        ...

    async def replace_group_dedup(
        self, queue: QueueId, group: str, expected_tag: str, claim: DedupClaim, ttl_s: int
    ) -> bool:
        """``replace_dedup`` of a group's key."""
        ...

    async def mark_group_dedup_written(
        self, queue: QueueId, group: str, keys: Sequence[str], ttl_s: int
    ) -> None:
        """``mark_dedup_written`` of a group's keys (one plain write)."""
        ...

    async def write_receive_attempt(
        self, queue: QueueId, attempt_id: str, now: int, answer: bytes, ttl_s: int
    ) -> None: ...

    async def read_receive_attempt(
        self, queue: QueueId, attempt_id: str
    ) -> tuple[int, bytes] | None:
        """(when it was written, the answer) of a receive attempt, if kept."""
        ...

    # ----------------------------------------------------------------- subscriptions (0014)
    async def insert_subscription(self, sub: SubscriptionDef) -> SubscriptionDef | None:
        """Create ``sub`` unless its name is taken in its queue: None when this call's row is
        stored, else the stored one (a compare-and-set, resolved by ``sub.change``)."""
        ...

    async def read_subscription(self, queue: QueueId, name: str) -> SubscriptionDef | None: ...

    async def read_subscriptions(self, queue: QueueId) -> list[SubscriptionDef]:
        """The queue's subscriptions (``queue``: its whole id), by name."""
        ...

    async def cas_subscription_position(
        self, queue: QueueId, name: str, expected_revision: int, position: str, change: str
    ) -> bool:
        """Store ``position`` (revision + 1, ``change`` its token) if the revision is still
        ``expected_revision``; False when it is not (or the subscription is gone)."""
        ...

    async def delete_subscription(self, queue: QueueId, name: str) -> None: ...

    async def delete_subscriptions(self, queue: QueueId) -> None:
        """Every subscription of a queue (its deletion)."""
        ...
