"""MD5s of bodies and attributes, against the digests AWS's own examples show (awscli's
SQS examples print them shortened: first and last 8 hex digits) and an independent
recomputation."""

from __future__ import annotations

import base64
import hashlib

from cassieq.api.sqs.md5 import md5_of_attributes, md5_of_body


def shortened(digest: str) -> str:
    return f"{digest[:8]}...{digest[-8:]}"


def test_body_digest_is_the_md5_of_its_utf8() -> None:
    # (The receive-message example's "My first message." digest does not fit its body:
    # that example's values are made up; the send-message one fits, below.)
    assert md5_of_body("é") == hashlib.md5("é".encode()).hexdigest()
    assert md5_of_body("") == "d41d8cd98f00b204e9800998ecf8427e"


def test_attribute_digests_as_in_the_receive_message_examples() -> None:
    both = {
        "PostalCode": {"DataType": "String", "StringValue": "ABC123"},
        "City": {"DataType": "String", "StringValue": "Any City"},
    }
    assert shortened(md5_of_attributes(both)) == "9424c491...26bc3ae7"
    postal = {"PostalCode": both["PostalCode"]}
    assert shortened(md5_of_attributes(postal)) == "b8e89563...e088e74f"


def test_binary_and_number_attributes_as_in_the_send_message_example() -> None:
    attributes: dict[str, dict[str, object]] = {
        "City": {"DataType": "String", "StringValue": "Any City"},
        # awscli v1 sends a blob given in a JSON file as the bytes of its text, which
        # botocore base64-encodes: SQS saw (and digested) b"SGVsbG8sIFdvcmxkIQ==".
        "Greeting": {"DataType": "Binary", "BinaryValue": base64.b64encode(b"Hello, World!")},
        "Population": {"DataType": "Number", "StringValue": "1250800"},
    }
    assert shortened(md5_of_body("Information about the largest city in Any Region.")) == (
        "51b0a325...39163aa0"
    )
    assert shortened(md5_of_attributes(attributes)) == "00484c68...59e48f06"


def test_order_does_not_matter_and_types_do() -> None:
    a = {
        "b": {"DataType": "String", "StringValue": "1"},
        "a": {"DataType": "Number", "StringValue": "2"},
    }
    b = dict(reversed(list(a.items())))
    assert md5_of_attributes(a) == md5_of_attributes(b)
    c = {"b": {"DataType": "Number", "StringValue": "1"}, "a": a["a"]}
    assert md5_of_attributes(a) != md5_of_attributes(c)
    custom = {"x": {"DataType": "String.custom", "StringValue": "v"}}
    expected = hashlib.md5(
        b"\x00\x00\x00\x01x" + b"\x00\x00\x00\x0dString.custom" + b"\x01\x00\x00\x00\x01v"
    ).hexdigest()
    assert md5_of_attributes(custom) == expected
