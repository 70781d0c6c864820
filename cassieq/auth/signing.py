"""The wire contract's signatures: request signing and signed query strings.

Both are HMAC-SHA256 keyed with the key's bytes (the key string base64url-decoded),
encoded base64url without padding. Comparisons are constant-time.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
from datetime import UTC, datetime

from cassieq.auth.b64url import b64url_decode, b64url_encode

# The header carrying the time a Signed request was signed at (wire contract).
REQUEST_TIME_HEADER = "x-cassieq-request-time"


class BadTime(ValueError):
    """A time that is not ISO-8601."""


def decode_key(key: str) -> bytes:
    """The key's bytes; keys are base64url without padding."""
    try:
        return b64url_decode(key)
    except (binascii.Error, ValueError):
        # Not a key this server issued; sign with its text so comparison simply fails.
        return key.encode()


def sign(key: str, string_to_sign: str) -> str:
    digest = hmac.new(decode_key(key), string_to_sign.encode(), hashlib.sha256).digest()
    return b64url_encode(digest)


def matches(signature: str, key: str, string_to_sign: str) -> bool:
    return hmac.compare_digest(sign(key, string_to_sign).encode(), signature.encode())


def parse_time(value: str) -> datetime:
    """Any ISO-8601 time with an offset (or 'Z'); naive times are taken as UTC."""
    try:
        parsed = datetime.fromisoformat(value.strip().replace("z", "Z").replace("Z", "+00:00"))
        # Converting year 1 or 9999 with an offset overflows: that is a bad time too.
        return parsed.replace(tzinfo=parsed.tzinfo or UTC).astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise BadTime(f"{value!r} is not an ISO-8601 time such as 2026-11-21T10:00:00Z") from exc


def canonical_time(value: datetime) -> str:
    """UTC, whole seconds, written with 'Z': the form that is signed."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def request_string_to_sign(account: str, method: str, path: str, request_time: str) -> str:
    """account, METHOD, '/' + path trimmed of slashes, canonical request time."""
    return "\n".join(
        [account, method.upper(), "/" + path.strip("/"), canonical_time(parse_time(request_time))]
    )


def query_string_to_sign(
    account: str,
    levels: str,
    start: str | None = None,
    end: str | None = None,
    queue: str | None = None,
) -> str:
    lines = [account, levels]
    if start is not None:
        lines.append(f"startTime:{canonical_time(parse_time(start))}")
    if end is not None:
        lines.append(f"endTime:{canonical_time(parse_time(end))}")
    if queue is not None:
        lines.append(f"q:{queue}")
    return "\n".join(lines)


def signed_headers(account: str, key: str, method: str, path: str) -> dict[str, str]:
    """The headers of a request signed now with ``key``: the key itself never travels."""
    now = canonical_time(datetime.now(UTC))
    signature = sign(key, request_string_to_sign(account, method, path, now))
    return {"Authorization": f"Signed {signature}", REQUEST_TIME_HEADER: now}
