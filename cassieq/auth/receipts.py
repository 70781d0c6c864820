"""Pop receipts: opaque to clients, signed so a forged or edited one is refused."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from itsdangerous import BadSignature, URLSafeSerializer

from cassieq.model import PopReceipt


class InvalidReceipt(ValueError):
    """Not a receipt this service issued (forged, edited or truncated)."""


class UnverifiedReceipt(InvalidReceipt):
    """Its signature verifies under none of the secrets in use (forged, edited, or signed
    with a secret this server has not read yet)."""


class ReceiptOfAnotherQueue(InvalidReceipt):
    """A genuine receipt, issued for another queue: stale here (409), not malformed."""


class ReceiptCodec:
    def __init__(self, secret: str, previous: Sequence[str] = ()) -> None:
        # itsdangerous signs with the last key and verifies with any of them: a receipt
        # signed before a rotation still verifies while its secret is listed here.
        keys = [*previous, secret]
        self._serializer = URLSafeSerializer(keys, salt="cassieq.pop-receipt")

    def encode(self, account: str, queue: str, receipt: PopReceipt) -> str:
        return str(self._serializer.dumps([account, queue, *msgspec.to_builtins(receipt)]))

    def decode(self, account: str, queue: str, token: str) -> PopReceipt:
        try:
            payload = self._serializer.loads(token)
        except BadSignature as exc:
            raise UnverifiedReceipt("the pop receipt is not valid (forged or edited)") from exc
        try:
            receipt_account, receipt_queue, *fields = payload
            receipt = msgspec.convert(fields, PopReceipt)
        except (ValueError, TypeError, msgspec.ValidationError) as exc:
            raise InvalidReceipt("the pop receipt is malformed") from exc
        if (receipt_account, receipt_queue) != (account, queue):
            raise ReceiptOfAnotherQueue("the pop receipt belongs to another queue")
        return receipt
