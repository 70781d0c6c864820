"""Row mapping: driver rows to the model's structs, and structs to statement parameters."""

from __future__ import annotations

from datetime import UTC
from operator import itemgetter
from typing import Any

from cassandra.query import UNSET_VALUE

from cassieq.model import (
    Account,
    BucketState,
    Counts,
    InvisibilityState,
    KeyspaceSecret,
    MessageRow,
    QueueDefinition,
    QueueOptions,
    RedriveTask,
)
from cassieq.store.cassandra.statements import MESSAGE_COLUMNS, NEW_MESSAGE_COLUMNS


def account_of(r: Any) -> Account:
    # accounts.created_at is a CQL timestamp (0001): the driver reads it as a datetime.
    created = r.created_at
    created_ms = 0 if created is None else round(created.replace(tzinfo=UTC).timestamp() * 1000)
    return Account(name=r.account_name, keys=dict(r.keys or {}), created_at=created_ms)


def secret_of(r: Any) -> KeyspaceSecret:
    return KeyspaceSecret(
        name=r.name,
        value=r.value,
        version=int(r.version or 1),
        previous=r.previous,
        previous_until=r.previous_until,
        created_at=int(r.created_at or 0),
    )


_DEFAULTS = QueueOptions()


def _or(value: Any, default: int) -> int:
    """A v2 column (schema 0005): null in rows written before it, read as the default."""
    return default if value is None else int(value)


# A queue row never holds a null cell. The background pass lists every account's queue
# rows, deleted ones too (a deleted name keeps its row and bumped version), and Cassandra
# counts each null cell of a listed row as a tombstone: with nulls for "no dead-letter
# queue", "no policy", "never modified" every deleted name cost four, and an account that
# churned 250 distinct names made the listing warn (docs/design/background-reads.md). An
# insert leaves such a column unset; a replace writes '' or 0 for "none", read back as
# None or 0, so clearing a value is an overwrite, not a tombstone. No tags are the map
# {'': ''} (a tag key is never empty): a map column written with no element is counted too.
NO_NAME = ""
NO_TAGS = {NO_NAME: NO_NAME}


def queue_of(r: Any) -> QueueDefinition:
    d = _DEFAULTS
    return QueueDefinition(
        account=r.account_name,
        name=r.queue_name,
        version=int(r.version),
        status=r.status,
        options=QueueOptions(
            bucket_size=r.bucket_size,
            max_delivery_count=r.max_delivery_count,
            repair_poll_seconds=r.repair_poll_seconds,
            finalize_seconds=r.finalize_seconds,
            delete_buckets_after_finalize=bool(r.delete_buckets_after_finalize),
            dlq_name=r.dlq_name or None,  # '': none (queue_replace_params)
            strict_fifo=bool(r.strict_fifo),
            visibility_timeout_seconds=_or(
                r.visibility_timeout_seconds, d.visibility_timeout_seconds
            ),
            delay_seconds=_or(r.delay_seconds, d.delay_seconds),
            message_retention_seconds=_or(r.message_retention_seconds, d.message_retention_seconds),
            max_message_bytes=_or(r.max_message_bytes, d.max_message_bytes),
            receive_wait_seconds=_or(r.receive_wait_seconds, d.receive_wait_seconds),
            redrive_allow_policy=r.redrive_allow_policy or None,
            **_sqs_attributes_of(r.sqs_attributes),
            partitions=_or(r.partitions, d.partitions),
        ),
        created_at=int(r.created_at),
        options_rev=int(r.options_rev or 0),  # null before schema 0007 and before a change
        tags={k: v for k, v in (r.tags or {}).items() if k != NO_NAME},
        modified_at=int(r.modified_at or 0),
    )


def queue_params(q: QueueDefinition) -> tuple[Any, ...]:
    o = q.options
    return (
        q.account, q.name, q.version, q.status, o.bucket_size, o.max_delivery_count,
        o.repair_poll_seconds, o.finalize_seconds, o.delete_buckets_after_finalize,
        _unset_if_none(o.dlq_name), o.strict_fifo, q.created_at, o.visibility_timeout_seconds,
        o.delay_seconds, o.message_retention_seconds, o.max_message_bytes,
        # Left unset until a first change: a queue never changed writes no cell for it.
        q.options_rev or UNSET_VALUE,
        # SQS's (schema 0009): a queue without them writes no cell on insert; a replace
        # writes them (queue_replace_params), so removing the last tag clears the cell.
        q.tags or UNSET_VALUE, _unset_if_none(o.redrive_allow_policy),
        o.receive_wait_seconds or UNSET_VALUE, q.modified_at or UNSET_VALUE,
        sqs_attributes(o) or UNSET_VALUE,
        # Left unset for one partition: a queue that never had more writes no cell.
        o.partitions if o.partitions != 1 else UNSET_VALUE,
    )  # fmt: skip


def queue_replace_params(q: QueueDefinition) -> tuple[Any, ...]:
    """queue_params for an UPDATE: the columns that may be empty written even so (a cleared
    value must overwrite the stored one), as '' or 0 rather than null (see NO_NAME)."""
    o = q.options
    p = queue_params(q)
    return (
        *p[:9], o.dlq_name or NO_NAME, *p[10:-6], q.tags or NO_TAGS,
        o.redrive_allow_policy or NO_NAME, o.receive_wait_seconds, q.modified_at,
        sqs_attributes(o) or NO_TAGS, o.partitions,
    )  # fmt: skip


def sqs_attributes(o: QueueOptions) -> dict[str, str]:
    """The SQS attributes kept as given (schema 0011), by SQS name; none: {}."""
    kept = {
        "Policy": o.policy,
        "KmsMasterKeyId": o.kms_master_key_id,
        "KmsDataKeyReusePeriodSeconds": (
            None
            if o.kms_data_key_reuse_period_seconds is None
            else str(o.kms_data_key_reuse_period_seconds)
        ),
        "SqsManagedSseEnabled": "true" if o.sqs_managed_sse_enabled else None,
        # FIFO (issue 37): kept here under SQS's names, so no schema change was needed.
        "FifoQueue": "true" if o.fifo else None,
        "CassieqFairLane": "true" if o.fair_lane else None,
        "ContentBasedDeduplication": "true" if o.content_based_deduplication else None,
        "DeduplicationScope": None if o.deduplication_scope == "queue" else o.deduplication_scope,
        "FifoThroughputLimit": (
            None if o.fifo_throughput_limit == "perQueue" else o.fifo_throughput_limit
        ),
    }
    return {k: v for k, v in kept.items() if v is not None}


def _sqs_attributes_of(cell: dict[str, str] | None) -> dict[str, Any]:
    kept = cell or {}
    period = kept.get("KmsDataKeyReusePeriodSeconds")
    return {
        "policy": kept.get("Policy"),
        "kms_master_key_id": kept.get("KmsMasterKeyId"),
        "kms_data_key_reuse_period_seconds": None if period is None else int(period),
        "sqs_managed_sse_enabled": kept.get("SqsManagedSseEnabled") == "true",
        "fifo": kept.get("FifoQueue") == "true",
        "fair_lane": kept.get("CassieqFairLane") == "true",
        "content_based_deduplication": kept.get("ContentBasedDeduplication") == "true",
        "deduplication_scope": kept.get("DeduplicationScope", "queue"),
        "fifo_throughput_limit": kept.get("FifoThroughputLimit", "perQueue"),
    }


def message_values(m: MessageRow) -> tuple[Any, ...]:
    """A new message row, in the order of statements.MESSAGE_COLUMNS."""
    # No attributes (no source): left unset rather than null, so the insert writes no
    # tombstone cell.
    return (
        m.monoton,
        *message_set_values(m),
        m.attributes or UNSET_VALUE,
        _unset_if_none(m.dead_letter_source),
        m.attribute_types or UNSET_VALUE,
        _unset_if_none(m.group),
        _unset_if_none(m.republished_from),
    )


def _columns(text: str) -> list[str]:
    return [c.strip() for c in text.split(",")]


# The shorter insert's columns, as positions in message_values (derived, so the two lists
# cannot drift apart: a column the shorter insert lacks is never dropped with a value).
_ALL = _columns(MESSAGE_COLUMNS)
_KEPT = tuple(_ALL.index(c) for c in _columns(NEW_MESSAGE_COLUMNS))
_LEFT_OUT = tuple(i for i in range(len(_ALL)) if i not in _KEPT)
# Picked in C: a put of ten messages picks ten times (a generator each was 5% of the
# in-process engine's time under batches of ten).
_kept = itemgetter(*_KEPT)
_left_out = itemgetter(*_LEFT_OUT)


def insert_values(m: MessageRow) -> tuple[bool, tuple[Any, ...]]:
    """A new row's values: (True, in the order of statements.NEW_MESSAGE_COLUMNS) when
    every column the shorter insert lacks would be left unset anyway (a new message with
    nothing but its body, attributes and first state: the same row stored, fewer values
    sent), else (False, message_values)."""
    values = message_values(m)
    if _left_out(values).count(UNSET_VALUE) == len(_LEFT_OUT):
        return True, _kept(values)
    return False, values


def _unset_if_none(value: Any) -> Any:
    return UNSET_VALUE if value is None else value


def message_take_values(m: MessageRow) -> tuple[Any, ...]:
    """What a take changes, in the order of statements.MESSAGE_TAKE's SET."""
    return (
        m.version, m.delivery_count, m.next_visible_on, m.updated_at, m.change,
        _unset_if_none(m.first_delivered_at),
    )  # fmt: skip


def message_retire_values(m: MessageRow) -> tuple[Any, ...]:
    """What a retirement changes, in the order of statements.MESSAGE_RETIRE's SET (acked is
    in the text). Its reasons are written only when true: false since the insert."""
    return (
        m.version, True if m.dead_lettered else UNSET_VALUE, True if m.expired else UNSET_VALUE,
        True if m.purged else UNSET_VALUE, _unset_if_none(m.acked_at), m.updated_at, m.change,
    )  # fmt: skip


def message_set_values(m: MessageRow) -> tuple[Any, ...]:
    """A message's changing state, in the order of statements.MESSAGE_SET (all but the
    monoton, in the key, and the attributes, which never change after the insert)."""
    # The dead-letter columns, republished_to, acked_at and first_delivered_at are left
    # unset, not written null, until they get a value (they are never cleared
    # afterwards): a null written by every put and take would be a tombstone cell per
    # column in every bucket read.
    dead_letter = m.dlq_held or m.dlq_monoton is not None
    return (
        m.message, m.version, m.delivery_count, m.acked,
        m.dead_lettered, _unset_if_none(m.republished_to), m.next_visible_on, m.tag,
        m.created_at, m.updated_at, _unset_if_none(m.acked_at), m.change,
        m.dlq_held if dead_letter else UNSET_VALUE,
        _unset_if_none(m.dlq_version),
        _unset_if_none(m.dlq_monoton),
        _unset_if_none(m.first_delivered_at),
        True if m.expired else UNSET_VALUE,  # set once, never cleared
        True if m.purged else UNSET_VALUE,  # never cleared once set
        # Written (maybe null) with every move's claim, which records its target anew.
        m.redrive_to if m.dlq_monoton is not None else UNSET_VALUE,
    )  # fmt: skip


def message_of(r: Any) -> MessageRow:
    return MessageRow(
        monoton=int(r.monoton),
        message=r.message,
        version=int(r.version),
        delivery_count=int(r.delivery_count),
        acked=bool(r.acked),
        dead_lettered=bool(r.dead_lettered),
        republished_to=r.republished_to,
        next_visible_on=int(r.next_visible_on),
        tag=r.tag,
        created_at=int(r.created_at),
        updated_at=int(r.updated_at),
        acked_at=r.acked_at,
        change=r.last_change or "",
        dlq_held=bool(r.dlq_held),  # null in rows written before 0006
        dlq_version=r.dlq_version,
        dlq_monoton=r.dlq_monoton,
        attributes=dict(r.attributes or {}),
        first_delivered_at=r.first_delivered_at,
        expired=bool(r.expired),  # null in rows written before 0007
        purged=bool(r.purged),  # null in rows written before 0008
        dead_letter_source=r.dead_letter_source,
        redrive_to=r.redrive_to,
        attribute_types=dict(r.attribute_types or {}),  # null before schema 0010
        group=r.group_id,  # null before schema 0013, and for a message of no group
        republished_from=r.republished_from,  # schema 0014: set on repair copies only
    )


def bucket_of(bucket: int, rows: list[Any]) -> BucketState:
    first = rows[0] if rows else None
    return BucketState(
        bucket=bucket,
        sealed_at=first.sealed_at if first is not None else None,
        finalized_at=first.finalized_at if first is not None else None,
        # A partition holding only markers reads as one row without a monoton.
        messages=tuple(
            message_of(r) for r in rows if r.monoton is not None and r.version is not None
        ),
    )


def invisibility_of(r: Any) -> InvisibilityState:
    return InvisibilityState(
        bucket=int(r.bucket or 0),
        rev=int(r.rev),
        stragglers={int(k): int(v) for k, v in (r.stragglers or {}).items()},
        summary=Counts(
            published=int(r.published or 0),
            acked=int(r.acked or 0),
            dead_lettered=int(r.dead_lettered or 0),
            delivered=int(r.delivered or 0),
            expired=int(r.expired or 0),
            purged=int(r.purged or 0),
        ),
    )


def redrive_task_of(r: Any) -> RedriveTask:
    return RedriveTask(
        id=r.task_id,
        status=r.status,
        moved=int(r.moved or 0),
        total=int(r.total or 0),
        failed=int(r.failed or 0),
        target=r.target,
        updated_at=int(r.updated_at or 0),
        started_at=int(r.started_at or 0),
        max_per_second=r.max_per_second,
        cancel_requested=bool(r.cancel_requested),
    )
