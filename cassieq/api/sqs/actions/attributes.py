"""SQS queue attributes onto QueueOptions and back.

An SQS attribute is a string; each settable one maps onto one or two QueueOptions fields:
VisibilityTimeout, DelaySeconds, MessageRetentionPeriod, MaximumMessageSize,
ReceiveMessageWaitTimeSeconds, RedrivePolicy (deadLetterTargetArn + maxReceiveCount onto
dlq_name + max_delivery_count), RedriveAllowPolicy, Policy, KmsMasterKeyId,
KmsDataKeyReusePeriodSeconds and SqsManagedSseEnabled (checked, kept as given and shown
back; nothing enforces them: access is by account keys, encryption at rest is
Cassandra's), and a FIFO queue's FifoQueue, ContentBasedDeduplication, DeduplicationScope
and FifoThroughputLimit (fifo.py: its QueueOptions fields). Bounds are SQS's
(narrower than v2's where they differ: VisibilityTimeout at most 12 h, MaximumMessageSize
at least 1024); the engine's own validation (validate_options) runs after.

Where SQS's defaults differ from CassieQ's, a queue created through SQS takes SQS's
(SQS_DEFAULTS): a 4-day retention, and no delivery limit without a RedrivePolicy
(CassieQ's default maxDeliveryCount of 5 would drop a message SQS keeps redelivering).
"""

from __future__ import annotations

import json
from typing import Any

from cassieq.api.sqs import errors
from cassieq.api.sqs.actions import fifo
from cassieq.api.sqs.actions.common import name_of_arn, queue_arn
from cassieq.api.sqs.context import SqsCall
from cassieq.engine.tenancy.queues import (
    MAX_DELAY_S,
    MAX_RECEIVE_WAIT_S,
    MAX_RETENTION_S,
    MIN_RETENTION_S,
)
from cassieq.model import (
    MAX_PARTITIONS,
    MAX_QUEUE_MESSAGE_BYTES,
    QueueDefinition,
    QueueOptions,
    Statistics,
)

NO_DELIVERY_LIMIT = 1_000_000  # the largest maxDeliveryCount v2 allows: SQS's "unlimited"
SQS_DEFAULTS: dict[str, object] = {
    "message_retention_seconds": 4 * 24 * 3600,
    "max_delivery_count": NO_DELIVERY_LIMIT,
}
MAX_VISIBILITY_S = 12 * 3600
MIN_MESSAGE_BYTES = 1024
MAX_RECEIVE_COUNT = 1000

# Attribute -> (QueueOptions field, low, high).
_NUMBERS: dict[str, tuple[str, int, int]] = {
    "VisibilityTimeout": ("visibility_timeout_seconds", 0, MAX_VISIBILITY_S),
    "DelaySeconds": ("delay_seconds", 0, MAX_DELAY_S),
    "MessageRetentionPeriod": ("message_retention_seconds", MIN_RETENTION_S, MAX_RETENTION_S),
    "MaximumMessageSize": ("max_message_bytes", MIN_MESSAGE_BYTES, MAX_QUEUE_MESSAGE_BYTES),
    "ReceiveMessageWaitTimeSeconds": ("receive_wait_seconds", 0, MAX_RECEIVE_WAIT_S),
}
MAX_POLICY_BYTES = 8192  # SQS's quota on a queue policy
MAX_KMS_KEY_ID = 2048
KMS_REUSE_S = (60, 86400)
DEFAULT_KMS_REUSE_S = 300  # shown while a KMS key is set and no period was given, as SQS
_COUNTS = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)
READABLE = (
    *_COUNTS,
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "QueueArn",
    "VisibilityTimeout",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "DelaySeconds",
    "ReceiveMessageWaitTimeSeconds",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "Policy",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    *fifo.ATTRIBUTES,  # a FIFO queue's only
)
_PERMISSIONS = ("allowAll", "denyAll", "byQueue")
# cassieq's own (issue 35): a queue's partitions, 1-256, only growing. Not among "All" (what
# SQS answers to All stays SQS's); shown when asked for by name.
PARTITIONS = "CassieqPartitions"


def option_changes(
    call: SqsCall, attributes: dict[str, Any], *, fifo_queue: bool, creating: bool = False
) -> dict[str, object]:
    """The QueueOptions fields the given attributes set (a settable attribute only), on a
    FIFO queue or not (``fifo_queue``); FifoQueue itself only when ``creating``."""
    changes: dict[str, object] = {}
    for name, raw in attributes.items():
        value = str(raw)
        if name in _NUMBERS:
            field, low, high = _NUMBERS[name]
            changes[field] = _number(name, value, low, high)
        elif name == "RedrivePolicy":
            changes.update(_redrive_policy(call, value))
        elif name == "RedriveAllowPolicy":
            changes["redrive_allow_policy"] = _redrive_allow_policy(value)
        elif name == "Policy":
            changes["policy"] = _policy(value)
        elif name == "KmsMasterKeyId":
            changes["kms_master_key_id"] = _kms_key_id(value)
        elif name == "KmsDataKeyReusePeriodSeconds":
            changes["kms_data_key_reuse_period_seconds"] = _number(name, value, *KMS_REUSE_S)
        elif name == "SqsManagedSseEnabled":
            changes["sqs_managed_sse_enabled"] = _flag(name, value)
        elif name == PARTITIONS:
            changes["partitions"] = _number(name, value, 1, MAX_PARTITIONS)
        elif name in fifo.ATTRIBUTES:
            changes.update(fifo.option_change(name, value, fifo=fifo_queue, creating=creating))
        else:
            raise errors.invalid_attribute_name(name)
    return _one_encryption(changes)


def _one_encryption(changes: dict[str, object]) -> dict[str, object]:
    """SQS has one server-side encryption per queue: SSE-SQS and a KMS key are refused
    together; setting one turns the other off."""
    sse, kms = changes.get("sqs_managed_sse_enabled"), changes.get("kms_master_key_id")
    if sse is True and kms is not None:
        raise errors.invalid_attribute_value(
            "You can use one type of server-side encryption (SSE) at one time: either "
            "SqsManagedSseEnabled=true or a KmsMasterKeyId, not both."
        )
    if sse is True:
        return {**changes, "kms_master_key_id": None}
    if kms is not None:
        return {**changes, "sqs_managed_sse_enabled": False}
    return changes


def _flag(name: str, value: str) -> bool:
    if value.lower() not in ("true", "false"):
        raise errors.invalid_attribute_value(
            f"Invalid value for the parameter {name}: must be true or false."
        )
    return value.lower() == "true"


def _policy(value: str) -> str | None:
    if value == "":  # SQS's way of removing it
        return None
    if len(value.encode()) > MAX_POLICY_BYTES:
        raise errors.invalid_attribute_value(
            f"Invalid value for the parameter Policy: at most {MAX_POLICY_BYTES} bytes."
        )
    policy = _json_object("Policy", value)
    if not isinstance(policy.get("Statement"), list | dict):
        raise errors.invalid_attribute_value(
            "Invalid value for the parameter Policy: a policy has a Statement."
        )
    return value


def _kms_key_id(value: str) -> str | None:
    if value == "":  # removes it (the queue is then not KMS-encrypted)
        return None
    if len(value) > MAX_KMS_KEY_ID or not value.isprintable():
        raise errors.invalid_attribute_value("Invalid value for the parameter KmsMasterKeyId.")
    return value


def _number(name: str, value: str, low: int, high: int) -> int:
    if not (value.isascii() and value.isdigit()) or not low <= int(value) <= high:
        raise errors.invalid_attribute_value(
            f"Invalid value for the parameter {name}: must be an integer from {low} to {high}."
        )
    return int(value)


def _json_object(name: str, value: str) -> dict[str, Any]:
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise errors.invalid_attribute_value(f"Invalid value for the parameter {name}.")
    return parsed


def _redrive_policy(call: SqsCall, value: str) -> dict[str, object]:
    if value == "":  # SQS's way of removing it
        return {"dlq_name": None, "max_delivery_count": NO_DELIVERY_LIMIT}
    policy = _json_object("RedrivePolicy", value)
    arn, count = policy.get("deadLetterTargetArn"), policy.get("maxReceiveCount")
    if not isinstance(arn, str) or count is None:
        raise errors.invalid_attribute_value(
            "Value for parameter RedrivePolicy is invalid. Reason: Redrive policy does not "
            "contain mandatory attribute: deadLetterTargetArn and maxReceiveCount."
        )
    text = str(count)
    if not text.isdigit() or not 1 <= int(text) <= MAX_RECEIVE_COUNT:
        raise errors.invalid_attribute_value(
            "Value for parameter RedrivePolicy is invalid. Reason: Invalid value for "
            f"maxReceiveCount: {count}, valid values are from 1 to {MAX_RECEIVE_COUNT} both "
            "inclusive."
        )
    return {"dlq_name": name_of_arn(call, arn, "RedrivePolicy"), "max_delivery_count": int(text)}


def _redrive_allow_policy(value: str) -> str | None:
    if value == "":
        return None
    policy = _json_object("RedriveAllowPolicy", value)
    permission = policy.get("redrivePermission")
    sources = policy.get("sourceQueueArns")
    if permission not in _PERMISSIONS:
        raise errors.invalid_attribute_value(
            "Value for parameter RedriveAllowPolicy is invalid. Reason: redrivePermission "
            f"must be one of {', '.join(_PERMISSIONS)}."
        )
    if (permission == "byQueue") != (sources is not None) or (
        sources is not None
        and (not isinstance(sources, list) or not 1 <= len(sources) <= 10)  # SQS's bound
    ):
        raise errors.invalid_attribute_value(
            "Value for parameter RedriveAllowPolicy is invalid. Reason: sourceQueueArns "
            "(1 to 10 ARNs) goes with redrivePermission byQueue, and only with it."
        )
    return value


def sqs_options(changes: dict[str, object]) -> QueueOptions:
    """A new queue's options: SQS's defaults, then the attributes given."""
    return QueueOptions(**{**SQS_DEFAULTS, **changes})  # type: ignore[arg-type]


def attribute_names(requested: list[str]) -> list[str]:
    """The attributes a GetQueueAttributes asks for ("All": every one), in order."""
    names: list[str] = []
    for name in requested:
        if name == "All":
            names += [n for n in READABLE if n not in names]
        elif name in READABLE or name == PARTITIONS:
            if name not in names:
                names.append(name)
        else:
            raise errors.invalid_attribute_name(name)
    return names


def needs_statistics(names: list[str]) -> bool:
    return any(n in _COUNTS for n in names)


def render(
    call: SqsCall, queue: QueueDefinition, names: list[str], stats: Statistics | None
) -> dict[str, str]:
    o = queue.options
    shown: dict[str, str] = {}
    for name in names:
        if name in _NUMBERS:
            shown[name] = str(getattr(o, _NUMBERS[name][0]))
        elif name == "RedrivePolicy":
            if o.dlq_name is not None:
                shown[name] = json.dumps(
                    {
                        "deadLetterTargetArn": queue_arn(call, o.dlq_name),
                        "maxReceiveCount": o.max_delivery_count,
                    },
                    separators=(",", ":"),
                )
        elif name == "RedriveAllowPolicy":
            if o.redrive_allow_policy is not None:
                shown[name] = o.redrive_allow_policy
        elif name in _KEPT:
            if (value := _kept(o, name)) is not None:
                shown[name] = value
        elif name == "QueueArn":
            shown[name] = queue_arn(call, queue.name)
        elif name == PARTITIONS:
            shown[name] = str(o.partitions)
        elif name == "CreatedTimestamp":
            shown[name] = str(queue.created_at // 1000)
        elif name == "LastModifiedTimestamp":
            shown[name] = str((queue.modified_at or queue.created_at) // 1000)
        elif stats is not None:
            shown[name] = str(
                {
                    "ApproximateNumberOfMessages": stats.visible,
                    "ApproximateNumberOfMessagesNotVisible": stats.in_flight,
                    "ApproximateNumberOfMessagesDelayed": stats.delayed,
                }[name]
            )
    return shown


_KEPT = (
    "Policy",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    *fifo.ATTRIBUTES,
)


def _kept(o: QueueOptions, name: str) -> str | None:
    """A kept attribute as SQS shows it (None: not shown)."""
    if name in fifo.ATTRIBUTES:
        return fifo.render(o, name)
    if name == "Policy":
        return o.policy
    if name == "KmsMasterKeyId":
        return o.kms_master_key_id
    if name == "KmsDataKeyReusePeriodSeconds":
        period = o.kms_data_key_reuse_period_seconds
        if period is None and o.kms_master_key_id is not None:
            period = DEFAULT_KMS_REUSE_S
        return None if period is None else str(period)
    return "true" if o.sqs_managed_sse_enabled else "false"
