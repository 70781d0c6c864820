"""Request and response bodies of the v2 queue routes (api-v2.md), camelCase on the wire.

Option bounds (SQS's where it has one): bucketSize 1-10000, maxDeliveryCount 1-1000000,
visibilityTimeoutSeconds 0-604800, delaySeconds 0-900, messageRetentionSeconds
60-1209600, maxMessageBytes 1-1048576 (SQS's 1 MiB), the repair settings 1-86400 seconds. An unknown
option name is refused (422 naming it), not ignored: a misspelt option would otherwise
silently keep its default.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec

from cassieq.api.v1.dto import Name, StatisticsDetailBody
from cassieq.api.v2.times import iso_time
from cassieq.engine.tenancy.queues import (
    MAX_BUCKET_SIZE,
    MAX_DELAY_S,
    MAX_RETENTION_S,
    MAX_VISIBILITY_TIMEOUT_S,
    MIN_RETENTION_S,
)
from cassieq.model import (
    MAX_PARTITIONS,
    MAX_QUEUE_MESSAGE_BYTES,
    PeekedMessage,
    QueueDefinition,
    QueueOptions,
    Statistics,
    StatsSnapshot,
    message_id,
)

_DEFAULTS = QueueOptions()

BucketSize = Annotated[int, msgspec.Meta(ge=1, le=MAX_BUCKET_SIZE)]
MaxDeliveryCount = Annotated[int, msgspec.Meta(ge=1, le=1_000_000)]
VisibilitySeconds = Annotated[int, msgspec.Meta(ge=0, le=MAX_VISIBILITY_TIMEOUT_S)]
DelaySeconds = Annotated[int, msgspec.Meta(ge=0, le=MAX_DELAY_S)]
RetentionSeconds = Annotated[int, msgspec.Meta(ge=MIN_RETENTION_S, le=MAX_RETENTION_S)]
MessageBytes = Annotated[int, msgspec.Meta(ge=1, le=MAX_QUEUE_MESSAGE_BYTES)]
RepairSeconds = Annotated[int, msgspec.Meta(ge=1, le=86_400)]
Partitions = Annotated[int, msgspec.Meta(ge=1, le=MAX_PARTITIONS)]
DeduplicationScope = Literal["queue", "messageGroup"]
FifoThroughputLimit = Literal["perQueue", "perMessageGroupId"]
# The options that mean something on a FIFO queue only (SQS refuses them on a standard one).
FIFO_ONLY = ("contentBasedDeduplication", "deduplicationScope", "fifoThroughputLimit")

# Wire name -> QueueOptions field, for the options whose names differ.
_FIELD_OF = {
    "dead_letter_queue": "dlq_name",
    "repair_worker_poll_seconds": "repair_poll_seconds",
    "repair_worker_bucket_finalize_time_seconds": "finalize_seconds",
}


class QueueOptionsBody(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """PUT: the queue's options; an absent one takes its default."""

    # No deadLetterQueue: it must name a queue that exists.
    EXAMPLE: ClassVar[dict[str, Any]] = {
        "visibilityTimeoutSeconds": 30,
        "maxDeliveryCount": 5,
        "messageRetentionSeconds": 345_600,
    }

    bucket_size: BucketSize = _DEFAULTS.bucket_size
    max_delivery_count: MaxDeliveryCount = _DEFAULTS.max_delivery_count
    dead_letter_queue: Name | None = None
    visibility_timeout_seconds: VisibilitySeconds = _DEFAULTS.visibility_timeout_seconds
    delay_seconds: DelaySeconds = _DEFAULTS.delay_seconds
    message_retention_seconds: RetentionSeconds = _DEFAULTS.message_retention_seconds
    max_message_bytes: MessageBytes = _DEFAULTS.max_message_bytes
    repair_worker_poll_seconds: RepairSeconds = _DEFAULTS.repair_poll_seconds
    repair_worker_bucket_finalize_time_seconds: RepairSeconds = _DEFAULTS.finalize_seconds
    delete_buckets_after_finalize: bool = _DEFAULTS.delete_buckets_after_finalize
    strict_fifo: bool = _DEFAULTS.strict_fifo
    # Absent: the server's default (CASSIEQ_DEFAULT_PARTITIONS, 1 unless set).
    partitions: Partitions | None = None
    # FIFO (issue 37; docs/guides/fifo.md): fixed at creation, as are a FIFO queue's
    # partitions. The other three apply to FIFO queues only.
    fifo: bool = _DEFAULTS.fifo
    content_based_deduplication: bool = _DEFAULTS.content_based_deduplication
    deduplication_scope: DeduplicationScope = _DEFAULTS.deduplication_scope
    fifo_throughput_limit: FifoThroughputLimit = _DEFAULTS.fifo_throughput_limit

    def options(self, default_partitions: int = 1) -> QueueOptions:
        fields = _as_options(msgspec.structs.asdict(self))
        fields["partitions"] = self.partitions or default_partitions
        return QueueOptions(**fields)

    def fifo_options_given(self) -> list[str]:
        """The FIFO-only options set away from their defaults (wire names)."""
        given = {
            "contentBasedDeduplication": self.content_based_deduplication
            != _DEFAULTS.content_based_deduplication,
            "deduplicationScope": self.deduplication_scope != _DEFAULTS.deduplication_scope,
            "fifoThroughputLimit": self.fifo_throughput_limit != _DEFAULTS.fifo_throughput_limit,
        }
        return [name for name in FIFO_ONLY if given[name]]


class QueueOptionsPatch(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """PATCH: only the options to change (deadLetterQueue: null removes the dead-letter queue).

    bucketSize is accepted only to say why it cannot change (422).
    """

    EXAMPLE: ClassVar[dict[str, Any]] = {"visibilityTimeoutSeconds": 60, "delaySeconds": 0}

    bucket_size: BucketSize | msgspec.UnsetType = msgspec.UNSET
    max_delivery_count: MaxDeliveryCount | msgspec.UnsetType = msgspec.UNSET
    dead_letter_queue: Name | msgspec.UnsetType | None = msgspec.UNSET
    visibility_timeout_seconds: VisibilitySeconds | msgspec.UnsetType = msgspec.UNSET
    delay_seconds: DelaySeconds | msgspec.UnsetType = msgspec.UNSET
    message_retention_seconds: RetentionSeconds | msgspec.UnsetType = msgspec.UNSET
    max_message_bytes: MessageBytes | msgspec.UnsetType = msgspec.UNSET
    repair_worker_poll_seconds: RepairSeconds | msgspec.UnsetType = msgspec.UNSET
    repair_worker_bucket_finalize_time_seconds: RepairSeconds | msgspec.UnsetType = msgspec.UNSET
    delete_buckets_after_finalize: bool | msgspec.UnsetType = msgspec.UNSET
    strict_fifo: bool | msgspec.UnsetType = msgspec.UNSET
    # Only grows (409 on fewer): the new partitions take puts once servers see the change.
    # A FIFO queue's are fixed (409).
    partitions: Partitions | msgspec.UnsetType = msgspec.UNSET
    # Fixed at creation: the same value is accepted, another is 409.
    fifo: bool | msgspec.UnsetType = msgspec.UNSET
    content_based_deduplication: bool | msgspec.UnsetType = msgspec.UNSET
    deduplication_scope: DeduplicationScope | msgspec.UnsetType = msgspec.UNSET
    fifo_throughput_limit: FifoThroughputLimit | msgspec.UnsetType = msgspec.UNSET

    def changes(self) -> dict[str, object]:
        """The options given, by their QueueOptions names."""
        given = {k: v for k, v in msgspec.structs.asdict(self).items() if v is not msgspec.UNSET}
        return _as_options(given)


def _as_options(fields: dict[str, Any]) -> dict[str, Any]:
    return {_FIELD_OF.get(k, k): v for k, v in fields.items()}


class QueueBody(msgspec.Struct, frozen=True, rename="camel"):
    """A queue with every option."""

    queue_name: str
    bucket_size: int
    max_delivery_count: int
    dead_letter_queue: str | None
    visibility_timeout_seconds: int
    delay_seconds: int
    message_retention_seconds: int
    max_message_bytes: int
    repair_worker_poll_seconds: int
    repair_worker_bucket_finalize_time_seconds: int
    delete_buckets_after_finalize: bool
    strict_fifo: bool
    created_at: str  # ISO-8601 UTC
    partitions: int
    fifo: bool
    content_based_deduplication: bool
    deduplication_scope: DeduplicationScope
    fifo_throughput_limit: FifoThroughputLimit

    @classmethod
    def of(cls, q: QueueDefinition) -> QueueBody:
        o = q.options
        return cls(
            queue_name=q.name,
            bucket_size=o.bucket_size,
            max_delivery_count=o.max_delivery_count,
            dead_letter_queue=o.dlq_name,
            visibility_timeout_seconds=o.visibility_timeout_seconds,
            delay_seconds=o.delay_seconds,
            message_retention_seconds=o.message_retention_seconds,
            max_message_bytes=o.max_message_bytes,
            repair_worker_poll_seconds=o.repair_poll_seconds,
            repair_worker_bucket_finalize_time_seconds=o.finalize_seconds,
            delete_buckets_after_finalize=o.delete_buckets_after_finalize,
            strict_fifo=o.strict_fifo,
            created_at=iso_time(q.created_at),
            partitions=o.partitions,
            fifo=o.fifo,
            content_based_deduplication=o.content_based_deduplication,
            deduplication_scope=o.deduplication_scope,
            fifo_throughput_limit=o.fifo_throughput_limit,
        )


class StatisticsV2Body(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """v2 statistics. ``size`` = visible + inFlight + delayed + deadLetterPending (within the
    bounded read: see cassieq/engine/stats.py)."""

    size: int
    visible: int
    in_flight: int
    delayed: int
    published: int
    delivered: int
    acked: int
    dead_lettered: int
    expired: int
    # Of the oldest message still in the queue; null when it is empty.
    oldest_message_age_seconds: float | None
    # Past maxDeliveryCount and still in the queue (part of size): held while its
    # dead-letter queue does not exist, or being moved there.
    dead_letter_pending: int
    # Only with ?detail=true, and only once the stats job has written a snapshot of this
    # queue: left out otherwise.
    detail: StatisticsDetailBody | None = None

    @classmethod
    def of(cls, s: Statistics, detail: StatsSnapshot | None = None) -> StatisticsV2Body:
        return cls(
            size=s.size,
            visible=s.visible,
            in_flight=s.in_flight,
            delayed=s.delayed,
            published=s.published,
            delivered=s.delivered,
            acked=s.acked,
            dead_lettered=s.dead_lettered,
            expired=s.expired,
            oldest_message_age_seconds=s.oldest_message_age_s,
            dead_letter_pending=s.dead_letter_pending,
            detail=None if detail is None else StatisticsDetailBody.of(detail),
        )


class PeekedMessageBody(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    # omit_defaults: groupId and sequenceNumber only when there is one (a standard
    # message without a group has the fields it always had).
    id: str  # the message's monoton, as a string (as send and receive give it)
    body: str
    attributes: dict[str, str]
    delivery_count: int  # deliveries so far
    visible: bool
    sent_at: str  # ISO-8601 UTC
    # Its message group, when it was sent with one; FIFO queues: its sequence number too.
    group_id: str | None = None
    sequence_number: str | None = None

    @classmethod
    def of(cls, m: PeekedMessage) -> PeekedMessageBody:
        return cls(
            id=message_id(m.partition, m.monoton),
            body=m.body,
            attributes=m.attributes,
            delivery_count=m.delivery_count,
            visible=m.visible,
            sent_at=iso_time(m.sent_at),
            group_id=m.group,
            sequence_number=m.sequence_number,
        )


class PeekBody(msgspec.Struct, frozen=True):
    messages: list[PeekedMessageBody]
    next: str | None  # the cursor of the next page (opaque), null when there is none
