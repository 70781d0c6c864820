"""The JSON 1.0 protocol (what boto3 and current SDKs speak): ``X-Amz-Target:
AmazonSQS.<Action>``, a JSON object in, a JSON object out; errors as ``{"__type",
"message"}`` with the legacy code in ``x-amzn-query-error`` (SQS is awsQueryCompatible)."""

from __future__ import annotations

from typing import Any

import msgspec
from botocore.model import Shape

from cassieq.api.http.bodies import JsonTooDeep, check_json_depth
from cassieq.api.sqs import errors, values
from cassieq.api.sqs.errors import SqsError
from cassieq.api.sqs.model import TARGET_PREFIX

CONTENT_TYPE = "application/x-amz-json-1.0"
_JSON_DECODER = msgspec.json.Decoder()
MAX_NESTING = 16


def action_of(target: str) -> str:
    prefix, _, action = target.partition(".")
    if prefix + "." != TARGET_PREFIX or not action:
        raise errors.SqsError(
            "UnknownOperationException", f"Unknown target {target[:80]!r}.", status=400
        )
    return action


def decode(shape: Shape | None, body: bytes) -> dict[str, Any]:
    if not body.strip():
        raw: Any = {}
    else:
        try:
            # Nesting is capped before decoding: a deep document must not cost recursion.
            check_json_depth(body, MAX_NESTING)
            raw = _JSON_DECODER.decode(body)
        except JsonTooDeep:
            raise errors.serialization_error("The JSON document nests too deeply.") from None
        except msgspec.DecodeError:
            raise errors.serialization_error("The request body is not valid JSON.") from None
        except UnicodeDecodeError:
            # msgspec raises this one (not a DecodeError) for a string's bytes that are not
            # UTF-8: refused, never stored as U+FFFD, nor a 500.
            raise errors.serialization_error(
                "The request body is not valid UTF-8: JSON text must be UTF-8 encoded."
            ) from None
    if not isinstance(raw, dict):
        raise errors.serialization_error("The request body must be a JSON object.")
    if shape is None:
        return {}
    params = _value(shape, raw, "")
    assert isinstance(params, dict)
    return params


def _value(shape: Shape, value: Any, path: str) -> Any:
    if value is None:
        return None
    kind = shape.type_name
    if kind == "structure":
        return _structure(shape, value, path)
    where = path or "request"
    if kind == "list":
        if not isinstance(value, list):
            raise _wrong(where, "a list")
        member = shape.member
        return [_value(member, item, f"{path}.{i + 1}") for i, item in enumerate(value)]
    if kind == "map":
        if not isinstance(value, dict):
            raise _wrong(where, "an object")
        member = shape.value
        return {str(k): _value(member, v, f"{path}.{k}") for k, v in value.items()}
    return _scalar(kind, value, where)


def _structure(shape: Shape, value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _wrong(path or "request", "an object")
    out: dict[str, Any] = {}
    members = shape.members
    for name, item in value.items():
        member = members.get(name)
        if member is not None:  # unknown members are ignored, as SQS does
            decoded = _value(member, item, f"{path}{name}")
            if decoded is not None:
                out[name] = decoded
    values.check_required(shape, out, f"{path}." if path else "")
    return out


def _scalar(kind: str, value: Any, where: str) -> Any:
    if kind == "blob":
        if not isinstance(value, str):
            raise _wrong(where, "a base64 string")
        return values.blob(value, where)
    if kind in ("integer", "long"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise _wrong(where, "an integer")
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            raise _wrong(where, "a boolean")
        return value
    if not isinstance(value, str):
        raise _wrong(where, "a string")
    return value


def _wrong(path: str, expected: str) -> SqsError:
    return errors.serialization_error(f"{path} must be {expected}.")


def encode(result: dict[str, Any]) -> bytes:
    # msgspec writes bytes as base64, as the protocol wants blobs.
    return msgspec.json.encode(result)


def encode_error(error: SqsError) -> tuple[bytes, dict[str, str]]:
    body = msgspec.json.encode(
        {"__type": f"com.amazonaws.sqs#{error.code}", "message": error.message}
    )
    fault = "Sender" if error.sender else "Receiver"
    return body, {"x-amzn-query-error": f"{error.query_code};{fault}"}
