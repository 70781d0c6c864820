"""Checking a v2 signature (``CQ2-HMAC-SHA256``) on an /api/v2 route.

Answers, all 401 but the full replay cache's 503, each saying what was wrong: a malformed
credential, a missing or unreadable date, a date outside the allowed skew, a signature that
does not match (the same words for an unknown account, an unknown key name and a wrong
signature: accounts and key names cannot be probed), a signature already used.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from datetime import datetime, timedelta

from cassieq.auth.access import AccessRequest, AuthError, Unauthenticated
from cassieq.auth.replay import ReplayCache, ReplayCacheFull
from cassieq.auth.signing import BadTime, matches, parse_time
from cassieq.auth.signing_v2 import (
    DATE_HEADER,
    SCHEME,
    BadCredential,
    Credential,
    parse_credential,
    string_to_sign,
)

# Signed when the account or key name is unknown, so that case costs what a real check does.
_NO_KEY = "cassieq-no-such-key"


class ReplayRoomExhausted(AuthError):
    status = 503


def check_v2_head(req: AccessRequest, credential_text: str) -> tuple[Credential, datetime]:
    """What can be checked of a v2 signature before its body is read: the credential's form
    and the date (present, readable, within the skew, not ahead). A server reads the body of
    a request that fails here not at all (#40: a malformed credential made it read up to
    26.6 MiB first)."""
    try:
        credential = parse_credential(credential_text)
    except BadCredential as exc:
        raise Unauthenticated(str(exc)) from None
    date = req.headers.get(DATE_HEADER)
    if not date:
        raise Unauthenticated(f"a {SCHEME} request needs the {DATE_HEADER} header")
    try:
        signed_at = parse_time(date)
    except BadTime as exc:
        raise Unauthenticated(f"{DATE_HEADER}: {exc}") from None
    skew = timedelta(seconds=req.clock_skew_seconds)
    if abs(req.now - signed_at) > skew:
        raise Unauthenticated(
            f"{DATE_HEADER} is more than {req.clock_skew_seconds} s from the server's clock"
        )
    if (signed_at - req.now).total_seconds() > req.clock_ahead_seconds:
        # A date ahead would be remembered for longer than the skew (up to twice it):
        # the replay cache's room is not for requests from the future.
        raise Unauthenticated(
            f"{DATE_HEADER} is more than {req.clock_ahead_seconds:g} s ahead of the server's clock"
        )
    return credential, signed_at


def authorize_v2(
    req: AccessRequest,
    credential_text: str,
    query: Iterable[tuple[str, str]],
    body: bytes,
    replay: ReplayCache,
    recorded: str | None = None,
) -> str:
    """The verified signature. ``recorded``: the signature this same request already had
    remembered by ``replay`` (a route checking a second queue): not a replay of itself."""
    credential, signed_at = check_v2_head(req, credential_text)
    date = req.headers[DATE_HEADER]
    skew = timedelta(seconds=req.clock_skew_seconds)
    to_sign = string_to_sign(req.account_name, req.method, req.path, query, date, body)
    keys = req.account.keys if req.account is not None else {}
    key = keys.get(credential.key_name)
    # matches() compares in constant time; an unknown name still pays for one HMAC.
    valid = matches(credential.signature, key or _NO_KEY, to_sign) and key is not None
    if not valid:
        raise Unauthenticated(
            "invalid signature, or unknown account or key name: the signature must cover "
            "this request's account, method, path, query, date and body"
        )
    if recorded is not None and hmac.compare_digest(recorded, credential.signature):
        return credential.signature
    # Only a verified signature is remembered: nobody without a key can fill the cache.
    try:
        replayed = replay.seen(credential.signature, signed_at + skew, req.now, req.account_name)
    except ReplayCacheFull as exc:
        raise ReplayRoomExhausted(str(exc)) from None
    if replayed:
        raise Unauthenticated(
            "replayed request: this signature was already used; sign every request anew"
        )
    return credential.signature
