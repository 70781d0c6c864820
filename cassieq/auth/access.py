"""Who may do what on the queue API: the three credential schemes of the wire contract.

No, malformed or unverifiable credentials -> Unauthenticated (401), and a grant for another
queue, expired or not yet valid is unverifiable (CassieQ answers 401 there); valid
credentials that lack the route's level -> Forbidden (403).
Every secret comparison is constant-time; a signature is checked against every key of
the account, so keys rotate without downtime.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from cassieq.auth.signing import (
    REQUEST_TIME_HEADER,
    BadTime,
    matches,
    parse_time,
    query_string_to_sign,
    request_string_to_sign,
)
from cassieq.model import Account, AuthorizationLevel

SHORT_FORMS = {level.short_form: level for level in AuthorizationLevel}

# How long a grant issued without an end time is valid (#40 finding 10: such a grant never
# expired). Seven days, from its issue or its later start: the longest life AWS gives a
# presigned URL, so what a production user of shareable signed URLs already expects; long
# enough for a weekly job, short enough that a leaked grant dies on its own. A grant that
# must live longer names its end time.
GRANT_DEFAULT_LIFETIME = timedelta(days=7)


class InvalidGrantWindow(ValueError):
    """A grant whose end is not after its start: it could never be valid."""


def grant_end(start: datetime | None, end: datetime | None, now: datetime) -> datetime:
    """The end time a grant is issued with: ``end`` when given (after ``start``, to the
    second, as times are signed), else ``GRANT_DEFAULT_LIFETIME`` after its issue (``now``)
    or its start, whichever is later."""
    start_s = None if start is None else start.replace(microsecond=0)
    if end is None:
        try:
            return max(start_s or now, now).replace(microsecond=0) + GRANT_DEFAULT_LIFETIME
        except OverflowError:
            raise InvalidGrantWindow(
                "startTime is too late for a grant without endTime (it would end after the "
                "year 9999): give an endTime"
            ) from None
    end_s = end.replace(microsecond=0)
    if start_s is not None and end_s <= start_s:
        raise InvalidGrantWindow(
            f"endTime ({end_s:%Y-%m-%dT%H:%M:%SZ}) must be after startTime "
            f"({start_s:%Y-%m-%dT%H:%M:%SZ}): such a grant could never be valid"
        )
    return end_s


class AuthError(Exception):
    status = 401


class Unauthenticated(AuthError):
    status = 401


class Forbidden(AuthError):
    status = 403


@dataclass(frozen=True)
class AccessRequest:
    account_name: str
    account: Account | None  # None: no such account (answered like a bad key)
    method: str
    path: str
    headers: Mapping[str, str]
    query: Mapping[str, str]
    now: datetime
    clock_skew_seconds: int
    # How far ahead of the server's clock a v2 date may be (the replay cache's bound).
    clock_ahead_seconds: float = 5.0


# Why v1's ``Signed`` is refused on /api/v2 (#40 finding 10), said in the 401's detail.
V1_SIGNED_ON_V2 = (
    "v1 'Signed' is not accepted on /api/v2: it signs neither the query nor the body, so a "
    "captured request could be re-sent with others for its whole clock skew; sign with "
    "'CQ2-HMAC-SHA256 Key=<keyName>, Signature=<sig>' and the x-cassieq-date header "
    "(api-v2.md, \"v2 signature\"), or send 'Key <key>' over TLS"
)


def authorize(
    req: AccessRequest,
    level: AuthorizationLevel,
    queue: str | None,
    *,
    v1_signed: bool = True,
) -> None:
    """``v1_signed``: whether v1's ``Signed`` scheme is accepted. /api/v1 accepts it
    (CassieQ's contract, with its 60 s window); /api/v2 does not: there v2's replay
    protection would cover only the clients that chose CQ2."""
    if "sig" in req.query or "auth" in req.query:
        _signed_query(req, level, queue)
        return
    header = req.headers.get("authorization", "")
    scheme, _, credential = header.partition(" ")
    credential = credential.strip()
    if not header:
        raise Unauthenticated("credentials required: Authorization header or a signed query string")
    if scheme == "Key" and credential:
        _key(req, credential)
    elif scheme == "Signed" and credential and not v1_signed:
        raise Unauthenticated(V1_SIGNED_ON_V2)
    elif scheme == "Signed" and credential:
        _signed_request(req, credential)
    elif not v1_signed:
        raise Unauthenticated(
            "unsupported Authorization scheme: use 'CQ2-HMAC-SHA256 Key=<keyName>, "
            "Signature=<sig>' or 'Key <key>'"
        )
    else:
        raise Unauthenticated("unsupported Authorization scheme: use 'Key <key>' or 'Signed <sig>'")


def _keys(req: AccessRequest) -> list[str]:
    return list(req.account.keys.values()) if req.account is not None else []


def _key(req: AccessRequest, credential: str) -> None:
    # Compare against every key without stopping early: timing tells nothing.
    found = False
    for key in _keys(req):
        found |= hmac.compare_digest(key.encode(), credential.encode())
    if not found:
        raise Unauthenticated("unknown account or invalid key")


def _signed_request(req: AccessRequest, signature: str) -> None:
    raw_time = req.headers.get(REQUEST_TIME_HEADER)
    if not raw_time:
        raise Unauthenticated(f"a Signed request needs the {REQUEST_TIME_HEADER} header")
    try:
        request_time = parse_time(raw_time)
        to_sign = request_string_to_sign(req.account_name, req.method, req.path, raw_time)
    except BadTime as exc:
        raise Unauthenticated(f"{REQUEST_TIME_HEADER}: {exc}") from None
    if abs((req.now - request_time).total_seconds()) > req.clock_skew_seconds:
        raise Unauthenticated(
            f"{REQUEST_TIME_HEADER} is more than {req.clock_skew_seconds} s from the server's clock"
        )
    if not _any_key_signed(req, signature, to_sign):
        raise Unauthenticated("unknown account or invalid signature")


def _signed_query(req: AccessRequest, level: AuthorizationLevel, queue: str | None) -> None:
    q = req.query
    levels, signature = q.get("auth"), q.get("sig")
    if not levels or not signature:
        raise Unauthenticated("a signed query string needs both 'auth' and 'sig'")
    unknown = sorted(set(levels) - set(SHORT_FORMS))
    if unknown:
        raise Unauthenticated(f"unknown authorization levels in 'auth': {''.join(unknown)}")
    try:
        start = parse_time(q["st"]) if "st" in q else None
        end = parse_time(q["et"]) if "et" in q else None
        to_sign = query_string_to_sign(
            req.account_name, levels, q.get("st"), q.get("et"), q.get("q")
        )
    except BadTime as exc:
        raise Unauthenticated(f"st/et: {exc}") from None
    if not _any_key_signed(req, signature, to_sign):
        raise Unauthenticated("unknown account or invalid signature")
    # Out of its scope a grant verifies nothing: 401, as CassieQ answers.
    if "q" in q and q["q"] != queue:
        raise Unauthenticated("this grant is for another queue")
    if start is not None and req.now < start:
        raise Unauthenticated("this grant is not valid yet (st)")
    if end is not None and req.now > end:
        raise Unauthenticated("this grant has expired (et)")
    if level.short_form not in levels:
        raise Forbidden(f"this grant does not include {level.wire_name} ({level.short_form})")


def _any_key_signed(req: AccessRequest, signature: str, to_sign: str) -> bool:
    found = False
    for key in _keys(req):
        found |= matches(signature, key, to_sign)
    return found


def admin_token_matches(header: str, token: str | None) -> bool:
    """``Bearer <token>``, the scheme in any case (RFC 9110: schemes are case-insensitive).

    Both sides are hashed first: compare_digest's time still depends on whether the
    lengths differ, a SHA-256 digest's length never does, so timing tells nothing about
    the token's length either."""
    scheme, _, presented = header.strip().partition(" ")
    presented = presented.strip()
    if not token or not presented or scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(
        hashlib.sha256(presented.encode()).digest(), hashlib.sha256(token.encode()).digest()
    )
