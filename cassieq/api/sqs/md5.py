"""The MD5 digests SQS returns with a message (MD5OfMessageBody, MD5OfMessageAttributes,
MD5OfMessageSystemAttributes); SDKs check them against what they sent.

Attributes are digested in name order, each as: name, data type, a transport byte
(1 string, 2 binary, 3 string list, 4 binary list) and the value(s), every string and
byte value preceded by its length as a 4-byte big-endian integer.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping
from typing import Any

STRING, BINARY, STRING_LIST, BINARY_LIST = 1, 2, 3, 4


def md5_of_body(body: str) -> str:
    return hashlib.md5(body.encode("utf-8"), usedforsecurity=False).hexdigest()


def md5_of_attributes(attributes: Mapping[str, Mapping[str, Any]]) -> str:
    """Over attributes in the JSON protocol's shape ({"DataType", "StringValue" |
    "BinaryValue" (bytes) | "StringListValues" | "BinaryListValues"})."""
    digest = hashlib.md5(usedforsecurity=False)
    for name in sorted(attributes):
        value = attributes[name]
        digest.update(_sized(name.encode("utf-8")))
        digest.update(_sized(str(value.get("DataType", "")).encode("utf-8")))
        if value.get("StringValue") is not None:
            digest.update(bytes([STRING]) + _sized(str(value["StringValue"]).encode("utf-8")))
        elif value.get("BinaryValue") is not None:
            digest.update(bytes([BINARY]) + _sized(bytes(value["BinaryValue"])))
        elif value.get("StringListValues"):
            digest.update(bytes([STRING_LIST]))
            for item in value["StringListValues"]:
                digest.update(_sized(str(item).encode("utf-8")))
        elif value.get("BinaryListValues"):
            digest.update(bytes([BINARY_LIST]))
            for item in value["BinaryListValues"]:
                digest.update(_sized(bytes(item)))
    return digest.hexdigest()


# Message system attributes (AWSTraceHeader) are digested the same way.
md5_of_system_attributes = md5_of_attributes


def _sized(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data
