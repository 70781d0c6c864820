"""No 5xx from input: OPTIONS, CORS, JSON nested too deep, integers out of range.

The app on each store (the Cassandra driver refuses a bucket beyond 64 bits: that was a
500), spoken to in process.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from litestar import Litestar
from litestar.routes import HTTPRoute

from cassieq.api.http.bodies import MAX_JSON_DEPTH, check_json_depth, json_depth
from cassieq.config import Settings
from cassieq.engine.clock import SystemClock
from cassieq.store.base import Store
from tests.conftest import AppClient, app_client

TOKEN = "hardening-operator-token"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
ORIGIN = "https://console.example"


@dataclass
class Api(AppClient[SystemClock]):
    @property
    def queues(self) -> str:
        return f"/api/v1/accounts/{self.account}/queues"


def _api(store: Store, **settings: Any) -> Iterator[Api]:
    settings_ = Settings(admin_token=TOKEN, **settings)
    with app_client(Api, store, settings_, SystemClock(), prefix="hard") as api:
        api.create_v1_queue("q")
        yield api


@pytest.fixture
def api(store: Store) -> Iterator[Api]:
    yield from _api(store)


@pytest.fixture
def cors_api(store: Store) -> Iterator[Api]:
    yield from _api(store, cors_origins=(ORIGIN,))


def _concrete(path: str, account: str) -> str:
    """A route's path with real values: the test's account, queue q, bucket and monoton 0."""
    return (
        path.replace("{account:str}", account)
        .replace("{queue:str}", "q")
        .replace("{key_name:str}", "primary")
        .replace("{bucket:int}", "0")
        .replace("{monoton:int}", "0")
        .replace("{path:path}", "swagger")
    )


def _routes(app: Litestar) -> list[HTTPRoute]:
    return [r for r in app.routes if isinstance(r, HTTPRoute)]


# ---------------------------------------------------------------- OPTIONS and CORS


def test_options_on_every_route_is_a_204_with_the_routes_methods(api: Api) -> None:
    app = api.client.app
    routes = _routes(app)
    assert len(routes) >= 20
    for route in routes:
        path = _concrete(route.path, api.account)
        # No credentials: a browser's preflight carries none.
        response = api.client.options(path)
        assert response.status_code == 204, (path, response.status_code, response.text)
        assert response.headers["allow"] == ", ".join(sorted(route.methods)), path
        assert "access-control-allow-origin" not in response.headers  # CORS is off


def test_the_queue_routes_answer_options_with_all_their_methods(api: Api) -> None:
    # Litestar's own Allow header listed only some (the queue list said "OPTIONS, POST").
    allow = {
        api.queues: "GET, OPTIONS, POST",
        f"{api.queues}/q": "DELETE, GET, OPTIONS",
        f"{api.queues}/q/messages": "DELETE, OPTIONS, POST, PUT",
        f"{api.queues}/q/messages/next": "GET, OPTIONS",
    }
    for path, methods in allow.items():
        assert api.client.options(path, headers=api.auth).headers["allow"] == methods


def test_a_preflight_from_an_allowed_origin_gets_the_cors_headers(cors_api: Api) -> None:
    for path in (cors_api.queues, f"{cors_api.queues}/q/messages", "/api/v1/accounts"):
        response = cors_api.client.options(
            path,
            headers={
                "Origin": ORIGIN,
                "Access-Control-Request-Method": "PUT",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert response.status_code == 204, response.text
        h = response.headers
        assert h["access-control-allow-origin"] == ORIGIN
        assert set(h["access-control-allow-methods"].split(", ")) == {
            "DELETE",
            "GET",
            "OPTIONS",
            "POST",
            "PUT",
        }
        allowed = {v.strip().lower() for v in h["access-control-allow-headers"].split(",")}
        assert {"authorization", "content-type", "x-cassieq-request-time"} <= allowed
        assert h["vary"] == "Origin"


def test_answers_to_an_allowed_origin_carry_the_allow_origin_header(cors_api: Api) -> None:
    c = cors_api.client
    origin = {"Origin": ORIGIN}
    ok = c.get(cors_api.queues, headers={**cors_api.auth, **origin})
    assert ok.status_code == 200
    assert ok.headers["access-control-allow-origin"] == ORIGIN
    assert "retry-after" in ok.headers["access-control-expose-headers"].lower()
    # Error answers too: the page can read why it was refused.
    refused = c.get(cors_api.queues, headers=origin)
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == ORIGIN
    missing = c.get("/api/v1/nothing-here", headers=origin)
    assert missing.status_code == 404
    assert missing.headers["access-control-allow-origin"] == ORIGIN


def test_other_origins_are_told_nothing(cors_api: Api) -> None:
    c = cors_api.client
    other = {"Origin": "https://evil.example"}
    preflight = c.options(
        cors_api.queues, headers={**other, "Access-Control-Request-Method": "GET"}
    )
    # The plain OPTIONS answer, without CORS headers: the browser refuses the call.
    assert preflight.status_code == 204
    assert preflight.headers["allow"] == "GET, OPTIONS, POST"
    assert "access-control-allow-origin" not in preflight.headers
    answer = c.get(cors_api.queues, headers={**cors_api.auth, **other})
    assert answer.status_code == 200
    assert "access-control-allow-origin" not in answer.headers


def test_cors_origins_come_comma_separated_from_the_environment() -> None:
    env = {"CASSIEQ_CORS_ORIGINS": " https://a.example , https://b.example,"}
    assert Settings.from_env(env).cors_origins == ("https://a.example", "https://b.example")
    assert Settings.from_env({}).cors_origins == ()


# ---------------------------------------------------------------- JSON nesting


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_json_depth_counts_brackets_outside_strings_only() -> None:
    assert json_depth(b'"just a string"') == 0
    assert json_depth(b'{"a": [1, {"b": []}]}') == 4
    assert json_depth(_nested(1000)) == 1000
    # Brackets inside strings, escaped quotes and escaped backslashes are text.
    assert json_depth(b'{"a": "[[[[{{{{", "b": "\\"[[[", "c": "\\\\"}') == 1
    assert json_depth(b'["\\\\", ["x"]]') == 2
    check_json_depth(_nested(MAX_JSON_DEPTH))
    with pytest.raises(ValueError, match="nested deeper than 64 levels"):
        check_json_depth(_nested(MAX_JSON_DEPTH + 1))


def test_json_nested_too_deep_is_a_400_on_every_json_route(api: Api) -> None:
    deep = _nested(1000)
    also_deep = b'{"a":' * 1000 + b"1" + b"}" * 1000
    json_type = {"content-type": "application/json"}
    routes = [
        ("POST", api.queues, api.auth),
        ("PUT", f"{api.queues}/q/messages?popReceipt=x", api.auth),
        ("POST", "/api/v1/accounts", ADMIN),
        ("POST", f"/api/v1/accounts/{api.account}/keys", ADMIN),
        ("POST", "/api/v1/permissions", ADMIN),
    ]
    for method, path, auth in routes:
        for body in (deep, also_deep):
            response = api.client.request(method, path, content=body, headers={**auth, **json_type})
            assert response.status_code == 400, (method, path, response.text)
            assert response.json() == {
                "errors": [f"the JSON body is nested deeper than {MAX_JSON_DEPTH} levels"]
            }


def test_a_deep_message_is_stored_as_it_came(api: Api) -> None:
    # A put's body is opaque text, whatever it looks like: no JSON limit applies to it.
    deep = _nested(1000)
    put = api.client.post(f"{api.queues}/q/messages", content=deep, headers=api.auth)
    assert put.status_code == 201
    got = api.client.get(f"{api.queues}/q/messages/next", headers=api.auth)
    assert got.json()["message"] == deep.decode()


def test_json_at_the_depth_limit_reaches_the_validation(api: Api) -> None:
    # Not refused as too deep: refused as the wrong shape (422, the contract's invalid body).
    response = api.client.post(
        api.queues,
        content=_nested(MAX_JSON_DEPTH),
        headers={**api.auth, "content-type": "application/json"},
    )
    assert response.status_code == 422, response.text


# ---------------------------------------------------------------- integers


HUGE = 2**64 + 1


def test_integers_out_of_range_are_refused_by_name(api: Api) -> None:
    c, q = api.client, api.queues
    # A query parameter: 400 (the contract's bad parameter).
    query = [
        ("GET", f"{q}/q/messages/next", "invisibilityTimeSeconds"),
        ("POST", f"{q}/q/messages", "initialInvisibilitySeconds"),
        ("POST", f"{q}/q/messages", "initialInvisiblityTime"),
    ]
    for method, path, name in query:
        for value in (HUGE, -HUGE):
            response = c.request(method, path, params={name: value}, headers=api.auth)
            assert response.status_code == 400, (path, name, response.text)
            assert name in response.json()["errors"][0], response.text
    # A field of a JSON body: 422 (the contract's invalid body).
    body = [
        ("POST", q, {}, "bucketSize"),
        ("POST", q, {}, "maxDeliveryCount"),
        ("POST", q, {}, "repairWorkerPollSeconds"),
        ("POST", q, {}, "repairWorkerBucketFinalizeTimeSeconds"),
        ("PUT", f"{q}/q/messages", {"popReceipt": "x"}, "newInvisibilitySeconds"),
    ]
    for method, path, params, name in body:
        for value in (HUGE, -HUGE):
            data = {"queueName": "big", name: value} if method == "POST" else {name: value}
            response = c.request(method, path, params=params, json=data, headers=api.auth)
            assert response.status_code == 422, (path, name, response.text)
            assert response.json()["errors"][0].startswith(f"{name}:"), response.text


def test_debug_routes_refuse_buckets_and_monotons_beyond_64_bits(api: Api) -> None:
    base = f"/api/v1/debug/accounts/{api.account}/queues/q"
    for value in (2**63, HUGE, -1, -HUGE):
        for path, name in (
            (f"{base}/buckets/{value}/messages", "bucket"),
            (f"{base}/buckets/{value}/tombstone", "bucket"),
            (f"{base}/messages/{value}", "monoton"),
        ):
            response = api.client.get(path, headers=ADMIN)
            assert response.status_code == 400, (path, response.text)
            assert response.json()["errors"][0].startswith(f"path param {name}:"), response.text
    # The largest bigint is a position like any other: nothing there.
    top = 2**63 - 1
    assert api.client.get(f"{base}/buckets/{top}/messages", headers=ADMIN).json() == []
    assert api.client.get(f"{base}/messages/{top}", headers=ADMIN).status_code == 404
