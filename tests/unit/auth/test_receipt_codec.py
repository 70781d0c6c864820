"""The pop-receipt codec: what it signs verifies, nothing edited or foreign does, and a
receipt of the earlier format (itsdangerous) still verifies, so an upgrade does not turn
the receipts consumers hold into 400s."""

from __future__ import annotations

import base64

import msgspec
import pytest
from itsdangerous import URLSafeSerializer

from cassieq.auth.receipts import (
    InvalidReceipt,
    ReceiptCodec,
    ReceiptOfAnotherQueue,
    UnverifiedReceipt,
)
from cassieq.model import PopReceipt

SECRET = "s" * 43
RECEIPT = PopReceipt(queue_version=3, monoton=123_456_789, version=4, tag="abcdefghijklmnopqrstuv")


def legacy_encode(secret: str, account: str, queue: str, receipt: PopReceipt) -> str:
    """A receipt as the previous version signed it."""
    serializer = URLSafeSerializer([secret], salt="cassieq.pop-receipt")
    return str(serializer.dumps([account, queue, *msgspec.to_builtins(receipt)]))


def test_a_receipt_round_trips_and_is_url_safe() -> None:
    codec = ReceiptCodec(SECRET)
    token = codec.encode("acct", "q", RECEIPT)
    assert codec.decode("acct", "q", token) == RECEIPT
    allowed = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_~")
    assert set(token) <= allowed  # goes in a query string as it is


@pytest.mark.parametrize("position", [0, 10, -1])
def test_an_edited_receipt_is_unverified(position: int) -> None:
    codec = ReceiptCodec(SECRET)
    token = codec.encode("acct", "q", RECEIPT)
    edited = list(token)
    edited[position] = "A" if edited[position] != "A" else "B"
    with pytest.raises(UnverifiedReceipt):
        codec.decode("acct", "q", "".join(edited))


def test_a_receipt_with_edited_fields_and_its_old_tag_is_unverified() -> None:
    codec = ReceiptCodec(SECRET)
    token = codec.encode("acct", "q", RECEIPT)
    _, tag = token.split("~")
    bumped = [*["acct", "q"], 3, 123_456_789, 5, "abcdefghijklmnopqrstuv"]  # version 4 -> 5
    payload = base64.urlsafe_b64encode(msgspec.json.encode(bumped)).rstrip(b"=").decode()
    with pytest.raises(UnverifiedReceipt):
        codec.decode("acct", "q", f"{payload}~{tag}")


def test_a_receipt_signed_with_another_secret_is_unverified() -> None:
    token = ReceiptCodec("x" * 43).encode("acct", "q", RECEIPT)
    with pytest.raises(UnverifiedReceipt):
        ReceiptCodec(SECRET).decode("acct", "q", token)


def test_the_previous_secret_verifies_and_the_current_one_signs() -> None:
    old = ReceiptCodec("old-" + "o" * 40).encode("acct", "q", RECEIPT)
    both = ReceiptCodec(SECRET, ["old-" + "o" * 40])
    assert both.decode("acct", "q", old) == RECEIPT
    assert ReceiptCodec(SECRET).decode("acct", "q", both.encode("acct", "q", RECEIPT)) == RECEIPT


def test_a_receipt_of_another_queue_is_told_apart_from_a_forgery() -> None:
    codec = ReceiptCodec(SECRET)
    with pytest.raises(ReceiptOfAnotherQueue):
        codec.decode("acct", "other", codec.encode("acct", "q", RECEIPT))
    with pytest.raises(ReceiptOfAnotherQueue):
        codec.decode("acct2", "q", codec.encode("acct", "q", RECEIPT))


@pytest.mark.parametrize("token", ["", "~", "abc", "abc~def", "é~é", "~" * 5])
def test_garbage_is_an_invalid_receipt(token: str) -> None:
    with pytest.raises(InvalidReceipt):
        ReceiptCodec(SECRET).decode("acct", "q", token)


def test_a_signed_payload_that_is_not_a_receipt_is_malformed_not_unverified() -> None:
    # Only a holder of the secret can make one; the answer is still a 400, never a 500.
    codec = ReceiptCodec(SECRET)
    payload = base64.urlsafe_b64encode(b'{"not": "a list"}').rstrip(b"=")
    token = f"{payload.decode()}~{codec._tag(codec._keys[0], payload).decode()}"
    with pytest.raises(InvalidReceipt) as raised:
        codec.decode("acct", "q", token)
    assert not isinstance(raised.value, UnverifiedReceipt)


def test_a_receipt_of_the_earlier_format_still_verifies() -> None:
    legacy = legacy_encode(SECRET, "acct", "q", RECEIPT)
    assert "~" not in legacy
    assert ReceiptCodec(SECRET).decode("acct", "q", legacy) == RECEIPT
    # ... under the previous secret too, and never under a secret that did not sign it.
    assert ReceiptCodec("n" * 43, [SECRET]).decode("acct", "q", legacy) == RECEIPT
    with pytest.raises(UnverifiedReceipt):
        ReceiptCodec("n" * 43).decode("acct", "q", legacy)
    with pytest.raises(ReceiptOfAnotherQueue):
        ReceiptCodec(SECRET).decode("acct", "other", legacy)


def _payload(token: str) -> list[object]:
    payload = token.partition("~")[0]
    decoded: list[object] = msgspec.json.decode(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    return decoded


def test_a_partition_0_receipt_is_the_receipt_from_before_partitions() -> None:
    """Consumers holding receipts across an upgrade (and back) keep them valid: partition
    0's payload is the six fields receipts had, partition p's adds p."""
    codec = ReceiptCodec(SECRET)
    assert _payload(codec.encode("acct", "q", RECEIPT)) == [
        "acct",
        "q",
        3,
        123_456_789,
        4,
        RECEIPT.tag,
    ]
    far = msgspec.structs.replace(RECEIPT, partition=7)
    token = codec.encode("acct", "q", far)
    assert _payload(token)[-1] == 7
    assert codec.decode("acct", "q", token) == far
    assert codec.decode("acct", "q", token) != RECEIPT  # the partition is signed in
