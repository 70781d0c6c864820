"""SQS receipt handles: v2 pop receipts that also name which delivery they were given for.

An SQS receipt handle stays good for DeleteMessage and ChangeMessageVisibility through the
visibility changes made with it, while a pop receipt names the row version it saw and is
stale after any change. So the handle carries the delivery's number (deliveries made,
this one included) inside the signed tag field: ``<tag>.<deliveries>``. A stale receipt of
a delivery still under way is then followed to that delivery's current version
(QueueEngine.current_receipt). A plain v2 receipt (no number) works as itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from cassieq.api.sqs import errors
from cassieq.api.sqs.context import SqsCall
from cassieq.auth.receipt_keys import ReceiptSigner
from cassieq.auth.receipts import InvalidReceipt
from cassieq.model import Delivery, PopReceipt

_SEPARATOR = "."  # never in a tag (URL-safe base64)


@dataclass(frozen=True)
class Handle:
    receipt: PopReceipt  # as the delivery's own receipt (its real tag)
    deliveries: int | None  # None: a v2 receipt, followed no further


def _signer(call: SqsCall) -> ReceiptSigner:
    if call.receipts is None:  # an app always gives one; a call built by hand must too
        raise errors.internal_error()
    return call.receipts


async def encode(call: SqsCall, queue: str, delivery: Delivery) -> str:
    r = delivery.receipt
    deliveries = delivery.delivery_count + 1  # the row's count once this delivery was made
    tagged = PopReceipt(
        r.queue_version, r.monoton, r.version, f"{r.tag}{_SEPARATOR}{deliveries}", r.partition
    )
    return await _signer(call).encode(call.account, queue, tagged)


async def decode(call: SqsCall, queue: str, token: str) -> Handle:
    """The handle ``token`` is, for this queue; ReceiptHandleIsInvalid when it is forged,
    edited, of another queue, or not a receipt at all."""
    if not isinstance(token, str) or not token:
        raise errors.receipt_handle_is_invalid()
    try:
        r = await _signer(call).decode(call.account, queue, token)
    except InvalidReceipt:
        raise errors.receipt_handle_is_invalid(token) from None
    tag, separator, count = r.tag.rpartition(_SEPARATOR)
    if not separator:
        return Handle(r, None)
    if not count.isdigit():
        raise errors.receipt_handle_is_invalid(token)
    return Handle(PopReceipt(r.queue_version, r.monoton, r.version, tag, r.partition), int(count))
