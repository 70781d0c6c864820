"""Parameter values checked against their shape (both codecs): an SqsError names the
parameter, never a 500."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from botocore.model import Shape

from cassieq.api.sqs import errors

MAX_DEPTH = 8  # SQS shapes nest 4 deep; deeper input is not SQS's


def check_required(shape: Shape, value: dict[str, Any], path: str) -> None:
    for name in getattr(shape, "required_members", []):
        if value.get(name) is None:
            raise errors.missing_parameter(f"{path}{name}")


def blob(value: str, path: str) -> bytes:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise errors.invalid_parameter_value(f"{path} is not valid base64.") from None


def integer(value: str, path: str) -> int:
    text = value.strip()
    digits = text[1:] if text[:1] in "+-" else text
    if not digits.isdigit() or len(digits) > 18:
        raise errors.invalid_parameter_value(
            f"Value {value[:40]!r} for parameter {path} is invalid. Reason: must be an integer."
        )
    return int(text)


def boolean(value: str, path: str) -> bool:
    lowered = value.lower()
    if lowered not in ("true", "false"):
        raise errors.invalid_parameter_value(
            f"Value {value[:40]!r} for parameter {path} is invalid. Reason: must be a boolean."
        )
    return lowered == "true"
