"""Request and response bodies of the v2 message routes (api-v2.md), camelCase on the wire.

Limits (SQS's where it has one):
- a batch (send, ack, visibility) holds 1-100 entries; a receive takes 1-100 messages and
  waits 0-20 seconds;
- ``delaySeconds`` 0-900 (default: the queue's ``delaySeconds``);
- attributes: at most 10 per message, names 1-256 characters of ``[A-Za-z0-9_.-]``, values
  strings; the body and every attribute name and value count, in bytes of UTF-8, against
  the queue's ``maxMessageBytes``;
- times (``sentAt``, ``firstDeliveredAt``) are ISO-8601 UTC strings with milliseconds,
  ``2026-11-22T21:45:54.123Z``;
- ``groupId`` and ``deduplicationId``: 1-128 characters, letters, digits and ASCII
  punctuation (SQS's ``MessageGroupId`` and ``MessageDeduplicationId``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar

import msgspec

from cassieq.engine.engine import MAX_INVISIBILITY_S

MAX_BATCH = 100
MAX_WAIT_SECONDS = 20
MAX_DELAY_SECONDS = 900
MAX_ATTRIBUTES = 10
MAX_ATTRIBUTE_NAME = 256
ATTRIBUTE_NAME_PATTERN = "^[A-Za-z0-9_.-]+$"
MAX_RECEIPT_LENGTH = 1024
MAX_FIFO_ID = 128
# SQS's rule for MessageGroupId, MessageDeduplicationId and ReceiveRequestAttemptId:
# alphanumerics and the ASCII punctuation !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~ (no space).
FIFO_ID_CHARACTERS = re.compile(r"[A-Za-z0-9!-/:-@\[-`{-~]+")
FIFO_ID_RULE = "1-128 characters: letters, digits and ASCII punctuation (no space)"
# In the ack and visibility examples: a receipt comes from a receive, so a static example
# cannot hold a real one. Sent as it is, the batch answers 200 with it under "failed".
EXAMPLE_RECEIPT = "paste-a-popReceipt-from-receive"

AttributeName = Annotated[
    str,
    msgspec.Meta(min_length=1, max_length=MAX_ATTRIBUTE_NAME, pattern=ATTRIBUTE_NAME_PATTERN),
]
Attributes = Annotated[dict[AttributeName, str], msgspec.Meta(max_length=MAX_ATTRIBUTES)]
Receipt = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_RECEIPT_LENGTH)]
LeaseSeconds = Annotated[int, msgspec.Meta(ge=0, le=MAX_INVISIBILITY_S)]
# The characters are checked by the structs that hold one (check_fifo_ids), not by a
# pattern here: a pattern's refusal would name the regex, not the rule.
FifoId = Annotated[
    str, msgspec.Meta(min_length=1, max_length=MAX_FIFO_ID, description=FIFO_ID_RULE)
]


def check_fifo_ids(**ids: str | None) -> None:
    """Refuses (a 422 naming the field) an id with a character SQS does not allow."""
    for name, value in ids.items():
        if value is not None and not FIFO_ID_CHARACTERS.fullmatch(value):
            raise ValueError(f"{name} must be {FIFO_ID_RULE}")


class OutgoingEntry(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    body: str
    delay_seconds: Annotated[int, msgspec.Meta(ge=0, le=MAX_DELAY_SECONDS)] | None = None
    attributes: Attributes = msgspec.field(default_factory=dict)
    # Messages of one key go to one partition of a partitioned queue (in order there);
    # absent: the server spreads them.
    partition_key: Annotated[str, msgspec.Meta(min_length=1, max_length=256)] | None = None
    # The message group: required on a FIFO queue (delivered in send order within the
    # group, none while an earlier one is in flight); on a standard queue kept and shown
    # back, and the partition key when partitionKey is absent (a group stays in one
    # partition).
    group_id: FifoId | None = None
    # FIFO queues: a send with an id seen within 5 minutes is a duplicate (not stored
    # again; answered with the first message's id). Absent: the body's SHA-256 when the
    # queue has contentBasedDeduplication.
    deduplication_id: FifoId | None = None

    def __post_init__(self) -> None:
        check_fifo_ids(groupId=self.group_id, deduplicationId=self.deduplication_id)


class SendRequest(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    EXAMPLE: ClassVar[dict[str, Any]] = {
        "messages": [
            {"body": "Hello, world", "attributes": {"type": "greeting"}},
            {"body": "Hello again, in 5 seconds", "delaySeconds": 5},
        ]
    }

    messages: Annotated[list[OutgoingEntry], msgspec.Meta(min_length=1, max_length=MAX_BATCH)]


class SentEntry(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    # omit_defaults: sequenceNumber and duplicate only on a FIFO queue's answer (a
    # standard queue's has the fields it always had).
    id: str  # the message's monoton, as a string
    message_tag: str
    # FIFO queues: increasing within the message group (null on a standard queue).
    sequence_number: str | None = None
    # FIFO queues (null on a standard queue): true when the deduplication id was seen
    # within 5 minutes (not stored again; id is the first message's).
    duplicate: bool | None = None


class SendResponse(msgspec.Struct, frozen=True):
    messages: list[SentEntry]  # in request order


class ReceiveRequest(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    EXAMPLE: ClassVar[dict[str, Any]] = {
        "maxMessages": 10,
        "waitSeconds": 1,
        "visibilityTimeoutSeconds": 30,
    }

    max_messages: Annotated[int, msgspec.Meta(ge=1, le=MAX_BATCH)] = 1
    wait_seconds: Annotated[int, msgspec.Meta(ge=0, le=MAX_WAIT_SECONDS)] = 0
    visibility_timeout_seconds: LeaseSeconds | None = None  # default: the queue's
    # FIFO queues: a retried receive with the same id within 5 minutes is answered with the
    # same messages (SQS's ReceiveRequestAttemptId); ignored on a standard queue.
    receive_attempt_id: FifoId | None = None

    def __post_init__(self) -> None:
        check_fifo_ids(receiveAttemptId=self.receive_attempt_id)


class ReceivedMessage(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    # omit_defaults: groupId and sequenceNumber only when there is one (a standard
    # message without a group has the fields it always had).
    id: str
    body: str
    attributes: dict[str, str]
    pop_receipt: str
    delivery_count: int  # deliveries including this one (1 on the first)
    message_tag: str
    first_delivered_at: str  # ISO-8601 UTC
    sent_at: str  # ISO-8601 UTC
    # Its message group, when it was sent with one; FIFO queues: its sequence number too.
    group_id: str | None = None
    sequence_number: str | None = None


class ReceiveResponse(msgspec.Struct, frozen=True):
    messages: list[ReceivedMessage]


class AckRequest(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    EXAMPLE: ClassVar[dict[str, Any]] = {"popReceipts": [EXAMPLE_RECEIPT]}

    pop_receipts: Annotated[list[Receipt], msgspec.Meta(min_length=1, max_length=MAX_BATCH)]


class FailedEntry(msgspec.Struct, frozen=True, rename="camel"):
    pop_receipt: str
    code: int  # 409 stale, 400 not a receipt of this queue, 503 undecided: retry
    message: str


class AckResponse(msgspec.Struct, frozen=True):
    acked: list[str]
    failed: list[FailedEntry]


class VisibilityEntry(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    pop_receipt: Receipt
    # Absent: the delivery keeps the lease it has (to change only the body).
    visibility_timeout_seconds: LeaseSeconds | None = None
    body: str | None = None  # a new body (attributes are kept)


class VisibilityRequest(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    EXAMPLE: ClassVar[dict[str, Any]] = {
        "entries": [{"popReceipt": EXAMPLE_RECEIPT, "visibilityTimeoutSeconds": 60}]
    }

    entries: Annotated[list[VisibilityEntry], msgspec.Meta(min_length=1, max_length=MAX_BATCH)]


class UpdatedEntry(msgspec.Struct, frozen=True, rename="camel"):
    pop_receipt: str  # the receipt sent (now stale)
    new_pop_receipt: str
    message_tag: str


class VisibilityResponse(msgspec.Struct, frozen=True):
    updated: list[UpdatedEntry]
    failed: list[FailedEntry]
