"""SQS FIFO queues (issue 37) onto the engine's: names, queue attributes, and a message's
MessageGroupId, MessageDeduplicationId and per-message DelaySeconds, with SQS's errors.

The engine orders each message group, suppresses a duplicate sent within 5 minutes and
numbers the messages (QueueOptions.fifo and the rest, OutgoingMessage.group/dedup_id);
this module only says what SQS accepts and how it refuses the rest:

- A FIFO queue's name ends in ``.fifo`` (counted in the 80 characters) and comes with
  ``FifoQueue=true``; either one alone is InvalidParameterValue.
- ``FifoQueue`` is given on CreateQueue only (SetQueueAttributes: InvalidAttributeName,
  as SQS: a queue's type never changes). ``ContentBasedDeduplication``,
  ``DeduplicationScope`` and ``FifoThroughputLimit`` belong to FIFO queues (on a standard
  queue InvalidAttributeName, worded as SQS words each); ``perMessageGroupId`` needs
  ``DeduplicationScope=messageGroup`` (InvalidAttributeValue).
- A send to a FIFO queue needs MessageGroupId (MissingParameter) and, without
  ContentBasedDeduplication, MessageDeduplicationId; a per-message DelaySeconds, even 0, is
  refused; a MessageDeduplicationId sent to a standard queue too. Ids are 1-128 characters
  of letters, digits and ASCII punctuation.
"""

from __future__ import annotations

import re
from typing import Any

from cassieq.api.sqs import errors
from cassieq.model import QueueOptions

FIFO_SUFFIX = ".fifo"
MAX_NAME = 80
STANDARD_NAME = re.compile(r"[A-Za-z0-9_-]{1,80}")
STANDARD_NAME_RULE = (
    "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
)
FIFO_NAME_RULE = (
    "The name of a FIFO queue can only include alphanumeric characters, hyphens, or "
    "underscores, must end with .fifo suffix and be 1 to 80 in length."
)
# SQS's rule for MessageGroupId, MessageDeduplicationId and ReceiveRequestAttemptId:
# alphanumerics and ASCII punctuation, 1 to 128 of them (every printable ASCII but space).
_ID = re.compile(r"[!-~]{1,128}")

FIFO_QUEUE = "FifoQueue"
CONTENT_BASED = "ContentBasedDeduplication"
SCOPE = "DeduplicationScope"
THROUGHPUT = "FifoThroughputLimit"
# Shown by GetQueueAttributes for a FIFO queue only (a standard queue has none of them).
ATTRIBUTES = (FIFO_QUEUE, CONTENT_BASED, SCOPE, THROUGHPUT)
_CHOICES: dict[str, tuple[str, tuple[str, ...]]] = {
    SCOPE: ("deduplication_scope", ("messageGroup", "queue")),
    THROUGHPUT: ("fifo_throughput_limit", ("perQueue", "perMessageGroupId")),
}


# --- queues -------------------------------------------------------------------------------


def requested(attributes: dict[str, Any]) -> bool:
    """Whether a CreateQueue asks for a FIFO queue (its FifoQueue attribute)."""
    value = attributes.get(FIFO_QUEUE)
    return value is not None and _flag(FIFO_QUEUE, str(value))


def check_name(name: str, fifo: bool) -> None:
    """SQS's name rules: a FIFO queue's ends in .fifo, a standard queue's has no '.'."""
    if fifo:
        base = name.removesuffix(FIFO_SUFFIX)
        if base == name or len(name) > MAX_NAME or not STANDARD_NAME.fullmatch(base):
            raise errors.invalid_parameter_value(FIFO_NAME_RULE)
    elif not STANDARD_NAME.fullmatch(name):
        # A '.fifo' name without FifoQueue=true is refused as any name with a '.', as SQS.
        raise errors.invalid_parameter_value(STANDARD_NAME_RULE)


def option_change(name: str, value: str, *, fifo: bool, creating: bool) -> dict[str, object]:
    """The QueueOptions field one FIFO attribute (a name of ATTRIBUTES) sets."""
    if name == FIFO_QUEUE:
        if not creating:
            raise errors.invalid_attribute_name(name)
        return {"fifo": _flag(name, value)}
    if not fifo:
        if name == CONTENT_BASED:
            raise errors.invalid_attribute_name(name)
        raise errors.SqsError(
            "InvalidAttributeName",
            f"You can specify the {name} only when FifoQueue is set to true.",
        )
    if name == CONTENT_BASED:
        return {"content_based_deduplication": _flag(name, value)}
    field, allowed = _CHOICES[name]
    if value not in allowed:
        raise errors.invalid_attribute_value(
            f"Invalid value for the parameter {name}. Reason: must be one of {', '.join(allowed)}."
        )
    return {field: value}


def check_throughput(options: QueueOptions) -> None:
    """High throughput (perMessageGroupId) goes with deduplication per message group."""
    if options.fifo_throughput_limit == "perMessageGroupId" and (
        options.deduplication_scope != "messageGroup"
    ):
        raise errors.invalid_attribute_value(
            "Invalid value for the parameter FifoThroughputLimit. Reason: To set "
            "FifoThroughputLimit to perMessageGroupId, the DeduplicationScope must be "
            "messageGroup."
        )


def check_dead_letter_type(policy: Any, source_fifo: bool, target_fifo: bool) -> None:
    """A FIFO queue's dead-letter queue is FIFO, a standard queue's standard."""
    if source_fifo != target_fifo:
        raise errors.invalid_parameter_value(
            f"Value {policy} for parameter RedrivePolicy is invalid. Reason: Dead-letter "
            "queue must be same type of queue as the source."
        )


def render(options: QueueOptions, name: str) -> str | None:
    """A FIFO attribute as GetQueueAttributes shows it (None: a standard queue's, not shown)."""
    if not options.fifo:
        return None
    if name == FIFO_QUEUE:
        return "true"
    if name == CONTENT_BASED:
        return "true" if options.content_based_deduplication else "false"
    return str(getattr(options, _CHOICES[name][0]))


def _flag(name: str, value: str) -> bool:
    if value.lower() not in ("true", "false"):
        raise errors.invalid_attribute_value(
            f"Invalid value for the parameter {name}: must be true or false."
        )
    return value.lower() == "true"


# --- messages -----------------------------------------------------------------------------


def message_ids(params: dict[str, Any], options: QueueOptions) -> tuple[str | None, str | None]:
    """A send's (group, deduplication id), checked in SQS's order: DelaySeconds, then
    MessageGroupId, then MessageDeduplicationId. On a standard queue the group is kept
    (fair delivery between groups, shown on receive) and a deduplication id refused."""
    group = _id(params, "MessageGroupId")
    dedup = _id(params, "MessageDeduplicationId")
    if not options.fifo:
        if dedup is not None:
            raise _not_for_this_queue_type("MessageDeduplicationId", dedup)
        return group, None
    if (delay := params.get("DelaySeconds")) is not None:
        raise _not_for_this_queue_type("DelaySeconds", delay)
    if group is None:
        raise errors.missing_parameter("MessageGroupId")
    if dedup is None and not options.content_based_deduplication:
        raise errors.invalid_parameter_value(
            "The queue should either have ContentBasedDeduplication enabled or "
            "MessageDeduplicationId provided explicitly"
        )
    return group, dedup


def attempt_id(params: dict[str, Any], options: QueueOptions) -> str | None:
    """A receive's ReceiveRequestAttemptId: a FIFO queue's only (ignored elsewhere, as SQS)."""
    return _id(params, "ReceiveRequestAttemptId") if options.fifo else None


def _id(params: dict[str, Any], name: str) -> str | None:
    value = params.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise errors.invalid_parameter_value(
            f"Value {str(value)[:128]} for parameter {name} is invalid. Reason: {name} can "
            "only include alphanumeric and punctuation characters. 1 to 128 in length."
        )
    return value


def _not_for_this_queue_type(name: str, value: object) -> errors.SqsError:
    return errors.invalid_parameter_value(
        f"Value {value} for parameter {name} is invalid. Reason: The request include "
        "parameter that is not valid for this queue type."
    )
