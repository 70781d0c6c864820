"""The query protocol (the older SDKs, curl, AWS's API reference examples): form-encoded
or query-string ``Action=..&Version=..`` parameters with flattened names
(``SendMessageBatchRequestEntry.1.Id``, ``MessageAttribute.1.Value.StringValue``,
``Attribute.1.Name``, ``AttributeName.1``, ``Tag.1.Key``...), answered in XML:
``<XResponse><XResult>..</XResult><ResponseMetadata><RequestId>..`` and
``<ErrorResponse><Error><Type/><Code/><Message/>..``."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote_to_bytes
from xml.sax.saxutils import escape

from botocore.model import Shape

from cassieq.api.sqs import errors, values
from cassieq.api.sqs.errors import SqsError
from cassieq.api.sqs.model import XML_NAMESPACE, list_item_name, map_entry_names

CONTENT_TYPE = "text/xml"
MAX_PARAMETERS = 2000  # 10 entries x 10 attributes x a few names each is far below
# The longest SQS names, e.g. SendMessageBatchRequestEntry.10.MessageAttribute.10.Value
# .StringListValue.1, have 7 dots and under 100 characters.
MAX_NAME_LENGTH = 256
MAX_NAME_DOTS = 10
_XML_ESCAPES = {"\r": "&#xD;", '"': "&quot;"}  # a CR would be lost to XML's line endings


def form_pairs(raw: bytes, where: str) -> list[tuple[str, str]]:
    """``application/x-www-form-urlencoded`` pairs (a query string or a form body), as
    ``parse_qsl(keep_blank_values=True)`` reads them, but each name and value decoded as
    strict UTF-8 after percent-decoding: a parameter whose bytes are not UTF-8 is refused,
    naming it (parse_qsl would store U+FFFD in its place, a message body changed silently)."""
    pairs = []
    for piece in raw.split(b"&"):
        if not piece:
            continue
        name, _, value = piece.partition(b"=")
        pairs.append((_utf8(name, where, None), _utf8(value, where, name)))
    return pairs


def _utf8(raw: bytes, where: str, name: bytes | None) -> str:
    try:
        return unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError as exc:
        shown = "A parameter name" if name is None else f"The value of parameter {_shown(name)}"
        raise errors.invalid_parameter_value(
            f"{shown} in the {where} is not valid UTF-8 once percent-decoded "
            f"(byte 0x{exc.object[exc.start]:02X} at offset {exc.start} of the decoded text)."
        ) from None


def _shown(name: bytes) -> str:
    # The name as far as it is readable: enough to find the parameter, never the whole input.
    return unquote_to_bytes(name.replace(b"+", b" ")).decode("utf-8", "replace")[:100]


def decode(shape: Shape | None, flat: Mapping[str, str]) -> dict[str, Any]:
    if len(flat) > MAX_PARAMETERS:
        raise errors.invalid_parameter_value(
            f"A request takes at most {MAX_PARAMETERS} parameters."
        )
    if shape is None:
        return {}
    decoded = _structure(shape, flat, "", _Index(flat))
    return decoded or {}


class _Index:
    """The indices present under each name prefix (one scan of the names)."""

    def __init__(self, flat: Mapping[str, str]) -> None:
        self.names = set(flat)
        self.indices: dict[str, set[int]] = {}
        self.prefixes: set[str] = set()
        for name in flat:
            if len(name) > MAX_NAME_LENGTH or name.count(".") > MAX_NAME_DOTS:
                continue  # no SQS parameter looks like this: ignored as unknown, unscanned
            parts = name.split(".")
            for i in range(1, len(parts)):
                base = ".".join(parts[:i])
                self.prefixes.add(base)
                if parts[i].isdigit() and len(parts[i]) <= 6:
                    self.indices.setdefault(base, set()).add(int(parts[i]))


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _location(member: Shape, name: str, prefix: str) -> str:
    if member.type_name == "list":
        return _join(prefix, list_item_name(member.name, name))
    if member.type_name == "map":
        return _join(prefix, map_entry_names(member.name, name)[0])
    return _join(prefix, name)


def _structure(
    shape: Shape, flat: Mapping[str, str], prefix: str, index: _Index
) -> dict[str, Any] | None:
    if prefix and prefix not in index.prefixes:
        return None
    out: dict[str, Any] = {}
    for name, member in shape.members.items():
        value = _value(member, name, flat, _location(member, name, prefix), index)
        if value is not None:
            out[name] = value
    values.check_required(shape, out, f"{prefix}." if prefix else "")
    return out


def _value(shape: Shape, name: str, flat: Mapping[str, str], at: str, index: _Index) -> Any:
    kind = shape.type_name
    if kind == "structure":
        return _structure(shape, flat, at, index)
    if kind == "list":
        found = sorted(index.indices.get(at, ()))
        if not found:
            return None
        item = shape.member
        items = [_value(item, name, flat, f"{at}.{i}", index) for i in found]
        return [x for x in items if x is not None]
    if kind == "map":
        found = sorted(index.indices.get(at, ()))
        if not found:
            return None
        _, key_name, value_name = map_entry_names(shape.name, name)
        out: dict[str, Any] = {}
        for i in found:
            key = flat.get(f"{at}.{i}.{key_name}")
            if key is None:
                raise errors.missing_parameter(f"{at}.{i}.{key_name}")
            value_shape = shape.value
            value = _value(value_shape, name, flat, f"{at}.{i}.{value_name}", index)
            if value is None:
                raise errors.missing_parameter(f"{at}.{i}.{value_name}")
            out[key] = value
        return out
    raw = flat.get(at)
    if raw is None:
        return None
    if kind == "blob":
        return values.blob(raw, at)
    if kind in ("integer", "long"):
        return values.integer(raw, at)
    if kind == "boolean":
        return values.boolean(raw, at)
    return raw


# --- XML --------------------------------------------------------------------------------------


def encode(action: str, shape: Shape | None, result: dict[str, Any], request_id: str) -> bytes:
    inner = ""
    if shape is not None:
        inner = f"<{action}Result>{_members(shape, result)}</{action}Result>"
    return (
        f'<?xml version="1.0"?><{action}Response xmlns="{XML_NAMESPACE}">{inner}'
        f"<ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata>"
        f"</{action}Response>"
    ).encode()


def encode_error(error: SqsError, request_id: str) -> bytes:
    fault = "Sender" if error.sender else "Receiver"
    return (
        f'<?xml version="1.0"?><ErrorResponse xmlns="{XML_NAMESPACE}"><Error>'
        f"<Type>{fault}</Type><Code>{_text(error.query_code)}</Code>"
        f"<Message>{_text(error.message)}</Message><Detail/></Error>"
        f"<RequestId>{request_id}</RequestId></ErrorResponse>"
    ).encode()


def _members(shape: Shape, value: Mapping[str, Any]) -> str:
    parts = []
    for name, member in shape.members.items():
        if value.get(name) is not None:
            parts.append(_element(member, name, value[name]))
    return "".join(parts)


def _element(shape: Shape, name: str, value: Any) -> str:
    kind = shape.type_name
    if kind == "list":
        item_name = list_item_name(shape.name, name)
        item = shape.member
        return "".join(_element(item, item_name, v) for v in value)
    if kind == "map":
        entry, key_name, value_name = map_entry_names(shape.name, name)
        item = shape.value
        return "".join(
            f"<{entry}><{key_name}>{_text(str(k))}</{key_name}>"
            f"{_element(item, value_name, v)}</{entry}>"
            for k, v in value.items()
        )
    if kind == "structure":
        return f"<{name}>{_members(shape, value)}</{name}>"
    return f"<{name}>{_scalar(kind, value)}</{name}>"


def _scalar(kind: str, value: Any) -> str:
    if kind == "blob":
        return base64.b64encode(bytes(value)).decode("ascii")
    if kind == "boolean":
        return "true" if value else "false"
    return _text(str(value))


def _text(value: str) -> str:
    return escape(value, _XML_ESCAPES)
