"""Pop receipts: opaque to clients, signed so a forged or edited one is refused.

A receipt is ``<payload>~<tag>``: the payload is the URL-safe base64 (unpadded) of the JSON
list ``[account, queue, queue_version, monoton, version, tag]``, the tag a keyed BLAKE2b of
the payload (32 bytes, same encoding). Keyed BLAKE2b is a MAC in its own right (no HMAC
construction needed), and it is computed in CPython itself: every message a receive hands
out is signed and every ack verifies one, and itsdangerous's serializer (JSON, a zlib try,
a key derivation and an HMAC per call) took 10% of the server's event-loop thread in a
profile of v2 batches; hashlib's HMAC through OpenSSL 3 took 6%.

Receipts signed by an earlier version (itsdangerous, ``<payload>.<signature>``, never a
``~``) are still verified, so a rolling upgrade does not turn the receipts held by
consumers into 400s.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence

import msgspec
from itsdangerous import BadSignature, URLSafeSerializer

from cassieq.model import PopReceipt

_SEPARATOR = "~"  # never in base64url nor in an itsdangerous token
_PERSON = b"cassieq-receipt"  # BLAKE2b's personalisation: these tags are for receipts only
_TAG_BYTES = 32
_LEGACY_SALT = "cassieq.pop-receipt"

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(list[object])


class InvalidReceipt(ValueError):
    """Not a receipt this service issued (forged, edited or truncated)."""


class UnverifiedReceipt(InvalidReceipt):
    """Its signature verifies under none of the secrets in use (forged, edited, or signed
    with a secret this server has not read yet)."""


class ReceiptOfAnotherQueue(InvalidReceipt):
    """A genuine receipt, issued for another queue: stale here (409), not malformed."""


def _key(secret: str) -> bytes:
    # BLAKE2b takes at most 64 bytes of key; a secret of any length is hashed to 32.
    return hashlib.blake2b(secret.encode(), digest_size=32, person=b"cassieq-rcpt-key").digest()


def _b64(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


class ReceiptCodec:
    def __init__(self, secret: str, previous: Sequence[str] = ()) -> None:
        # Signs with ``secret``; verifies with it or any of ``previous`` (a receipt signed
        # before a rotation verifies while its secret is listed here).
        self._keys = [_key(secret), *map(_key, previous)]
        self._legacy = URLSafeSerializer([*previous, secret], salt=_LEGACY_SALT)

    def encode(self, account: str, queue: str, receipt: PopReceipt) -> str:
        fields = msgspec.to_builtins(receipt)
        if not receipt.partition:
            # Partition 0's receipt is the one from before partitions (consumers holding
            # receipts across an upgrade, and back, keep them valid).
            fields = fields[:-1]
        payload = _b64(_encoder.encode([account, queue, *fields]))
        return f"{payload.decode()}{_SEPARATOR}{self._tag(self._keys[0], payload).decode()}"

    def decode(self, account: str, queue: str, token: str) -> PopReceipt:
        payload, separator, tag = token.partition(_SEPARATOR)
        if not separator:
            fields = self._legacy_fields(token)
        else:
            fields = self._fields(
                payload.encode("ascii", "replace"), tag.encode("ascii", "replace")
            )
        try:
            receipt_account, receipt_queue, *rest = fields
            receipt = msgspec.convert(rest, PopReceipt)
        except (ValueError, TypeError, msgspec.ValidationError) as exc:
            raise InvalidReceipt("the pop receipt is malformed") from exc
        if (receipt_account, receipt_queue) != (account, queue):
            raise ReceiptOfAnotherQueue("the pop receipt belongs to another queue")
        return receipt

    def _fields(self, payload: bytes, tag: bytes) -> list[object]:
        # Every key is tried (no early exit on the first match): the time taken does not
        # say which secret signed it.
        verified = False
        for key in self._keys:
            verified |= hmac.compare_digest(self._tag(key, payload), tag)
        if not verified:
            raise UnverifiedReceipt("the pop receipt is not valid (forged or edited)")
        try:
            return _decoder.decode(base64.urlsafe_b64decode(payload + b"=" * (-len(payload) % 4)))
        except (ValueError, msgspec.DecodeError) as exc:
            raise InvalidReceipt("the pop receipt is malformed") from exc

    def _legacy_fields(self, token: str) -> list[object]:
        try:
            payload = self._legacy.loads(token)
        except BadSignature as exc:
            raise UnverifiedReceipt("the pop receipt is not valid (forged or edited)") from exc
        if not isinstance(payload, list):
            raise InvalidReceipt("the pop receipt is malformed")
        return payload

    @staticmethod
    def _tag(key: bytes, payload: bytes) -> bytes:
        return _b64(
            hashlib.blake2b(payload, key=key, digest_size=_TAG_BYTES, person=_PERSON).digest()
        )
