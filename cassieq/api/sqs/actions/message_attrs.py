"""SQS message attributes: validated as SQS does, stored as the engine keeps them (values
as strings, Binary as base64, the DataType apart), answered in SQS's shape again."""

from __future__ import annotations

import base64
import binascii
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from cassieq.api.sqs import errors

MAX_ATTRIBUTES = 10
MAX_NAME = 256
MAX_TYPE = 256
_NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")
_TYPE_RE = re.compile(r"(String|Number|Binary)(\.[^\s]+)?")
# The characters SQS allows in a body or a string value (XML 1.0's): any other is refused.
_BAD_CHAR_RE = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_RESERVED_PREFIXES = ("aws.", "amazon.")
MAX_NUMBER_DIGITS = 38


class Stored:
    """A message's attributes as the engine keeps them."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.types: dict[str, str] = {}
        self.size = 0  # bytes SQS counts: names, types and values


def check_text(what: str, text: str) -> None:
    if _BAD_CHAR_RE.search(text):
        raise errors.invalid_message_contents(
            f"Invalid characters found in {what}. Valid characters are #x9 | #xA | #xD | "
            "#x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"
        )


def _name_problem(name: str) -> str | None:
    if not name:
        return "The message attribute name must not be empty."
    if len(name) > MAX_NAME:
        return f"Message attribute name '{name}' must be at most {MAX_NAME} characters."
    if not _NAME_RE.fullmatch(name) or ".." in name or name[0] == "." or name[-1] == ".":
        return (
            f"Message attribute name '{name}' is invalid: use A-Z, a-z, 0-9, '_', '-' "
            "and '.' (not first, not last, not twice in a row)."
        )
    if name.lower().startswith(_RESERVED_PREFIXES):
        return f"Message attribute name '{name}' must not start with AWS. or Amazon."
    return None


def to_stored(attributes: Any) -> Stored:
    """``MessageAttributes`` of a send, validated; InvalidParameterValue (or
    InvalidMessageContents) on the first problem, as SQS answers."""
    out = Stored()
    if attributes is None:
        return out
    if not isinstance(attributes, dict):
        raise errors.invalid_parameter_value("MessageAttributes must be a map.")
    if len(attributes) > MAX_ATTRIBUTES:
        raise errors.invalid_parameter_value(
            f"Number of message attributes [{len(attributes)}] exceeds the allowed maximum "
            f"[{MAX_ATTRIBUTES}]."
        )
    for name, value in attributes.items():
        if (problem := _name_problem(name)) is not None:
            raise errors.invalid_parameter_value(problem)
        if not isinstance(value, dict):
            raise errors.invalid_parameter_value(f"Message attribute '{name}' must be a map.")
        data_type = value.get("DataType")
        if not isinstance(data_type, str) or not data_type:
            raise errors.invalid_parameter_value(
                f"The message attribute '{name}' must contain non-empty message attribute type."
            )
        match = _TYPE_RE.fullmatch(data_type)
        if match is None or len(data_type) > MAX_TYPE:
            raise errors.invalid_parameter_value(
                f"The type of message (user) attribute '{name}' is invalid. You must use only "
                "the following supported type prefixes: Binary, Number, String."
            )
        if value.get("StringListValues") or value.get("BinaryListValues"):
            raise errors.invalid_parameter_value(
                f"Message attribute '{name}': list values are not supported."
            )
        kind = match.group(1)
        stored = _value(name, kind, value)
        out.values[name] = stored if kind != "Binary" else base64.b64encode(stored).decode()
        out.types[name] = data_type
        size = len(stored) if isinstance(stored, bytes) else len(stored.encode())
        out.size += len(name.encode()) + len(data_type.encode()) + size
    return out


def _value(name: str, kind: str, value: dict[str, Any]) -> Any:
    field = "BinaryValue" if kind == "Binary" else "StringValue"
    other = "StringValue" if kind == "Binary" else "BinaryValue"
    given: Any = value.get(field)
    if value.get(other) is not None:
        raise errors.invalid_parameter_combination(
            f"Message attribute '{name}' of type {kind} must have only a {field}."
        )
    empty = given is None or len(given) == 0
    if empty or not isinstance(given, bytes if kind == "Binary" else str):
        raise errors.invalid_parameter_value(
            f"The message attribute '{name}' with type '{kind}' must use field '{field}'."
            if not empty
            else f"The message attribute '{name}' must contain non-empty message attribute "
            f"value for message attribute type '{kind}'."
        )
    if kind == "String":
        check_text(f"the value of message attribute '{name}'", str(given))
    if kind == "Number":
        _check_number(name, str(given))
    return given


def _check_number(name: str, text: str) -> None:
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        number = None
    if number is None or not number.is_finite() or text != text.strip():
        raise errors.invalid_parameter_value(
            f"Can't cast the value of message (user) attribute '{name}' to a number."
        )
    digits = len(number.normalize().as_tuple().digits)
    if digits > MAX_NUMBER_DIGITS or (number and not -128 <= number.adjusted() <= 126):
        raise errors.invalid_parameter_value(
            f"Value {text} for message attribute '{name}' is out of range: at most "
            f"{MAX_NUMBER_DIGITS} digits, between 10^-128 and 10^126."
        )


def to_sqs(values: dict[str, str], types: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Stored attributes in SQS's shape (an attribute with no type, sent through v1/v2, is
    a String)."""
    out: dict[str, dict[str, Any]] = {}
    for name, text in values.items():
        data_type = types.get(name, "String")
        if data_type.startswith("Binary"):
            try:
                out[name] = {"DataType": data_type, "BinaryValue": base64.b64decode(text)}
            except (binascii.Error, ValueError):
                out[name] = {"DataType": "String", "StringValue": text}
        else:
            out[name] = {"DataType": data_type, "StringValue": text}
    return out


def selected(names: Any, attributes: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The attributes ``MessageAttributeNames`` asks for: "All" or ".*", names, "prefix.*"."""
    if not names:
        return {}
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise errors.invalid_parameter_value("MessageAttributeNames must be a list of names.")
    if "All" in names or ".*" in names:
        return dict(attributes)
    exact = {n for n in names if not n.endswith(".*")}
    prefixes = tuple(n[:-1] for n in names if n.endswith(".*"))
    return {
        name: value
        for name, value in attributes.items()
        if name in exact or (prefixes and name.startswith(prefixes))
    }
