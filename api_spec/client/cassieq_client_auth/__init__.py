"""httpx auth for cassieq, kept beside the generated `cassieq_client` (never regenerated).

from cassieq_client import Client
from cassieq_client_auth import SignedAuth

client = Client(base_url="http://127.0.0.1:8080", httpx_args={"auth": SignedAuth("acme", key)})
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Generator
from datetime import UTC, datetime
from urllib.parse import parse_qsl, quote

import httpx

__all__ = ["GrantAuth", "KeyAuth", "SignedAuth", "sign_request", "sign_request_v2"]


class KeyAuth(httpx.Auth):
    """`Authorization: Key <key>`: the account key itself (every level)."""

    def __init__(self, key: str) -> None:
        self._key = key

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Key {self._key}"
        yield request


def sign_request(account: str, key: str, method: str, path: str, request_time: str) -> str:
    """The wire contract's request signature: HMAC-SHA256 over account, METHOD, path, time."""
    to_sign = "\n".join([account, method.upper(), "/" + path.strip("/"), request_time])
    secret = base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
    digest = hmac.new(secret, to_sign.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def sign_request_v2(
    account: str,
    key: str,
    method: str,
    path: str,
    query: list[tuple[str, str]],
    date: str,
    body: bytes,
) -> str:
    """The v2 signature (CQ2-HMAC-SHA256): HMAC-SHA256 over account, METHOD, path, the
    canonical query (RFC 3986 pairs, sorted), the date as sent and the body's SHA-256."""
    pairs = sorted((quote(k, safe="-_.~"), quote(v, safe="-_.~")) for k, v in query)
    lines = [
        account,
        method.upper(),
        path,
        "&".join(f"{k}={v}" for k, v in pairs),
        date,
        hashlib.sha256(body).hexdigest(),
    ]
    secret = base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
    digest = hmac.new(secret, "\n".join(lines).encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


class SignedAuth(httpx.Auth):
    """Signed requests: the key never leaves. /api/v1: `Authorization: Signed <sig>` +
    `x-cassieq-request-time`. /api/v2, which refuses v1's `Signed` (it covers neither query
    nor body): `Authorization: CQ2-HMAC-SHA256 Key=<key_name>, Signature=<sig>` +
    `x-cassieq-date`, made with the key named ``key_name``."""

    requires_request_body = True  # the v2 signature hashes the body

    def __init__(self, account: str, key: str, key_name: str = "primary") -> None:
        self._account = account
        self._key = key
        self._key_name = key_name

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        now = datetime.now(UTC)
        path = request.url.path
        if path.startswith("/api/v2/"):
            # To the microsecond: identical requests within a second are not replays.
            date = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            query = request.url.params.multi_items()
            signature = sign_request_v2(
                self._account, self._key, request.method, path, query, date, request.content
            )
            request.headers["Authorization"] = (
                f"CQ2-HMAC-SHA256 Key={self._key_name}, Signature={signature}"
            )
            request.headers["x-cassieq-date"] = date
        else:
            at = now.strftime("%Y-%m-%dT%H:%M:%SZ")
            signature = sign_request(self._account, self._key, request.method, path, at)
            request.headers["Authorization"] = f"Signed {signature}"
            request.headers["x-cassieq-request-time"] = at
        yield request


class GrantAuth(httpx.Auth):
    """A signed query string (`auth=..&sig=..`) issued by `POST /api/v1/permissions`."""

    def __init__(self, query_param: str) -> None:
        self._params = parse_qsl(query_param.lstrip("?"), keep_blank_values=True)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.url = request.url.copy_merge_params(dict(self._params))
        yield request
