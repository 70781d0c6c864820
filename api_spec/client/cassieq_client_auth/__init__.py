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
from urllib.parse import parse_qsl

import httpx

__all__ = ["GrantAuth", "KeyAuth", "SignedAuth", "sign_request"]


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


class SignedAuth(httpx.Auth):
    """`Authorization: Signed <sig>` + `x-cassieq-request-time`: the key never leaves."""

    def __init__(self, account: str, key: str) -> None:
        self._account = account
        self._key = key

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        signature = sign_request(self._account, self._key, request.method, request.url.path, now)
        request.headers["Authorization"] = f"Signed {signature}"
        request.headers["x-cassieq-request-time"] = now
        yield request


class GrantAuth(httpx.Auth):
    """A signed query string (`auth=..&sig=..`) issued by `POST /api/v1/permissions`."""

    def __init__(self, query_param: str) -> None:
        self._params = parse_qsl(query_param.lstrip("?"), keep_blank_values=True)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.url = request.url.copy_merge_params(dict(self._params))
        yield request
