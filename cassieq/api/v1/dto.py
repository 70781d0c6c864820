"""Request and response bodies of the v1 wire contract (field names exactly as clients use)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, ClassVar

import msgspec

from cassieq.model import (
    MAX_NAME_LENGTH,
    NAME_PATTERN,
    Account,
    AuthorizationLevel,
    QueueDefinition,
    QueueOptions,
    StatsSnapshot,
)

Name = Annotated[str, msgspec.Meta(pattern=NAME_PATTERN, max_length=MAX_NAME_LENGTH)]
Seconds = Annotated[int, msgspec.Meta(ge=0, le=7 * 24 * 3600)]


class QueueCreateOptions(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """v1 create options. An unknown option is refused (422 naming it), not ignored: a
    misspelt option would otherwise silently keep its default. The wire contract lists every
    field CassieQ's clients send, and CassieQ's own Jackson binding had no ignore-unknown."""

    # Swagger UI's body (cassieq.api.docs.ExampleBodies): no dlqName, which must name a queue
    # that exists (a made-up one is a 422).
    EXAMPLE: ClassVar[dict[str, Any]] = {
        "queueName": "orders",
        "bucketSize": 20,
        "maxDeliveryCount": 5,
        "strictFifo": False,
    }

    queue_name: Name
    bucket_size: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 20
    max_delivery_count: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] = 5
    repair_worker_poll_seconds: Annotated[int, msgspec.Meta(ge=1, le=86_400)] = 5
    repair_worker_bucket_finalize_time_seconds: Annotated[int, msgspec.Meta(ge=1, le=86_400)] = 15
    delete_buckets_after_finalize: bool = True
    dlq_name: Name | None = None
    strict_fifo: bool = False  # CassieQ's default

    def options(self) -> QueueOptions:
        return QueueOptions(
            bucket_size=self.bucket_size,
            max_delivery_count=self.max_delivery_count,
            repair_poll_seconds=self.repair_worker_poll_seconds,
            finalize_seconds=self.repair_worker_bucket_finalize_time_seconds,
            delete_buckets_after_finalize=self.delete_buckets_after_finalize,
            dlq_name=self.dlq_name,
            strict_fifo=self.strict_fifo,
        )


# CassieQ shows version 0 for every newly created queue (also one re-created under a
# deleted queue's name). The engine's own incarnation number (QueueDefinition.version) tells
# a re-created queue from the deleted one and stays internal (it is in the pop receipt).
WIRE_VERSION = 0
# Names the per-queue UUID of queueStatsId: derived from the queue's internal identity, so it
# is stable for a queue and differs between incarnations, with nothing more to store.
_STATS_NAMESPACE = uuid.UUID("5b2f6a1e-8d0c-4c55-9f0e-6f7c1e2d3a4b")


class QueueDefinitionBody(msgspec.Struct, frozen=True, rename="camel"):
    """A queue definition with exactly the fields (and order) CassieQ answers."""

    account_name: str
    queue_name: str
    bucket_size: int
    max_delivery_count: int
    status: str
    version: int
    repair_worker_poll_frequency_seconds: int
    repair_worker_tombstoned_bucket_timeout_seconds: int
    delete_buckets_after_finalization: bool
    queue_stats_id: str
    dlq_name: str | None
    strict_fifo: bool
    id: str

    @classmethod
    def of(cls, q: QueueDefinition) -> QueueDefinitionBody:
        o = q.options
        wire_id = f"{q.account}:{q.name}_v{WIRE_VERSION}"
        stats_uuid = uuid.uuid5(_STATS_NAMESPACE, f"{q.account}:{q.name}:{q.version}")
        return cls(
            account_name=q.account,
            queue_name=q.name,
            bucket_size=o.bucket_size,
            max_delivery_count=o.max_delivery_count,
            status="Active" if q.status == "active" else "Deleted",
            version=WIRE_VERSION,
            repair_worker_poll_frequency_seconds=o.repair_poll_seconds,
            repair_worker_tombstoned_bucket_timeout_seconds=o.finalize_seconds,
            delete_buckets_after_finalization=o.delete_buckets_after_finalize,
            queue_stats_id=f"{stats_uuid}_{wire_id}",
            dlq_name=o.dlq_name,
            strict_fifo=o.strict_fifo,
            id=wire_id,
        )


class AckLatencyBody(msgspec.Struct, frozen=True):
    p50: float | None
    p95: float | None
    p99: float | None


class StatisticsDetailBody(msgspec.Struct, frozen=True, rename="camel"):
    """The pipeline's latest snapshot (`cassieq pipeline stats`), as of ``computedAt``."""

    computed_at: int
    published: int
    acked: int
    dead_lettered: int
    in_flight: int
    backlog: int
    delivered: int
    # JSON object keys are strings: delivery count -> number of messages.
    delivery_count_histogram: dict[str, int]
    oldest_unacked_age_seconds: float | None
    ack_latency_ms: AckLatencyBody
    rows_scanned: int

    @classmethod
    def of(cls, s: StatsSnapshot) -> StatisticsDetailBody:
        return cls(
            computed_at=s.computed_at,
            published=s.published,
            acked=s.acked,
            dead_lettered=s.dead_lettered,
            in_flight=s.in_flight,
            backlog=s.backlog,
            delivered=s.delivered,
            delivery_count_histogram={
                str(k): v for k, v in sorted(s.delivery_count_histogram.items())
            },
            oldest_unacked_age_seconds=s.oldest_unacked_age_s,
            ack_latency_ms=AckLatencyBody(
                p50=s.ack_latency_p50_ms, p95=s.ack_latency_p95_ms, p99=s.ack_latency_p99_ms
            ),
            rows_scanned=s.rows_scanned,
        )


class StatisticsSizeBody(msgspec.Struct, frozen=True):
    """v1 statistics: exactly {"size": n}, as CassieQ answers."""

    size: int


class GetMessageBody(msgspec.Struct, frozen=True, rename="camel"):
    pop_receipt: str
    message: str
    delivery_count: int
    message_tag: str


class UpdateMessageRequest(msgspec.Struct, frozen=True, rename="camel"):
    EXAMPLE: ClassVar[dict[str, Any]] = {"newInvisibilitySeconds": 30, "message": "Hello again"}

    # Absent means 0, visible again at once (CassieQ's default: a long primitive).
    new_invisibility_seconds: Seconds = 0
    message: str | None = None  # null or absent keeps the payload


class UpdateMessageBody(msgspec.Struct, frozen=True, rename="camel"):
    pop_receipt: str
    message_tag: str


class AccountBody(msgspec.Struct, frozen=True, rename="camel"):
    account_name: str
    keys: dict[str, str]

    @classmethod
    def of(cls, a: Account) -> AccountBody:
        return cls(account_name=a.name, keys=dict(sorted(a.keys.items())))


class AccountCreateRequest(msgspec.Struct, frozen=True, rename="camel"):
    account_name: Name


class KeyCreateRequest(msgspec.Struct, frozen=True, rename="camel"):
    EXAMPLE: ClassVar[dict[str, Any]] = {"keyName": "reporting"}

    key_name: Name


class PermissionRequest(msgspec.Struct, frozen=True, rename="camel"):
    # `cassieq dev`'s account and key; no start or end time: the grant ends 7 days after issue.
    EXAMPLE: ClassVar[dict[str, Any]] = {
        "accountName": "dev",
        "keyName": "primary",
        "levels": ["PutMessage", "ReadMessage", "AckMessage"],
        "queueName": "orders",
    }

    account_name: Name
    key_name: Name
    levels: Annotated[list[str], msgspec.Meta(min_length=1, max_length=16)]
    start_time: str | None = None
    end_time: str | None = None
    queue_name: Name | None = None


class PermissionBody(msgspec.Struct, frozen=True, rename="camel"):
    query_param: str


class LevelBody(msgspec.Struct, frozen=True, rename="camel"):
    level: str
    short_form: str

    @classmethod
    def of(cls, level: AuthorizationLevel) -> LevelBody:
        return cls(level=level.wire_name, short_form=level.short_form)
