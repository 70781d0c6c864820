"""Domain values of the queue, in the queue's own words.

Times are integers: milliseconds since the Unix epoch (UTC), as given by the
engine's clock. The engine never reads the wall clock itself.
"""

from __future__ import annotations

import enum
import functools
from typing import Literal

import msgspec

from cassieq import wire_limits

# Re-exported: callers import them from here.
from cassieq.model_records import KeyspaceSecret as KeyspaceSecret
from cassieq.model_records import Lease as Lease
from cassieq.model_records import RedriveTask as RedriveTask
from cassieq.tokens import new_token

# Name rules, sizes, ids and cursors live in wire_limits; callers import them from here.
MAX_NAME_LENGTH = wire_limits.MAX_NAME_LENGTH
NAME_PATTERN = wire_limits.NAME_PATTERN
MAX_MESSAGE_BYTES = wire_limits.MAX_MESSAGE_BYTES
MAX_QUEUE_MESSAGE_BYTES = wire_limits.MAX_QUEUE_MESSAGE_BYTES
PEEK_CURSOR_PATTERN = wire_limits.PEEK_CURSOR_PATTERN
message_id = wire_limits.message_id
utf8_len = wire_limits.utf8_len
message_bytes = wire_limits.message_bytes
valid_name = wire_limits.valid_name
name_problem = wire_limits.name_problem


class AuthorizationLevel(enum.Enum):
    """v1 authorization levels and their short forms (wire contract)."""

    NONE = ("None", "n")
    READ_MESSAGE = ("ReadMessage", "r")
    PUT_MESSAGE = ("PutMessage", "p")
    UPDATE_MESSAGE = ("UpdateMessage", "u")
    ACK_MESSAGE = ("AckMessage", "a")
    GET_QUEUE_INFORMATION = ("GetQueueInformation", "g")
    CREATE_QUEUE = ("CreateQueue", "c")
    DELETE_QUEUE = ("DeleteQueue", "d")

    @property
    def wire_name(self) -> str:
        return self.value[0]

    @property
    def short_form(self) -> str:
        return self.value[1]


MAX_PARTITIONS = 256
"""The most partitions a queue can have (issue 35)."""


# omit_defaults: partition 0 encodes as before partitions existed (deletion jobs, snapshots).
class QueueId(msgspec.Struct, frozen=True, omit_defaults=True):
    """``account:queue:version`` (partition 0) or ``account:queue:version:partition``: the
    key of one partition's rows (its monoton, buckets and pointers). Deleting a queue bumps
    the version, so a re-created queue of the same name shares no rows with the old one.
    Partition 0's key is the queue's key from before partitions: a queue of one partition
    is stored exactly as it always was."""

    account: str
    queue: str
    version: int
    partition: int = 0

    def __str__(self) -> str:
        if self.partition:
            return f"{self.account}:{self.queue}:{self.version}:{self.partition}"
        return f"{self.account}:{self.queue}:{self.version}"

    @property
    def whole(self) -> QueueId:
        """The queue's id (partition 0's), whichever partition this is."""
        return QueueId(self.account, self.queue, self.version) if self.partition else self


# SQS DeduplicationScope: ids unique in the queue, or in their group (engine/life/fifo_dedup.py).
DeduplicationScope = Literal["queue", "messageGroup"]


class QueueOptions(msgspec.Struct, frozen=True, kw_only=True):
    bucket_size: int = 20
    max_delivery_count: int = 5
    repair_poll_seconds: int = 5
    finalize_seconds: int = 15
    delete_buckets_after_finalize: bool = True
    dlq_name: str | None = None
    strict_fifo: bool = True
    # v2 options (schema 0005). Rows written before it read as these defaults; v1 never
    # shows them, so a v1 queue is a v2 queue with the defaults.
    visibility_timeout_seconds: int = 30  # the default lease of a v2 receive
    delay_seconds: int = 0  # the default first-delivery delay of a v2 send
    message_retention_seconds: int = 14 * 24 * 3600  # older messages are never delivered
    max_message_bytes: int = MAX_QUEUE_MESSAGE_BYTES  # body and attributes, in bytes of UTF-8
    # SQS's (schema 0009); v1 and v2 never show them. The default wait of an SQS receive
    # that names none, and the RedriveAllowPolicy (JSON text, as given) kept to be shown.
    receive_wait_seconds: int = 0
    redrive_allow_policy: str | None = None
    # SQS's (schema 0011), kept and shown back, enforced by nothing: the access Policy (JSON
    # text) and the server-side-encryption settings (encryption at rest is Cassandra's).
    policy: str | None = None
    kms_master_key_id: str | None = None
    kms_data_key_reuse_period_seconds: int | None = None
    sqs_managed_sse_enabled: bool = False
    # Partitions (schema 0012, issue 35): each its own monoton, buckets, pointers and repair
    # lease. Only ever grows (a shrink would strand the messages of the partitions removed).
    partitions: int = 1
    # FIFO (issue 37; kept in the sqs_attributes cell under SQS's names, no schema change):
    # ordered message groups and deduplication (engine/life/fifo.py). Fixed at creation,
    # like the partitions of a FIFO queue (a group's partition is its key's hash).
    fifo: bool = False
    content_based_deduplication: bool = False
    deduplication_scope: DeduplicationScope = "queue"
    fifo_throughput_limit: Literal["perQueue", "perMessageGroupId"] = "perQueue"
    # Fair standard queues (issue 37 item 5): set once a server saw one message group send
    # most of a queue's messages; from then on such groups' messages go to the queue's
    # lane, a partition past its count, and receives take turns between the two.
    fair_lane: bool = False

    @property
    def stored_partitions(self) -> int:
        """The partitions that hold messages: the count, and the lane once it exists."""
        return self.partitions + 1 if self.fair_lane else self.partitions

    @property
    def retention_ms(self) -> int:
        return self.message_retention_seconds * 1000


QueueStatus = Literal["active", "deleted"]


# dict=True: a __dict__ beside the fields (never encoded, not compared), for the cached id.
class QueueDefinition(msgspec.Struct, frozen=True, kw_only=True, dict=True):
    account: str
    name: str
    version: int
    status: QueueStatus
    options: QueueOptions
    created_at: int
    # Bumped by every change of the options (schema 0007); an update is a compare-and-set
    # on it, so two racing updates cannot both apply.
    options_rev: int = 0
    # SQS queue tags (schema 0009); changed as the options are (options_rev bumped).
    tags: dict[str, str] = msgspec.field(default_factory=dict)
    # The last change of the options (schema 0009; 0: never changed since created_at).
    modified_at: int = 0

    @functools.cached_property
    def id(self) -> QueueId:
        # Cached: the engine asks for it several times per message (a new QueueId each
        # time was 4% of the in-process engine's time under batches of ten).
        return QueueId(self.account, self.name, self.version)

    def bucket_of(self, monoton: int) -> int:
        return monoton // self.options.bucket_size

    def in_partition(self, partition: int) -> QueueDefinition:
        """The definition as the engine's parts see one partition: ``id`` is the partition's
        (every part keys its state by ``id``: monotons, buckets, pointers, leases, caches)."""
        if partition == 0:
            return self
        # Kept beside the definition (servers cache definitions): a view per partition is
        # made once, not at every put and receive.
        views: dict[int, QueueDefinition] = self.__dict__.setdefault("_partition_views", {})
        view = views.get(partition)
        if view is None:
            view = views[partition] = msgspec.structs.replace(self)
            view.__dict__["id"] = QueueId(self.account, self.name, self.version, partition)
        return view

    @property
    def partition(self) -> int:
        return self.id.partition

    def partition_views(self) -> list[QueueDefinition]:
        return [self.in_partition(p) for p in range(self.options.stored_partitions)]


class Account(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    keys: dict[str, str]
    created_at: int


# gc=False (here and on BucketState): not tracked by the cyclic garbage collector. A
# server keeps tens of thousands of rows in its caches (bucket snapshots, hints), and every
# full collection walked each of them: with batches of ten, a quarter of the server's time
# went to the collector. A row cannot be part of a reference cycle (frozen; its fields are
# text, numbers and maps of text), which is what msgspec asks of such a type: reference
# counting alone frees it.
class MessageRow(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One message in its bucket partition. ``version`` is bumped by every change;
    every change is a compare-and-set on the version the changer read."""

    monoton: int
    message: str
    version: int
    delivery_count: int
    acked: bool
    next_visible_on: int
    tag: str
    created_at: int
    updated_at: int
    dead_lettered: bool = False
    republished_to: int | None = None  # repair moved this late write to that monoton
    acked_at: int | None = None
    change: str = ""  # token of the write that made this state (resolves unknown LWT outcomes)
    # Past its deliveries and kept, not delivered again, while its dead-letter queue does not
    # exist (looked at again at next_visible_on): never dropped.
    dlq_held: bool = False
    # Where its dead-letter copy goes: that queue's version and a monoton of it, recorded
    # before the copy is written, so a redone move writes the same row, not a second copy.
    dlq_version: int | None = None
    dlq_monoton: int | None = None
    # v2 (schema 0005); rows written before it read as these defaults. The attributes are
    # written with the message and never change after (a compare-and-set keeps them).
    attributes: dict[str, str] = msgspec.field(default_factory=dict)
    first_delivered_at: int | None = None
    # Schema 0010: the SQS DataType of each attribute (an attribute missing here is a
    # String). Written with the message, never changed, like the attributes.
    attribute_types: dict[str, str] = msgspec.field(default_factory=dict)
    # Retired unread because it outlived its queue's messageRetentionSeconds (schema 0007):
    # acked as far as the queue's machinery goes (its bucket can be finished and dropped),
    # counted as expired, not as acked.
    expired: bool = False
    # Schema 0008. Retired by a purge: acked, but counted apart from the acks.
    purged: bool = False
    # On a dead-letter copy: the queue it came from (written with the copy, never changed).
    dead_letter_source: str | None = None
    # Being redriven (dlq_version, dlq_monoton say where): the target queue's name.
    redrive_to: str | None = None
    # Schema 0013: its message group (FIFO queues: delivered in order within the group;
    # standard queues: kept and shown). Written with the message, never changed.
    group: str | None = None
    # Schema 0014: on a repair copy of a late write, its original's monoton (readers by
    # position read the original in place and skip the copy).
    republished_from: int | None = None

    def visible(self, now: int) -> bool:
        return not self.acked and self.next_visible_on <= now

    def retired(
        self, now: int, *, dead_lettered: bool = False, expired: bool = False, purged: bool = False
    ) -> MessageRow:
        """The next version of this row, out of its queue for good: acked as far as the
        pointers, repair and bucket deletion go; the flags say why, for the statistics
        (none: a consumer's ack, or a move that ended with a copy elsewhere)."""
        return msgspec.structs.replace(
            self,
            version=self.version + 1,
            acked=True,
            dead_lettered=dead_lettered,
            expired=expired,
            purged=purged,
            acked_at=now,
            updated_at=now,
            change=new_token(),
        )

    def past_retention(self, now: int, retention_ms: int) -> bool:
        """Still in the queue and older than the retention: never to be delivered again.

        The one place that decides it: the reader, the invisibility side, batch receives,
        repair and statistics all ask this. A message whose dead-letter move has begun
        (a target recorded) is left to finish that move, so it is never both expired and
        copied to its dead-letter queue.
        """
        return (
            not self.acked
            and self.republished_to is None
            and self.dlq_monoton is None
            and now - self.created_at >= retention_ms
        )

    @property
    def dead_letter_pending(self) -> bool:
        """Kept for its dead-letter queue, or being moved there (not yet retired)."""
        return not self.acked and (self.dlq_held or self.dlq_monoton is not None)

    def late_write(self, sealed_at: int | None) -> bool:
        """Written after the reader sealed its bucket and never delivered: repair's to move.

        A write stamped in the very millisecond of the seal counts as late: it may have
        landed after the seal, even after the invisibility pointer passed the bucket, and
        only repair would still look at it (a same-millisecond write the reader did see
        was delivered, so it is not a candidate).
        """
        return (
            not self.acked
            and self.delivery_count == 0
            and sealed_at is not None
            and self.created_at >= sealed_at
        )


class BucketState(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A bucket partition: its markers and its messages in monoton order.

    The markers are static columns of the partition rather than rows at reserved
    clustering keys, so that a writer's insert can be conditioned on the bucket not
    being finalized in the same lightweight transaction.
    """

    bucket: int
    sealed_at: int | None
    finalized_at: int | None
    messages: tuple[MessageRow, ...]

    @property
    def finalized(self) -> bool:
        return self.finalized_at is not None


class Counts(msgspec.Struct, frozen=True, kw_only=True):
    published: int = 0
    acked: int = 0
    dead_lettered: int = 0
    delivered: int = 0
    expired: int = 0
    purged: int = 0  # retired by a purge: neither acked nor dead-lettered

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            published=self.published + other.published,
            acked=self.acked + other.acked,
            dead_lettered=self.dead_lettered + other.dead_lettered,
            delivered=self.delivered + other.delivered,
            expired=self.expired + other.expired,
            purged=self.purged + other.purged,
        )

    @classmethod
    def of(cls, messages: tuple[MessageRow, ...] | list[MessageRow]) -> Counts:
        kept = [m for m in messages if m.republished_to is None]
        return cls(
            published=len(kept),
            acked=sum(
                1 for m in kept if m.acked and not (m.dead_lettered or m.expired or m.purged)
            ),
            dead_lettered=sum(1 for m in kept if m.dead_lettered),
            delivered=sum(m.delivery_count for m in kept),
            expired=sum(1 for m in kept if m.expired),
            purged=sum(1 for m in kept if m.purged),
        )


class InvisibilityState(msgspec.Struct, frozen=True, kw_only=True):
    """The invisibility pointer and what it has left behind.

    ``bucket`` is the oldest bucket that may hold a message needing (re)delivery.
    ``stragglers`` maps buckets behind it that still hold a long-invisible message to
    the time that message becomes visible: the pointer moves on without waiting for
    them (the original design's weakness), and gets look at them when they are due.
    ``summary`` counts the messages of every bucket the pointer has finished with, so
    statistics never re-read history. ``rev`` makes the whole row one compare-and-set.
    """

    bucket: int = 0
    rev: int = 0
    stragglers: dict[int, int] = msgspec.field(default_factory=dict)
    summary: Counts = msgspec.field(default_factory=Counts)


# omit_defaults: a receipt of partition 0 encodes as receipts did before partitions.
class PopReceipt(msgspec.Struct, frozen=True, array_like=True, omit_defaults=True):
    """Which delivery of which message a consumer holds. Signed by the API layer."""

    queue_version: int
    monoton: int
    version: int
    tag: str
    partition: int = 0


class Delivery(msgspec.Struct, frozen=True, kw_only=True):
    receipt: PopReceipt
    message: str
    delivery_count: int  # deliveries before this one (v1's count; v2 answers it + 1)
    attributes: dict[str, str] = msgspec.field(default_factory=dict)
    sent_at: int = 0  # the message's created_at
    first_delivered_at: int | None = None
    attribute_types: dict[str, str] = msgspec.field(default_factory=dict)  # SQS DataTypes
    # FIFO queues: the message's group and its sequence number (increasing within a group).
    group: str | None = None
    sequence_number: str | None = None

    @property
    def tag(self) -> str:
        return self.receipt.tag


class Statistics(msgspec.Struct, frozen=True, kw_only=True):
    size: int
    in_flight: int
    published: int
    delivered: int
    acked: int
    dead_lettered: int
    # Past maxDeliveryCount and still in the queue: held while the dead-letter queue does
    # not exist, or being moved there. Part of ``size`` (nothing is dropped).
    dead_letter_pending: int = 0
    # v2: visible now; delayed (never delivered, not yet visible); past retention (or purged)
    # and never to be delivered; the age of the oldest message still in the queue.
    visible: int = 0
    delayed: int = 0
    expired: int = 0
    oldest_message_age_s: float | None = None


class OutgoingMessage(msgspec.Struct, frozen=True, kw_only=True):
    """One message of a v2 send (a batch is a list of them)."""

    body: str
    # None: the queue's delaySeconds (engine/policy.py applies it).
    delay_ms: int | None = None
    attributes: dict[str, str] = msgspec.field(default_factory=dict)
    # SQS DataType by attribute name (missing: String); a Binary value is base64 in attributes.
    attribute_types: dict[str, str] = msgspec.field(default_factory=dict)
    # Bytes counted against maxMessageBytes when the API counts otherwise than body, names
    # and values in UTF-8 (SQS); None: counted that way.
    size: int | None = None
    # The partition's key (v2 partitionKey, SQS MessageGroupId): messages of one key go to
    # one partition of a partitioned queue. None: the server spreads them.
    partition_key: str | None = None
    # FIFO (issue 37): the message group (required on a FIFO queue; on a standard queue kept
    # and shown) and the deduplication id (None: the body's SHA-256 when the queue has
    # content-based deduplication, else none).
    group: str | None = None
    dedup_id: str | None = None


class Sent(msgspec.Struct, frozen=True, kw_only=True):
    monoton: int
    tag: str
    partition: int = 0
    # FIFO queues: increasing within the group; and whether this send was a duplicate (of
    # one sent within the deduplication interval: the answer is the first one's).
    sequence_number: str | None = None
    duplicate: bool = False


class VisibilityChange(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of a v2 visibility batch: a new lease (and maybe a new body)."""

    receipt: PopReceipt
    # None keeps the lease the delivery has (a new body only: `cassieq update --message`).
    invisibility_ms: int | None
    body: str | None = None


class PeekedMessage(msgspec.Struct, frozen=True, kw_only=True):
    monoton: int
    body: str
    attributes: dict[str, str]
    delivery_count: int  # deliveries made so far
    visible: bool
    sent_at: int
    partition: int = 0
    group: str | None = None
    sequence_number: str | None = None


class DeletionJob(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    queue: QueueId
    bucket_size: int
    created_at: int
    partitions: int = 1  # every partition's rows go (jobs from before partitions: one)


class StatsSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """A queue's statistics as the pipeline's stats job computed them at ``computed_at``.

    ``published = acked + dead_lettered + in_flight + backlog``. The counts cover the
    whole history (finished buckets through the invisibility summary); the histogram and
    the latencies cover the message rows still stored (finished buckets may be deleted).
    """

    queue: QueueId
    computed_at: int
    published: int
    acked: int
    dead_lettered: int
    in_flight: int
    backlog: int
    delivered: int
    delivery_count_histogram: dict[int, int]
    oldest_unacked_age_s: float | None
    ack_latency_p50_ms: float | None
    ack_latency_p95_ms: float | None
    ack_latency_p99_ms: float | None
    rows_scanned: int
