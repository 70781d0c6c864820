"""#40 finding 10: v1's ``Signed`` is refused on /api/v2, on both stores.

``Signed`` signs neither the query nor the body: accepted on /api/v2, a captured request could
be re-sent with another body for its whole clock skew, and v2's replay cache would protect
only the clients that chose CQ2. /api/v1 keeps accepting it (CassieQ's contract). The
signatures here are made from the wire contract's text, independently of cassieq's code.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from cassieq.auth.signing_v2 import sign_v2
from cassieq.config import Settings
from cassieq.engine.clock import SystemClock
from cassieq.store.base import Store
from tests.conftest import AppClient, app_client

TOKEN = "v1-signed-on-v2-operator-token"


def v1_signed(account: str, key: str, method: str, path: str) -> dict[str, str]:
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    to_sign = f"{account}\n{method}\n/{path.strip('/')}\n{at}"
    raw_key = base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
    mac = hmac.new(raw_key, to_sign.encode(), hashlib.sha256).digest()
    signature = base64.urlsafe_b64encode(mac).decode().rstrip("=")
    return {"Authorization": f"Signed {signature}", "x-cassieq-request-time": at}


@pytest.fixture
def api(store: Store) -> Iterator[AppClient[SystemClock]]:
    settings = Settings(admin_token=TOKEN)
    with app_client(AppClient, store, settings, SystemClock(), prefix="v1sig") as client:
        client.create_v1_queue("q")
        yield client


def _size(api: AppClient[SystemClock]) -> int:
    got = api.client.get(f"{api.v1}/queues/q/statistics", headers=api.auth)
    assert got.status_code == 200, got.text
    size: int = got.json()["size"]
    return size


def test_v1_signed_is_refused_on_v2_saying_to_use_cq2(api: AppClient[SystemClock]) -> None:
    path = f"{api.v2}/queues/q/messages"
    headers = v1_signed(api.account, api.key, "POST", path)
    for body in (b'{"messages": [{"body": "one"}]}', b'{"messages": [{"body": "other"}]}'):
        refused = api.client.post(path, content=body, headers=headers)
        assert refused.status_code == 401, refused.text
        assert refused.headers["content-type"] == "application/json"
        answer = refused.json()
        # v2's error shape (api-v2.md): {"code", "message", "detail"?}, the reason in message.
        assert set(answer) <= {"code", "message", "detail"} and answer["code"] == 401
        assert "'Signed' is not accepted on /api/v2" in answer["message"]
        assert "CQ2-HMAC-SHA256" in answer["message"]
        # The challenge names the schemes v2 takes: no longer Signed.
        challenge = refused.headers["www-authenticate"]
        assert "CQ2-HMAC-SHA256" in challenge and "Signed" not in challenge
    # A read route too.
    stats = f"{api.v2}/queues/q/statistics"
    got = api.client.get(stats, headers=v1_signed(api.account, api.key, "GET", stats))
    assert got.status_code == 401 and "CQ2-HMAC-SHA256" in got.json()["message"]
    assert _size(api) == 0  # nothing was put


def test_v1_still_accepts_signed_as_cassieq_does(api: AppClient[SystemClock]) -> None:
    path = f"{api.v1}/queues/q/messages"
    headers = v1_signed(api.account, api.key, "POST", path)
    put = api.client.post(path, content=b"hi", headers=headers)
    assert put.status_code == 201, put.text
    assert _size(api) == 1


def test_v2_still_accepts_key_and_cq2(api: AppClient[SystemClock]) -> None:
    path = f"{api.v2}/queues/q/messages"
    body = b'{"messages": [{"body": "by key"}]}'
    assert api.client.post(path, content=body, headers=api.auth).status_code == 201
    body = b'{"messages": [{"body": "by cq2"}]}'
    now = datetime.now(UTC)
    headers = sign_v2(api.account, "primary", api.key, "POST", path, [], body, now)
    assert api.client.post(path, content=body, headers=headers).status_code == 201
    assert _size(api) == 2


def test_identical_cq2_requests_within_one_second_are_not_replays(
    api: AppClient[SystemClock],
) -> None:
    """With v1's Signed gone from v2, the CLI signs every v2 request with CQ2; its drain sends
    the same receive body again and again: each must get its own signature (sign_v2's date
    is to the microsecond), else the second within a second would be refused as a replay."""
    path = f"{api.v2}/queues/q/messages/receive"
    body = b'{"maxMessages": 1}'
    at = datetime.now(UTC).replace(microsecond=100)
    for now in (at, at + timedelta(microseconds=1)):
        headers = sign_v2(api.account, "primary", api.key, "POST", path, [], body, now)
        got = api.client.post(path, content=body, headers=headers)
        assert got.status_code == 200, got.text
