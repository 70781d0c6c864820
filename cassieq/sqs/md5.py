"""(Stand-in until sqs-h1's md5.py is merged.) SQS's MD5 digests."""

from __future__ import annotations

import hashlib
import struct
from typing import Any


def md5_of_body(body: str) -> str:
    return hashlib.md5(body.encode(), usedforsecurity=False).hexdigest()


def md5_of_attributes(attrs: dict[str, dict[str, Any]]) -> str:
    digest = hashlib.md5(usedforsecurity=False)

    def part(data: bytes) -> None:
        digest.update(struct.pack(">I", len(data)) + data)

    for name in sorted(attrs):
        value = attrs[name]
        part(name.encode())
        part(value["DataType"].encode())
        if value.get("BinaryValue") is not None:
            digest.update(b"\x02")
            part(value["BinaryValue"])
        else:
            digest.update(b"\x01")
            part(value["StringValue"].encode())
    return digest.hexdigest()
