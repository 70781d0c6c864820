"""v2 queue routes over HTTP, on each store: create/update/show/delete, statistics, peek.

The app runs in-process (Litestar's TestClient speaks HTTP to it) on the memory store and
on the real Cassandra, with a FakeClock: retention expires when the test moves it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.store.base import Store
from tests.conftest import AppClient, app_client

TOKEN = "v2-queues-operator-token"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
DEFAULTS = {
    "bucketSize": 20,
    "maxDeliveryCount": 5,
    "deadLetterQueue": None,
    "visibilityTimeoutSeconds": 30,
    "delaySeconds": 0,
    "messageRetentionSeconds": 1209600,
    "maxMessageBytes": 1048576,  # SQS's 1 MiB (#39 item 12)
    "repairWorkerPollSeconds": 5,
    "repairWorkerBucketFinalizeTimeSeconds": 15,
    "deleteBucketsAfterFinalize": True,
    "strictFifo": True,
    "partitions": 1,  # issue 35: the server's default (1 unless set)
    "fifo": False,  # issue 37
    "contentBasedDeduplication": False,
    "deduplicationScope": "queue",
    "fifoThroughputLimit": "perQueue",
}


@dataclass
class Api(AppClient[FakeClock]):
    """Its client sends the primary key unless told otherwise."""

    @property
    def q(self) -> str:
        return f"/api/v2/accounts/{self.account}/queues"

    def put_message(self, queue: str, body: str, delay_s: int = 0) -> None:
        response = self.client.post(
            f"/api/v1/accounts/{self.account}/queues/{queue}/messages",
            content=body.encode(),
            params={"initialInvisibilitySeconds": delay_s},
        )
        assert response.status_code == 201, response.text


@pytest.fixture
def api(store: Store) -> Iterator[Api]:
    with app_client(Api, store, Settings(admin_token=TOKEN), FakeClock(), prefix="v2q") as api:
        api.client.headers.update(api.auth)
        yield api


def _options(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in ("queueName", "createdAt")}


def test_put_creates_then_answers_unchanged_or_conflict(api: Api) -> None:
    c = api.client
    created = c.put(f"{api.q}/orders", json={"maxDeliveryCount": 3})
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["queueName"] == "orders" and body["createdAt"].endswith("Z")
    assert _options(body) == {**DEFAULTS, "maxDeliveryCount": 3}
    same = c.put(f"{api.q}/orders", json={"maxDeliveryCount": 3})
    assert same.status_code == 200 and same.json() == body
    other = c.put(f"{api.q}/orders", json={"maxDeliveryCount": 4})
    assert other.status_code == 409
    assert other.json()["code"] == 409 and "other options" in other.json()["message"]
    assert c.get(f"{api.q}/orders").json() == body  # unchanged by the refused PUT


def test_put_refuses_unknown_options_bounds_and_a_missing_dead_letter_queue(api: Api) -> None:
    c = api.client
    unknown = c.put(f"{api.q}/orders", json={"visibilityTimeout": 10})
    assert unknown.status_code == 422
    assert "visibilityTimeout" in unknown.json()["message"]
    for option, bad in (
        ("bucketSize", 0),
        ("maxDeliveryCount", 0),
        ("visibilityTimeoutSeconds", -1),
        ("delaySeconds", 901),
        ("messageRetentionSeconds", 59),
        ("maxMessageBytes", 1048577),
    ):
        response = c.put(f"{api.q}/orders", json={option: bad})
        assert response.status_code == 422, (option, response.text)
        assert option in response.json()["message"]
    missing = c.put(f"{api.q}/orders", json={"deadLetterQueue": "dead"})
    assert missing.status_code == 422
    assert missing.json()["message"] == "deadLetterQueue 'dead' must name an existing queue"
    bad_name = c.put(f"{api.q}/bad:name", json={})
    assert bad_name.status_code == 422
    assert c.get(f"{api.q}/orders").status_code == 404  # nothing was created


def test_patch_changes_options_and_keeps_the_rest(api: Api) -> None:
    c = api.client
    assert c.put(f"{api.q}/dead", json={}).status_code == 201
    assert c.put(f"{api.q}/orders", json={"bucketSize": 7}).status_code == 201
    patched = c.patch(
        f"{api.q}/orders",
        json={"deadLetterQueue": "dead", "visibilityTimeoutSeconds": 90, "strictFifo": False},
    )
    assert patched.status_code == 200, patched.text
    expected = {
        **DEFAULTS,
        "bucketSize": 7,
        "deadLetterQueue": "dead",
        "visibilityTimeoutSeconds": 90,
        "strictFifo": False,
    }
    assert _options(patched.json()) == expected
    assert _options(c.get(f"{api.q}/orders").json()) == expected
    removed = c.patch(f"{api.q}/orders", json={"deadLetterQueue": None})
    assert removed.status_code == 200 and removed.json()["deadLetterQueue"] is None
    assert c.patch(f"{api.q}/orders", json={}).json() == removed.json()  # nothing to change


def test_patch_refusals(api: Api) -> None:
    c = api.client
    assert c.put(f"{api.q}/orders", json={}).status_code == 201
    bucket = c.patch(f"{api.q}/orders", json={"bucketSize": 40})
    assert bucket.status_code == 422 and "bucketSize cannot change" in bucket.json()["message"]
    unknown = c.patch(f"{api.q}/orders", json={"retention": 60})
    assert unknown.status_code == 422 and "retention" in unknown.json()["message"]
    bounds = c.patch(f"{api.q}/orders", json={"messageRetentionSeconds": 1209601})
    assert bounds.status_code == 422 and "messageRetentionSeconds" in bounds.json()["message"]
    dlq = c.patch(f"{api.q}/orders", json={"deadLetterQueue": "nope"})
    assert dlq.status_code == 422 and "must name an existing queue" in dlq.json()["message"]
    missing = c.patch(f"{api.q}/nope", json={"maxDeliveryCount": 2})
    assert missing.status_code == 404 and missing.json()["code"] == 404
    assert _options(c.get(f"{api.q}/orders").json()) == DEFAULTS


def test_get_and_delete(api: Api) -> None:
    c = api.client
    assert c.get(f"{api.q}/orders").status_code == 404
    assert c.put(f"{api.q}/orders", json={}).status_code == 201
    assert _options(c.get(f"{api.q}/orders").json()) == DEFAULTS
    deleted = c.delete(f"{api.q}/orders")
    assert deleted.status_code == 204 and deleted.content == b""
    assert c.get(f"{api.q}/orders").status_code == 404
    again = c.delete(f"{api.q}/orders")
    assert again.status_code == 404 and again.json()["code"] == 404
    assert c.put(f"{api.q}/orders", json={}).status_code == 201  # a new, empty queue


def test_levels(api: Api) -> None:
    c = api.client
    assert c.put(f"{api.q}/orders", json={}).status_code == 201
    no_key = {"Authorization": ""}
    read_only = api.grant("g")
    assert c.get(f"{api.q}/orders", params=read_only, headers=no_key).status_code == 200
    assert c.get(f"{api.q}/orders/statistics", params=read_only, headers=no_key).status_code == 200
    # Peek shows bodies: it needs the read level (#40), which "g" is not.
    peek = c.get(f"{api.q}/orders/messages/peek", params=read_only, headers=no_key)
    assert peek.status_code == 403
    assert c.put(f"{api.q}/x", json={}, params=read_only, headers=no_key).status_code == 403
    patch = c.patch(f"{api.q}/orders", json={}, params=read_only, headers=no_key)
    assert patch.status_code == 403
    assert c.delete(f"{api.q}/orders", params=read_only, headers=no_key).status_code == 403
    creator = api.grant("c")
    assert c.put(f"{api.q}/x", json={}, params=creator, headers=no_key).status_code == 201
    assert c.patch(f"{api.q}/x", json={}, params=creator, headers=no_key).status_code == 200
    assert c.get(f"{api.q}/x", params=creator, headers=no_key).status_code == 403
    assert c.delete(f"{api.q}/x", params=api.grant("d"), headers=no_key).status_code == 204
    assert c.get(f"{api.q}/orders", headers={"Authorization": "Key wrong"}).status_code == 401


def test_statistics_count_expired_messages(api: Api) -> None:
    c = api.client
    assert c.put(f"{api.q}/orders", json={"messageRetentionSeconds": 60}).status_code == 201
    api.put_message("orders", "old")
    api.clock.advance(30)
    api.put_message("orders", "young")
    api.put_message("orders", "later", delay_s=600)
    stats = c.get(f"{api.q}/orders/statistics").json()
    assert stats == {
        "size": 3, "visible": 2, "inFlight": 0, "delayed": 1, "published": 3, "delivered": 0,
        "acked": 0, "deadLettered": 0, "expired": 0, "oldestMessageAgeSeconds": 30.0,
        "deadLetterPending": 0,
    }  # fmt: skip
    api.clock.advance(30)
    got = c.get(f"/api/v1/accounts/{api.account}/queues/orders/messages/next")
    assert got.status_code == 200 and got.json()["message"] == "young"
    stats = c.get(f"{api.q}/orders/statistics").json()
    assert (stats["size"], stats["expired"], stats["inFlight"], stats["visible"]) == (2, 1, 1, 0)
    assert stats["oldestMessageAgeSeconds"] == 30.0
    assert c.get(f"{api.q}/nope/statistics").status_code == 404


def test_peek_pages_and_changes_nothing(api: Api) -> None:
    c = api.client
    assert c.put(f"{api.q}/orders", json={"bucketSize": 2}).status_code == 201
    for i in range(5):
        api.put_message("orders", f"m{i}")
    v1 = f"/api/v1/accounts/{api.account}/queues/orders/messages"
    first = c.get(f"{v1}/next").json()
    assert c.delete(v1, params={"popReceipt": first["popReceipt"]}).status_code == 204
    leased = c.get(f"{v1}/next").json()
    before = c.get(f"{api.q}/orders/statistics").json()

    page = c.get(f"{api.q}/orders/messages/peek", params={"limit": 2})
    assert page.status_code == 200, page.text
    body = page.json()
    assert [(m["body"], m["visible"], m["deliveryCount"]) for m in body["messages"]] == [
        ("m1", False, 1),
        ("m2", True, 0),
    ]
    assert set(body["messages"][0]) == {
        "id", "body", "attributes", "deliveryCount", "visible", "sentAt",
    }  # fmt: skip
    assert body["messages"][0]["attributes"] == {} and body["next"] is not None
    rest = c.get(f"{api.q}/orders/messages/peek", params={"after": body["next"], "limit": 100})
    assert [m["body"] for m in rest.json()["messages"]] == ["m3", "m4"]
    assert rest.json()["next"] is None
    ids = [int(m["id"]) for m in body["messages"] + rest.json()["messages"]]
    assert ids == sorted(ids)

    assert c.get(f"{api.q}/orders/statistics").json() == before  # no lease, no change
    # The leased message's receipt still works: peek did not touch it.
    assert c.delete(v1, params={"popReceipt": leased["popReceipt"]}).status_code == 204


def test_peek_refuses_bad_parameters(api: Api) -> None:
    c = api.client
    assert c.put(f"{api.q}/orders", json={}).status_code == 201
    for params in ({"limit": 0}, {"limit": 101}, {"after": "x"}, {"after": "-1"}):
        response = c.get(f"{api.q}/orders/messages/peek", params=params)
        assert response.status_code == 400, (params, response.text)
        assert response.json()["code"] == 400
    assert c.get(f"{api.q}/nope/messages/peek").status_code == 404
    empty = c.get(f"{api.q}/orders/messages/peek").json()
    assert empty == {"messages": [], "next": None}
