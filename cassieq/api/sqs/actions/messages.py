"""SQS message actions onto the engine: send, receive, delete, change visibility.

A ReceiptHandle is a v2 pop receipt (handles.py); message attributes keep their SQS
DataType on the row (message_attrs.py); the MD5 digests are SQS's (md5.py); a FIFO queue's
rules on a send are fifo.py's.
"""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from typing import Any, TypeVar

from cassieq.api.sqs import errors
from cassieq.api.sqs.actions import fifo, handles, message_attrs
from cassieq.api.sqs.actions.common import queue_definition
from cassieq.api.sqs.context import Handler, SqsCall
from cassieq.api.sqs.md5 import md5_of_attributes, md5_of_body
from cassieq.engine import policy
from cassieq.engine.errors import Contention, EngineError, MessageTooLarge, StaleReceipt
from cassieq.model import (
    Delivery,
    OutgoingMessage,
    PopReceipt,
    QueueDefinition,
    Sent,
    VisibilityChange,
)

MAX_BATCH = 10
MAX_BATCH_BYTES = 1024 * 1024  # the whole of a SendMessageBatch, whatever the queue's limit
MAX_DELAY_S = 900
MAX_VISIBILITY_S = 43200
MAX_WAIT_S = 20
_ENTRY_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,80}")
SYSTEM_ATTRIBUTES = (
    "ApproximateReceiveCount",
    "ApproximateFirstReceiveTimestamp",
    "SentTimestamp",
    "SenderId",
    # A message's group (FIFO queues; standard queues when sent with one) and its sequence
    # number (FIFO queues): present only then.
    "MessageGroupId",
    "SequenceNumber",
)
# AWSTraceHeader, the one system attribute a send may carry: kept in the row's attribute
# types (SQS's alone: v1 and v2 never show them) under a key no attribute name can be (no
# name has a ':'), so it needs no column; it does not count against the size, as in SQS.
TRACE_HEADER = "AWSTraceHeader"
TRACE_KEY = "sqs:AWSTraceHeader"
MAX_TRACE_HEADER = 1024
# Valid names SQS has, asked for, never present here. MessageDeduplicationId: the engine
# keeps a FIFO message's deduplication id apart from the message, not on its row.
_ABSENT_ATTRIBUTES = {
    "MessageDeduplicationId",
    "SqsManagedSseEnabled",
    "DeadLetterQueueSourceArn",
}


# --- parameters -----------------------------------------------------------------------------


def _required(params: dict[str, Any], name: str) -> Any:
    value = params.get(name)
    if value is None or value == "":
        raise errors.missing_parameter(name)
    return value


_D = TypeVar("_D", int, None)


def _int(params: dict[str, Any], name: str, low: int, high: int, default: _D) -> int | _D:
    value = params.get(name)
    if value is None:
        return default
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise errors.invalid_parameter_value(
            f"Value {value} for parameter {name} is invalid. Reason: Must be between "
            f"{low} and {high}, if provided."
        )
    return value


def _entries(params: dict[str, Any], entry_type: str) -> list[dict[str, Any]]:
    """A batch's entries (``entry_type``: their shape, named when there are none)."""
    entries = params.get("Entries")
    if not entries:
        raise errors.empty_batch_request(entry_type)
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise errors.invalid_parameter_value("Entries must be a list of entries.")
    if len(entries) > MAX_BATCH:
        raise errors.too_many_entries_in_batch_request(len(entries))
    seen: set[str] = set()
    for entry in entries:
        entry_id = entry.get("Id")
        if not isinstance(entry_id, str) or not _ENTRY_ID_RE.fullmatch(entry_id):
            raise errors.invalid_batch_entry_id(str(entry_id))
        if entry_id in seen:
            raise errors.batch_entry_ids_not_distinct(entry_id)
        seen.add(entry_id)
    return entries


async def _queue(call: SqsCall) -> tuple[str, QueueDefinition]:
    definition = await queue_definition(call)
    return definition.name, definition


def message_id(tag: str) -> str:
    """A message's id in SQS's UUID shape, from its tag (kept while it is redelivered)."""
    try:
        raw = base64.urlsafe_b64decode(tag)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 12:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, tag))
    return str(uuid.UUID(bytes=raw + b"\0\0\0\0"))


def _failed(entry_id: str, error: errors.SqsError) -> dict[str, Any]:
    return {
        "Id": entry_id,
        "SenderFault": error.sender,
        "Code": error.query_code,
        "Message": error.message,
    }


def _engine_failure(exc: EngineError) -> errors.SqsError:
    if isinstance(exc, Contention):
        return errors.service_unavailable()
    return errors.invalid_parameter_value(str(exc))


# --- send -----------------------------------------------------------------------------------


class _Outgoing:
    def __init__(self, params: dict[str, Any], definition: QueueDefinition) -> None:
        body = _required(params, "MessageBody")
        if not isinstance(body, str):
            raise errors.invalid_parameter_value("MessageBody must be a string.")
        message_attrs.check_text("the message body", body)
        group, dedup = fifo.message_ids(params, definition.options)
        # No DelaySeconds: the queue's, applied by the engine.
        delay = _int(params, "DelaySeconds", 0, MAX_DELAY_S, None)
        attrs = message_attrs.to_stored(params.get("MessageAttributes"))
        system = params.get("MessageSystemAttributes")
        trace = _trace_header(system)
        # SQS counts attribute names, types and decoded values: the engine checks this size.
        self.size = len(body.encode()) + attrs.size
        self.message = OutgoingMessage(
            body=body,
            delay_ms=None if delay is None else delay * 1000,
            attributes=attrs.values,
            attribute_types=attrs.types if trace is None else {**attrs.types, TRACE_KEY: trace},
            size=self.size,
            # A message group keeps to one partition of a partitioned queue (issue 35; a
            # FIFO queue's engine places them by group itself).
            partition_key=group,
            group=group,
            dedup_id=dedup,
        )
        try:
            # The queue's policy, asked here too so a batch can fail this entry alone.
            policy.check_message(definition.options, self.message)
        except MessageTooLarge as exc:
            raise errors.invalid_parameter_value(
                "One or more parameters are invalid. Reason: Message must be shorter than "
                f"{exc.limit} bytes."
            ) from None
        self.md5_body = md5_of_body(body)
        given = params.get("MessageAttributes")
        self.md5_attributes = md5_of_attributes(given) if given else None
        # SQS's digest of the system attributes given (checked by the SDKs, as the others).
        self.md5_system = None if trace is None else md5_of_attributes(system or {})

    def answer(self, sent: Sent) -> dict[str, Any]:
        # A duplicate (FIFO, within 5 minutes) is answered as a success with the first
        # message's id, as SQS answers it; the digests are of what this request sent.
        out = {"MessageId": message_id(sent.tag), "MD5OfMessageBody": self.md5_body}
        if self.md5_attributes is not None:
            out["MD5OfMessageAttributes"] = self.md5_attributes
        if self.md5_system is not None:
            out["MD5OfMessageSystemAttributes"] = self.md5_system
        if sent.sequence_number is not None:
            out["SequenceNumber"] = sent.sequence_number
        return out


def _trace_header(system: Any) -> str | None:
    """The AWSTraceHeader of a send's MessageSystemAttributes (None: not given)."""
    if not system:
        return None
    if not isinstance(system, dict) or set(system) != {TRACE_HEADER}:
        raise errors.invalid_parameter_value(
            "Message system attribute name(s) are invalid: AWSTraceHeader is the only one a "
            "message can be sent with."
        )
    value = system[TRACE_HEADER]
    text = value.get("StringValue") if isinstance(value, dict) else None
    if not isinstance(text, str) or not text or value.get("DataType") != "String":
        raise errors.invalid_parameter_value(
            "The message system attribute AWSTraceHeader must have DataType String and a "
            "non-empty StringValue."
        )
    if len(text) > MAX_TRACE_HEADER or not (text.isascii() and text.isprintable()):
        raise errors.invalid_parameter_value(
            f"The message system attribute AWSTraceHeader must be an X-Ray trace header: "
            f"printable ASCII, at most {MAX_TRACE_HEADER} characters."
        )
    return text


async def send_message(call: SqsCall) -> dict[str, Any]:
    name, definition = await _queue(call)
    outgoing = _Outgoing(call.params, definition)
    [sent] = await call.engine.send(call.account, name, [outgoing.message])
    return outgoing.answer(sent)


async def send_message_batch(call: SqsCall) -> dict[str, Any]:
    name, definition = await _queue(call)
    entries = _entries(call.params, "SendMessageBatchRequestEntry")
    ready: list[tuple[str, _Outgoing]] = []
    failed: list[dict[str, Any]] = []
    for entry in entries:
        try:
            ready.append((entry["Id"], _Outgoing(entry, definition)))
        except errors.SqsError as exc:
            failed.append(_failed(entry["Id"], exc))
    if sum(o.size for _, o in ready) > MAX_BATCH_BYTES:
        raise errors.batch_request_too_long(MAX_BATCH_BYTES)
    sent = await call.engine.send(call.account, name, [o.message for _, o in ready])
    successful = [
        {"Id": entry_id, **outgoing.answer(s)}
        for (entry_id, outgoing), s in zip(ready, sent, strict=True)
    ]
    return {"Successful": successful, "Failed": failed}


# --- receive --------------------------------------------------------------------------------


def _system_names(params: dict[str, Any]) -> set[str]:
    asked: list[Any] = []
    for key in ("AttributeNames", "MessageSystemAttributeNames"):
        value = params.get(key) or []
        if not isinstance(value, list):
            raise errors.invalid_parameter_value(f"{key} must be a list of names.")
        asked.extend(value)
    names: set[str] = set()
    for name in asked:
        if name == "All":
            names.update(SYSTEM_ATTRIBUTES)
            names.add(TRACE_HEADER)
        elif name in SYSTEM_ATTRIBUTES or name == TRACE_HEADER:
            names.add(name)
        elif name not in _ABSENT_ATTRIBUTES:
            raise errors.invalid_attribute_name(str(name))
    return names


async def receive_message(call: SqsCall) -> dict[str, Any]:
    name, definition = await _queue(call)
    params = call.params
    count = _int(params, "MaxNumberOfMessages", 1, MAX_BATCH, 1)
    wait = _int(params, "WaitTimeSeconds", 0, MAX_WAIT_S, definition.options.receive_wait_seconds)
    visibility = _int(
        params,
        "VisibilityTimeout",
        0,
        MAX_VISIBILITY_S,
        definition.options.visibility_timeout_seconds,
    )
    system = _system_names(params)
    wanted = params.get("MessageAttributeNames")
    message_attrs.selected(wanted, {})  # the names' shape checked before any delivery
    deliveries = await call.engine.receive(
        call.account,
        name,
        max_messages=count,
        invisibility_s=visibility,
        wait_s=wait,
        attempt_id=fifo.attempt_id(params, definition.options),
    )
    if not deliveries:
        return {}
    return {"Messages": [await _message(call, name, d, system, wanted) for d in deliveries]}


async def _message(
    call: SqsCall, queue: str, d: Delivery, system: set[str], wanted: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "MessageId": message_id(d.tag),
        "ReceiptHandle": await handles.encode(call, queue, d),
        "MD5OfBody": md5_of_body(d.message),
        "Body": d.message,
    }
    first = d.first_delivered_at if d.first_delivered_at is not None else d.sent_at
    every = {
        "ApproximateReceiveCount": str(d.delivery_count + 1),
        "ApproximateFirstReceiveTimestamp": str(first),
        "SentTimestamp": str(d.sent_at),
        "SenderId": call.account,
    }
    if (trace := d.attribute_types.get(TRACE_KEY)) is not None:
        every[TRACE_HEADER] = trace
    if d.group is not None:
        every["MessageGroupId"] = d.group
    if d.sequence_number is not None:
        every["SequenceNumber"] = d.sequence_number
    if system:
        out["Attributes"] = {k: v for k, v in every.items() if k in system}
    types = {k: v for k, v in d.attribute_types.items() if k != TRACE_KEY}
    attributes = message_attrs.selected(wanted, message_attrs.to_sqs(d.attributes, types))
    if attributes:
        out["MessageAttributes"] = attributes
        out["MD5OfMessageAttributes"] = md5_of_attributes(attributes)
    return out


# --- delete and change visibility --------------------------------------------------------
#
# A batch goes to the engine as one call (one conditional batch per bucket); only entries
# whose receipt turned out stale are followed, one by one, to their delivery's current
# version (handles.py says why).

FOLLOWS = 3  # a visibility change racing the follow: follow it again, a few times


def _follow(outcome: object, handle: handles.Handle) -> bool:
    return isinstance(outcome, StaleReceipt) and handle.deliveries is not None


async def _current(call: SqsCall, queue: str, handle: handles.Handle) -> PopReceipt | None:
    assert handle.deliveries is not None
    return await call.engine.current_receipt(call.account, queue, handle.receipt, handle.deliveries)


async def _acks(call: SqsCall, queue: str, hs: list[handles.Handle]) -> list[EngineError | None]:
    """Delete the deliveries the handles were given for. SQS answers success for a handle
    whose delivery is over (acked, or the message delivered again): so do we, without
    effect on a later delivery."""
    first = await call.engine.ack_batch(call.account, queue, [h.receipt for h in hs])
    return [
        await _ack_followed(call, queue, h) if _follow(o, h) else o
        for h, o in zip(hs, first, strict=True)
    ]


async def _ack_followed(call: SqsCall, queue: str, handle: handles.Handle) -> EngineError | None:
    for _ in range(FOLLOWS):
        receipt = await _current(call, queue, handle)
        if receipt is None:
            return None  # that delivery is over: SQS's success
        [outcome] = await call.engine.ack_batch(call.account, queue, [receipt])
        if not isinstance(outcome, StaleReceipt):
            return outcome
    return Contention("the message kept changing under the delete")


async def _changes(
    call: SqsCall, queue: str, entries: list[tuple[handles.Handle, int]]
) -> list[EngineError | None]:
    changes = [VisibilityChange(receipt=h.receipt, invisibility_ms=s * 1000) for h, s in entries]
    first = await call.engine.change_visibility(call.account, queue, changes)
    out: list[EngineError | None] = []
    for (handle, seconds), outcome in zip(entries, first, strict=True):
        if isinstance(outcome, PopReceipt):
            out.append(None)
        elif _follow(outcome, handle):
            out.append(await _change_followed(call, queue, handle, seconds))
        else:
            out.append(outcome)
    return out


async def _change_followed(
    call: SqsCall, queue: str, handle: handles.Handle, seconds: int
) -> EngineError | None:
    for _ in range(FOLLOWS):
        receipt = await _current(call, queue, handle)
        if receipt is None:
            return _Superseded("that delivery is over")
        change = VisibilityChange(receipt=receipt, invisibility_ms=seconds * 1000)
        [outcome] = await call.engine.change_visibility(call.account, queue, [change])
        if not isinstance(outcome, StaleReceipt):
            return outcome if isinstance(outcome, EngineError) else None
    return Contention("the message kept changing under the visibility change")


class _Superseded(StaleReceipt):
    """The handle's delivery is over (the message deleted, or received again: a newer
    handle is its receipt now)."""


def _change_failure(exc: EngineError) -> errors.SqsError:
    # SQS: "you must provide the most recently received receipt handle"; an older one is
    # not valid any more (ReceiptHandleIsInvalid). It never moves the newer delivery: that
    # would cut short (or stretch) another consumer's lease. MessageNotInflight stays for
    # what it says: a message that is not in flight.
    if isinstance(exc, _Superseded):
        return errors.receipt_handle_is_invalid()
    return errors.message_not_inflight() if isinstance(exc, StaleReceipt) else _engine_failure(exc)


def _visibility(params: dict[str, Any]) -> int:
    if params.get("VisibilityTimeout") is None:
        raise errors.missing_parameter("VisibilityTimeout")
    return _int(params, "VisibilityTimeout", 0, MAX_VISIBILITY_S, 0)


async def delete_message(call: SqsCall) -> dict[str, Any]:
    name, _ = await _queue(call)
    handle = await handles.decode(call, name, _required(call.params, "ReceiptHandle"))
    [outcome] = await _acks(call, name, [handle])
    if outcome is not None:
        raise _engine_failure(outcome)
    return {}


async def change_message_visibility(call: SqsCall) -> dict[str, Any]:
    name, _ = await _queue(call)
    handle = await handles.decode(call, name, _required(call.params, "ReceiptHandle"))
    [outcome] = await _changes(call, name, [(handle, _visibility(call.params))])
    if outcome is not None:
        raise _change_failure(outcome)
    return {}


async def delete_message_batch(call: SqsCall) -> dict[str, Any]:
    name, _ = await _queue(call)
    failed: dict[str, dict[str, Any]] = {}
    valid: list[tuple[str, handles.Handle]] = []
    entries = _entries(call.params, "DeleteMessageBatchRequestEntry")
    for entry in entries:
        try:
            valid.append(
                (entry["Id"], await handles.decode(call, name, _required(entry, "ReceiptHandle")))
            )
        except errors.SqsError as exc:
            failed[entry["Id"]] = _failed(entry["Id"], exc)
    outcomes = await _acks(call, name, [h for _, h in valid]) if valid else []
    for (entry_id, _), outcome in zip(valid, outcomes, strict=True):
        if outcome is not None:
            failed[entry_id] = _failed(entry_id, _engine_failure(outcome))
    return _batch_answer(entries, failed)


async def change_message_visibility_batch(call: SqsCall) -> dict[str, Any]:
    name, _ = await _queue(call)
    failed: dict[str, dict[str, Any]] = {}
    valid: list[tuple[str, handles.Handle, int]] = []
    entries = _entries(call.params, "ChangeMessageVisibilityBatchRequestEntry")
    for entry in entries:
        try:
            handle = await handles.decode(call, name, _required(entry, "ReceiptHandle"))
            valid.append((entry["Id"], handle, _visibility(entry)))
        except errors.SqsError as exc:
            failed[entry["Id"]] = _failed(entry["Id"], exc)
    outcomes = await _changes(call, name, [(h, s) for _, h, s in valid]) if valid else []
    for (entry_id, _, _), outcome in zip(valid, outcomes, strict=True):
        if outcome is not None:
            failed[entry_id] = _failed(entry_id, _change_failure(outcome))
    return _batch_answer(entries, failed)


def _batch_answer(
    entries: list[dict[str, Any]], failed: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Successful and Failed, each in request order."""
    return {
        "Successful": [{"Id": e["Id"]} for e in entries if e["Id"] not in failed],
        "Failed": [failed[e["Id"]] for e in entries if e["Id"] in failed],
    }


ACTIONS: dict[str, Handler] = {
    "SendMessage": send_message,
    "SendMessageBatch": send_message_batch,
    "ReceiveMessage": receive_message,
    "DeleteMessage": delete_message,
    "DeleteMessageBatch": delete_message_batch,
    "ChangeMessageVisibility": change_message_visibility,
    "ChangeMessageVisibilityBatch": change_message_visibility_batch,
}
