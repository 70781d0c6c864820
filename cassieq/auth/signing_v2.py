"""The v2 request signature (api-v2.md, "v2 signature"): both sides of it.

    Authorization: CQ2-HMAC-SHA256 Key=<keyName>, Signature=<sig>
    x-cassieq-date: 2026-11-22T10:00:00Z

The string to sign is six lines: account, METHOD, path, canonical query, the date header's
text exactly as sent, and the hex SHA-256 of the body. Unlike v1's ``Signed``, the query and
the body are covered, so a captured signature cannot be re-sent with another query or body;
the server's replay cache (cassieq/auth/replay.py) refuses it re-sent as it was.

Query and path are signed as the server decodes them (percent-decoding done): what is
signed is what the route acts on, whatever way the client chose to percent-encode.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote

from cassieq.auth.signing import sign

SCHEME = "CQ2-HMAC-SHA256"
DATE_HEADER = "x-cassieq-date"

# Key=<name>, Signature=<sig>: key names are [a-zA-Z0-9_.-]+, signatures base64url.
_CREDENTIAL = re.compile(
    r"^\s*Key\s*=\s*(?P<key>[A-Za-z0-9_.\-]+)\s*,\s*Signature\s*=\s*(?P<sig>[A-Za-z0-9_\-]+)\s*$"
)

QueryItems = Iterable[tuple[str, str]] | Mapping[str, str]


class BadCredential(ValueError):
    """An Authorization value of this scheme that is not ``Key=<name>, Signature=<sig>``."""


@dataclass(frozen=True)
class Credential:
    key_name: str
    signature: str


def parse_credential(text: str) -> Credential:
    """The part after the scheme word."""
    match = _CREDENTIAL.match(text)
    if match is None:
        raise BadCredential(f"{SCHEME} needs 'Key=<keyName>, Signature=<signature>'")
    return Credential(match["key"], match["sig"])


def _encode(text: str) -> str:
    # RFC 3986: only unreserved characters stay as they are; UTF-8 bytes otherwise, %XX upper.
    return quote(text, safe="-_.~")


def canonical_query(query: QueryItems) -> str:
    """``name=value`` pairs joined by ``&``, each side percent-encoded as RFC 3986, sorted by
    the encoded name, then the encoded value (repeated parameters keep every value)."""
    items = query.items() if isinstance(query, Mapping) else query
    pairs = sorted((_encode(name), _encode(value)) for name, value in items)
    return "&".join(f"{name}={value}" for name, value in pairs)


def body_hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def string_to_sign(
    account: str, method: str, path: str, query: QueryItems, date: str, body: bytes
) -> str:
    return "\n".join([account, method.upper(), path, canonical_query(query), date, body_hash(body)])


def sign_v2(
    account: str,
    key_name: str,
    key: str,
    method: str,
    path: str,
    query: QueryItems,
    body: bytes,
    now: datetime,
) -> dict[str, str]:
    """The headers that sign one request: for the CLI, bench and chaos clients, and tests.

    ``path`` is the URL path without the query (e.g. ``/api/v2/accounts/a/queues/q/messages``);
    ``query`` the parameters the request sends; ``body`` its exact bytes. Sign each request
    anew: the server refuses a signature it has seen (replay cache)."""
    # To the microsecond (the date is signed as sent, any ISO form): two identical requests
    # signed within one second, as a drain's receives, must not carry the same signature,
    # or the second would be refused as a replay of the first. A whole second is written
    # without its fraction.
    at = now.astimezone(UTC)
    date = at.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if at.microsecond else "%Y-%m-%dT%H:%M:%SZ")
    signature = sign(key, string_to_sign(account, method, path, query, date, body))
    return {"Authorization": f"{SCHEME} Key={key_name}, Signature={signature}", DATE_HEADER: date}
