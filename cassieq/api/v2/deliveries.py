"""The answers of receive, ack and visibility, shared by a queue's routes (messages.py) and
a shared subscription's (subscriptions.py): the same bodies, the same per-entry verdicts.

Each takes the *binding* its receipts are signed for: the queue's name for the queue's own
consumers, ``subscription_binding(queue, name)`` for a subscription's (entries.py), so a
receipt handed out by one is refused by the other as "of another queue" (400 in
``failed``), never acked in the wrong place.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from cassieq.api.v2.dto_messages import (
    AckResponse,
    FailedEntry,
    ReceivedMessage,
    ReceiveResponse,
    UpdatedEntry,
    VisibilityEntry,
    VisibilityResponse,
)
from cassieq.api.v2.entries import ReceiptFailure, decode_receipts, failure_of
from cassieq.api.v2.times import iso_time
from cassieq.auth.receipt_keys import ReceiptSigner
from cassieq.engine.errors import EngineError
from cassieq.model import Delivery, PopReceipt, VisibilityChange, message_id

# The engine's batch calls, bound to their queue or subscription: the valid receipts (or
# changes) in, one outcome each out, in the order given.
AckCall = Callable[[list[PopReceipt]], Awaitable[Sequence[EngineError | None]]]
VisibilityCall = Callable[[list[VisibilityChange]], Awaitable[Sequence[PopReceipt | EngineError]]]


async def received(
    receipts: ReceiptSigner, account: str, binding: str, deliveries: Sequence[Delivery]
) -> ReceiveResponse:
    return ReceiveResponse(
        messages=[await _received(receipts, account, binding, d) for d in deliveries]
    )


async def _received(
    receipts: ReceiptSigner, account: str, binding: str, d: Delivery
) -> ReceivedMessage:
    return ReceivedMessage(
        id=message_id(d.receipt.partition, d.receipt.monoton),
        body=d.message,
        attributes=d.attributes,
        pop_receipt=await receipts.encode(account, binding, d.receipt),
        delivery_count=d.delivery_count + 1,  # v2 counts this delivery (SQS's receive count)
        message_tag=d.tag,
        # A delivery always has one (this delivery's time, on the first); rows from before
        # the column read as None: then the send time is the best known bound.
        first_delivered_at=iso_time(
            d.first_delivered_at if d.first_delivered_at is not None else d.sent_at
        ),
        sent_at=iso_time(d.sent_at),
        group_id=d.group,
        sequence_number=d.sequence_number,
    )


async def acked(
    receipts: ReceiptSigner, account: str, binding: str, tokens: list[str], ack: AckCall
) -> AckResponse:
    """Each token acked or reported in ``failed`` with its own code. ``ack`` is called even
    when no token is a valid receipt: it is where an unknown queue or subscription (404), or
    an ordered subscription (422), is refused as a whole request."""
    decoded = await decode_receipts(receipts, account, binding, tokens)
    valid = [r for r in decoded if isinstance(r, PopReceipt)]
    outcomes = iter(await ack(valid))
    done: list[str] = []
    failed: list[FailedEntry] = []
    for token, receipt in zip(tokens, decoded, strict=True):
        # The engine answered the valid ones in the order given.
        outcome = next(outcomes) if isinstance(receipt, PopReceipt) else receipt
        if outcome is None:
            done.append(token)
        else:
            verdict = outcome if isinstance(outcome, ReceiptFailure) else failure_of(outcome)
            failed.append(verdict.entry(token))
    return AckResponse(acked=done, failed=failed)


async def leases_changed(
    receipts: ReceiptSigner,
    account: str,
    binding: str,
    entries: Sequence[VisibilityEntry],
    change: VisibilityCall,
) -> VisibilityResponse:
    """Each entry's new receipt (signed for the same binding), or its failure."""
    tokens = [e.pop_receipt for e in entries]
    decoded = await decode_receipts(receipts, account, binding, tokens)
    changes = [
        VisibilityChange(
            receipt=r,
            invisibility_ms=None
            if e.visibility_timeout_seconds is None
            else e.visibility_timeout_seconds * 1000,
            body=e.body,
        )
        for r, e in zip(decoded, entries, strict=True)
        if isinstance(r, PopReceipt)
    ]
    outcomes = iter(await change(changes))
    updated: list[UpdatedEntry] = []
    failed: list[FailedEntry] = []
    for token, receipt in zip(tokens, decoded, strict=True):
        # The engine answered the valid ones in the order given.
        outcome = next(outcomes) if isinstance(receipt, PopReceipt) else receipt
        if isinstance(outcome, PopReceipt):
            updated.append(
                UpdatedEntry(
                    pop_receipt=token,
                    new_pop_receipt=await receipts.encode(account, binding, outcome),
                    message_tag=outcome.tag,
                )
            )
        else:
            verdict = outcome if isinstance(outcome, ReceiptFailure) else failure_of(outcome)
            failed.append(verdict.entry(token))
    return VisibilityResponse(updated=updated, failed=failed)
