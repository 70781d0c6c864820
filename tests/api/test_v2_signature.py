"""The v2 signature (api-v2.md, "v2 signature") and its replay cache, on both stores.

Signatures are made with cassieq's client helper (``sign_v2``) and, once, independently from
the contract's text, so the helper itself is checked too. The app runs in-process (Litestar's
TestClient); besides the v2 statistics route, a probe route on /api/v2 echoes what it
received, so bodies and queries are signed on a route whose only business is the guard.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar import Request, post

from cassieq.api.security import account_guard, authorize_for
from cassieq.auth.replay import ReplayCache, ReplayCacheFull
from cassieq.auth.signing_v2 import canonical_query, sign_v2, string_to_sign
from cassieq.config import Settings
from cassieq.engine.clock import SystemClock
from cassieq.model import AuthorizationLevel
from cassieq.store.base import Store
from tests.conftest import AppClient, app_client

TOKEN = "v2-signature-operator-token"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
PROBE_LIMIT = 4096


@post(
    "/api/v2/accounts/{account:str}/queues/{queue:str}/probe",
    guards=[account_guard],
    opt={"level": AuthorizationLevel.PUT_MESSAGE},
    status_code=200,
    request_max_body_size=PROBE_LIMIT,
    include_in_schema=False,
)
async def probe(request: Request[Any, Any, Any]) -> dict[str, Any]:
    return {
        "body": (await request.body()).decode(),
        "query": sorted(request.query_params.multi_items()),
    }


@post(
    "/api/v2/accounts/{account:str}/queues/{queue:str}/probe-two",
    guards=[account_guard],
    opt={"level": AuthorizationLevel.PUT_MESSAGE},
    status_code=200,
    include_in_schema=False,
)
async def probe_two(request: Request[Any, Any, Any]) -> dict[str, str]:
    """A route that checks a second queue too, as a redrive checks its target."""
    await authorize_for(request, AuthorizationLevel.PUT_MESSAGE, "other")
    return {"checked": "twice"}


@dataclass
class Api(AppClient[SystemClock]):
    @property
    def base(self) -> str:
        return f"/api/v2/accounts/{self.account}/queues"

    def signed(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]] | None = None,
        body: bytes = b"",
        *,
        key_name: str = "primary",
        key: str | None = None,
        now: datetime | None = None,
    ) -> dict[str, str]:
        return sign_v2(
            self.account,
            key_name,
            self.keys[key_name] if key is None else key,
            method,
            path,
            query or [],
            body,
            now or datetime.now(UTC),
        )

    def probe(
        self,
        body: bytes = b"hello",
        query: list[tuple[str, str]] | None = None,
        headers: dict[str, str] | None = None,
        queue: str = "q",
    ) -> Any:
        path = f"{self.base}/{queue}/probe"
        return self.client.post(
            path,
            content=body,
            params=tuple(query or ()),
            headers=headers if headers is not None else self.signed("POST", path, query, body),
        )


def _api(store: Store, **settings: Any) -> Iterator[Api]:
    settings_ = Settings(admin_token=TOKEN, **settings)
    routes = (probe, probe_two)
    with app_client(Api, store, settings_, SystemClock(), prefix="sig", routes=routes) as api:
        api.create_v1_queue("q")
        yield api


@pytest.fixture
def api(store: Store) -> Iterator[Api]:
    yield from _api(store)


def _refused(response: Any, *words: str) -> str:
    assert response.status_code == 401, response.text
    body = response.json()
    assert set(body) <= {"code", "message", "detail"} and body["code"] == 401, body
    message: str = body["message"]
    for word in words:
        assert word in message, message
    assert "CQ2-HMAC-SHA256" in response.headers["www-authenticate"]
    return message


# ------------------------------------------------------------------------ accepted


def test_a_valid_signature_is_accepted_and_the_route_sees_the_signed_body(api: Api) -> None:
    response = api.probe(b'{"messages": []}', [("a", "1")])
    assert response.status_code == 200, response.text
    assert response.json() == {"body": '{"messages": []}', "query": [["a", "1"]]}


def test_a_signed_get_on_a_real_v2_route(api: Api) -> None:
    path = f"{api.base}/q/statistics"
    query = [("detail", "false")]
    response = api.client.get(path, params=tuple(query), headers=api.signed("GET", path, query))
    assert response.status_code == 200, response.text
    assert response.json()["size"] == 0


def test_a_signed_batch_send_and_receive_on_the_message_routes(api: Api) -> None:
    path = f"{api.base}/q/messages"
    body = b'{"messages": [{"body": "one", "attributes": {"k": "v"}}, {"body": "two"}]}'
    signed = api.signed("POST", path, body=body)
    headers = {**signed, "Content-Type": "application/json"}
    sent = api.client.post(path, content=body, headers=headers)
    assert sent.status_code == 201, sent.text
    assert len(sent.json()["messages"]) == 2
    _refused(api.client.post(path, content=body, headers=headers), "replayed")
    receive, ask = f"{path}/receive", b'{"maxMessages": 10}'
    got = api.client.post(receive, content=ask, headers=api.signed("POST", receive, body=ask))
    assert got.status_code == 200, got.text
    assert sorted(m["body"] for m in got.json()["messages"]) == ["one", "two"]


def test_the_secondary_key_signs_too(api: Api) -> None:
    path = f"{api.base}/q/probe"
    response = api.probe(headers=api.signed("POST", path, body=b"hello", key_name="secondary"))
    assert response.status_code == 200, response.text


def test_the_helper_signs_what_the_contract_says(api: Api) -> None:
    """The six lines, HMAC-SHA256 with the key's bytes, base64url without padding: computed
    here from the contract, not with cassieq's code."""
    path, body = f"{api.base}/q/probe", b"payload"
    date = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [api.account, "POST", path, "b=x&b=y%20z", date, hashlib.sha256(body).hexdigest()]
    key = api.keys["primary"]
    mac = hmac.new(
        base64.urlsafe_b64decode(key + "=" * (-len(key) % 4)),
        "\n".join(lines).encode(),
        hashlib.sha256,
    ).digest()
    signature = base64.urlsafe_b64encode(mac).decode().rstrip("=")
    headers = {
        "Authorization": f"CQ2-HMAC-SHA256 Key=primary, Signature={signature}",
        "x-cassieq-date": date,
    }
    query = [("b", "y z"), ("b", "x")]
    assert api.signed("POST", path, query, body, now=datetime.fromisoformat(date)) == headers
    assert api.probe(body, query, headers).status_code == 200


@pytest.mark.parametrize(
    "query",
    [
        [("text", "two words")],
        [("name", "café ☕"), ("ключ", "значение")],
        [("x", "2"), ("x", "1"), ("x", "10"), ("a", "")],
        [("reserved", "a&b=c+d/e?f#g%h"), ("tilde~", "-_.~")],
    ],
    ids=["spaces", "unicode", "repeated", "reserved"],
)
def test_query_edge_cases_verify_end_to_end(api: Api, query: list[tuple[str, str]]) -> None:
    response = api.probe(b"", query)
    assert response.status_code == 200, response.text
    assert response.json()["query"] == sorted([list(pair) for pair in query])


# ------------------------------------------------------------------------ refused


def test_a_wrong_key_is_refused(api: Api) -> None:
    path = f"{api.base}/q/probe"
    other = base64.urlsafe_b64encode(b"k" * 64).decode().rstrip("=")
    _refused(api.probe(headers=api.signed("POST", path, body=b"hello", key=other)), "signature")
    # The secondary key signing under the primary's name is a wrong key too.
    wrong = api.signed("POST", path, body=b"hello", key=api.keys["secondary"])
    _refused(api.probe(headers=wrong), "signature")


def test_an_unknown_key_name_or_account_reads_like_a_wrong_signature(api: Api) -> None:
    path = f"{api.base}/q/probe"
    headers = api.signed("POST", path, body=b"hello")
    unknown_name = {**headers, "Authorization": headers["Authorization"].replace("primary", "x")}
    wrong_signature = {**headers, "Authorization": headers["Authorization"][:-4] + "AAAA"}
    messages = {_refused(api.probe(headers=h)) for h in (unknown_name, wrong_signature)}
    other_path = f"/api/v2/accounts/nobody-{uuid.uuid4().hex[:8]}/queues/q/probe"
    no_account = sign_v2(
        "nobody", "primary", api.keys["primary"], "POST", other_path, [], b"hello",
        datetime.now(UTC),
    )  # fmt: skip
    missing = api.client.post(other_path, content=b"hello", headers=no_account)
    messages.add(_refused(missing))
    assert len(messages) == 1 and "invalid signature" in messages.pop()


def test_a_changed_body_query_or_path_is_refused(api: Api) -> None:
    path = f"{api.base}/q/probe"
    signed = api.signed("POST", path, [("a", "1")], b"hello")
    _refused(api.probe(b"hellO", [("a", "1")], signed), "invalid signature", "body")
    _refused(api.probe(b"hello", [("a", "2")], signed), "invalid signature", "query")
    _refused(api.probe(b"hello", [("a", "1"), ("a", "1")], signed), "invalid signature")
    _refused(api.probe(b"hello", [], signed), "invalid signature")
    other_queue = api.client.post(
        f"{api.base}/other/probe", content=b"hello", params=[("a", "1")], headers=signed
    )
    _refused(other_queue, "invalid signature", "path")
    # None of these used the signature up: sent as signed, it is accepted.
    assert api.probe(b"hello", [("a", "1")], signed).status_code == 200


def test_a_changed_method_is_refused(api: Api) -> None:
    path = f"{api.base}/q/statistics"
    response = api.client.get(path, headers=api.signed("POST", path))
    _refused(response, "invalid signature", "method")


def test_a_date_outside_the_skew_is_refused(api: Api) -> None:
    path = f"{api.base}/q/probe"
    for offset in (-65, 65, -3600):
        at = datetime.now(UTC) + timedelta(seconds=offset)
        response = api.probe(headers=api.signed("POST", path, body=b"hello", now=at))
        _refused(response, "x-cassieq-date is more than 60 s from the server's clock")
    within = datetime.now(UTC) - timedelta(seconds=30)
    assert api.probe(headers=api.signed("POST", path, body=b"hello", now=within)).status_code == 200


def test_a_missing_or_unreadable_date_is_refused(api: Api) -> None:
    headers = api.signed("POST", f"{api.base}/q/probe", body=b"hello")
    no_date = {"Authorization": headers["Authorization"]}
    _refused(api.probe(headers=no_date), "needs the x-cassieq-date header")
    bad_date = {**headers, "x-cassieq-date": "yesterday"}
    _refused(api.probe(headers=bad_date), "x-cassieq-date", "not an ISO-8601 time")


@pytest.mark.parametrize(
    "credential",
    ["", "Key=primary", "Signature=abc", "Key=primary Signature=abc", "Key=a b, Signature=c"],
)
def test_a_malformed_credential_is_refused(api: Api, credential: str) -> None:
    headers = api.signed("POST", f"{api.base}/q/probe", body=b"hello")
    headers["Authorization"] = f"CQ2-HMAC-SHA256 {credential}"
    _refused(api.probe(headers=headers), "Key=<keyName>, Signature=<signature>")


def test_a_replayed_request_is_refused(api: Api) -> None:
    path = f"{api.base}/q/probe"
    signed = api.signed("POST", path, [("a", "1")], b"hello")
    assert api.probe(b"hello", [("a", "1")], signed).status_code == 200
    _refused(api.probe(b"hello", [("a", "1")], signed), "replayed")
    # Signed again (another second, or another body) it goes through.
    later = datetime.now(UTC) + timedelta(seconds=1)
    again = api.signed("POST", path, [("a", "1")], b"hello", now=later)
    assert api.probe(b"hello", [("a", "1")], again).status_code == 200


def test_a_second_check_within_one_request_is_no_replay(api: Api) -> None:
    path = f"{api.base}/q/probe-two"
    signed = api.signed("POST", path, body=b"x")
    assert api.client.post(path, content=b"x", headers=signed).json() == {"checked": "twice"}
    _refused(api.client.post(path, content=b"x", headers=signed), "replayed")


def test_an_invalid_signature_is_not_remembered(api: Api) -> None:
    headers = api.signed("POST", f"{api.base}/q/probe", body=b"hello")
    headers["Authorization"] = headers["Authorization"][:-4] + "AAAA"
    for _ in range(2):
        _refused(api.probe(headers=headers), "invalid signature")


def test_the_body_limit_applies_before_the_signature(api: Api) -> None:
    body = b"x" * (PROBE_LIMIT + 1)
    response = api.probe(body, headers=api.signed("POST", f"{api.base}/q/probe", body=body))
    assert response.status_code == 413, response.text
    assert response.json()["code"] == 413


def test_v1_refuses_the_v2_scheme_as_unknown(api: Api) -> None:
    path = f"/api/v1/accounts/{api.account}/queues/q/messages"
    response = api.client.post(path, content=b"m", headers=api.signed("POST", path, body=b"m"))
    assert response.status_code == 401, response.text
    assert response.json() == {
        "code": 401,
        "message": "HTTP 401 Unauthorized",
        "detail": "unsupported Authorization scheme: use 'Key <key>' or 'Signed <sig>'",
    }


@pytest.fixture
def tiny_cache(store: Store) -> Iterator[Api]:
    yield from _api(store, replay_cache_max_entries=1)


def test_a_full_replay_cache_refuses_with_503_rather_than_grow(tiny_cache: Api) -> None:
    api = tiny_cache
    assert api.probe(b"one").status_code == 200
    full = api.probe(b"two")
    assert full.status_code == 503, full.text
    assert full.headers["retry-after"] == "1"
    assert "too many signed requests" in full.json()["message"]
    # Key auth is not limited by the cache.
    key = {"Authorization": f"Key {api.keys['primary']}"}
    assert api.probe(b"three", headers=key).status_code == 200


# ------------------------------------------------------------------------ units


def test_canonical_query_sorts_by_name_then_value_and_encodes_rfc3986() -> None:
    query = [("b", "2"), ("a", "z"), ("a", "y"), ("sp", "a b"), ("u", "é"), ("t", "~-._+/")]
    assert canonical_query(query) == "a=y&a=z&b=2&sp=a%20b&t=~-._%2B%2F&u=%C3%A9"
    assert canonical_query({"x": "1"}) == "x=1"
    assert canonical_query([]) == ""


def test_string_to_sign_is_six_lines() -> None:
    text = string_to_sign("acct", "post", "/p", [("q", "1")], "2026-01-01T00:00:00Z", b"")
    assert text.split("\n") == [
        "acct", "POST", "/p", "q=1", "2026-01-01T00:00:00Z",
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ]  # fmt: skip


def test_replay_entries_expire_with_the_window_and_the_count_is_capped() -> None:
    cache = ReplayCache(max_entries=2)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    assert not cache.seen("a", t0 + timedelta(seconds=60), t0)
    assert cache.seen("a", t0 + timedelta(seconds=60), t0 + timedelta(seconds=59))
    assert not cache.seen("b", t0 + timedelta(seconds=90), t0 + timedelta(seconds=1))
    with pytest.raises(ReplayCacheFull):
        cache.seen("c", t0 + timedelta(seconds=70), t0 + timedelta(seconds=10))
    # At its expiry "a" is forgotten: room for "c" (and "a" itself would be new again, but
    # its date is then out of the skew, which the guard refuses first).
    assert not cache.seen("c", t0 + timedelta(seconds=120), t0 + timedelta(seconds=60))
    assert len(cache) == 2
    assert not cache.seen("a", t0 + timedelta(seconds=200), t0 + timedelta(seconds=120))
    assert len(cache) == 1
