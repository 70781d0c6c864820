"""Per-entry verdicts of the v2 batch routes: receipts decoded one by one, engine errors as
codes, the size a message counts against its queue's limit."""

from __future__ import annotations

from dataclasses import dataclass

from cassieq.api.v2.dto_messages import FailedEntry
from cassieq.auth.receipt_keys import ReceiptSigner
from cassieq.auth.receipts import InvalidReceipt
from cassieq.engine.errors import (
    Conflict,
    Contention,
    EngineError,
    InvalidArgument,
    NotFound,
)
from cassieq.model import PopReceipt


@dataclass(frozen=True)
class ReceiptFailure:
    code: int
    message: str

    def entry(self, token: str) -> FailedEntry:
        return FailedEntry(pop_receipt=token, code=self.code, message=self.message)


DUPLICATE = ReceiptFailure(409, "the same receipt is earlier in this request")


def subscription_binding(queue: str, name: str) -> str:
    """What a shared subscription's receipts are signed for, in the place of a queue's
    name: a receipt of the queue, or of another subscription, then fails to decode as "of
    another queue" (never acked in the wrong place). Queue names cannot hold "/", so no
    queue is named like a binding."""
    return f"{queue}/subscriptions/{name}"


async def decode_receipts(
    receipts: ReceiptSigner, account: str, queue: str, tokens: list[str]
) -> list[PopReceipt | ReceiptFailure]:
    """Each token as the receipt it signs, or why it is none (in request order).

    v2 answers a receipt of another queue 400 like a forged one (v1 calls it stale: 409),
    and a receipt given twice is done once: the later copy is reported, not redone.
    """
    seen: set[PopReceipt] = set()
    out: list[PopReceipt | ReceiptFailure] = []
    for token in tokens:
        try:
            receipt = await receipts.decode(account, queue, token)
        except InvalidReceipt as exc:  # forged, edited, or a ReceiptOfAnotherQueue
            out.append(ReceiptFailure(400, str(exc)))
            continue
        if receipt in seen:
            out.append(DUPLICATE)
            continue
        seen.add(receipt)
        out.append(receipt)
    return out


def failure_of(exc: EngineError) -> ReceiptFailure:
    """The code an engine error has as a failed entry (as a whole request would answer)."""
    if isinstance(exc, Conflict):
        return ReceiptFailure(409, str(exc) or "the pop receipt is stale")
    if isinstance(exc, NotFound):
        return ReceiptFailure(404, str(exc))
    if isinstance(exc, InvalidArgument):
        return ReceiptFailure(422, str(exc))
    if isinstance(exc, Contention):
        return ReceiptFailure(503, f"{exc}; try again")
    return ReceiptFailure(500, str(exc))
