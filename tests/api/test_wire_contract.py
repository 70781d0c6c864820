"""The wire contract (wire-contract-v1.md), one test per fact, over raw HTTP.

The app runs on the memory store in-process (Litestar's TestClient speaks HTTP to it): what
is under test here is the wire, which does not depend on the store; the engine's own tests
run on both stores.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.store.memory import MemoryStore

TOKEN = "contract-operator-token"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
A = "/api/v1/accounts/acct"
Q = f"{A}/queues"


@pytest.fixture
def c() -> Iterator[TestClient[Litestar]]:
    app = create_app(Settings(admin_token=TOKEN), MemoryStore(), background=False)
    with TestClient(app=app) as client:
        created = client.post("/api/v1/accounts", json="acct", headers=ADMIN)
        assert created.status_code == 201, created.text
        client.headers["Authorization"] = f"Key {created.json()['keys']['primary']}"
        yield client


def _queue(c: TestClient[Litestar], name: str = "orders", **options: object) -> None:
    response = c.post(Q, json={"queueName": name, **options})
    assert response.status_code == 201, response.text


def _get(c: TestClient[Litestar], queue: str = "orders", **params: Any) -> dict[str, Any]:
    response = c.get(f"{Q}/{queue}/messages/next", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["orders.v1", "_private", "-dash", ".dot", "a" * 255, "A_b-c.9"])
def test_names_match_the_cassieq_alphabet(c: TestClient[Litestar], name: str) -> None:
    _queue(c, name)
    assert c.post(f"{Q}/{name}/messages", content=b"m").status_code == 201
    got = _get(c, name)
    assert got["message"] == "m"
    assert (
        c.delete(f"{Q}/{name}/messages", params={"popReceipt": got["popReceipt"]}).status_code
        == 204
    )


@pytest.mark.parametrize("name", ["bad:name", "sp ace", "slash/", "nl\n", "", "é"])
def test_an_invalid_queue_name_is_422_with_errors(c: TestClient[Litestar], name: str) -> None:
    response = c.post(Q, json={"queueName": name})
    assert response.status_code == 422
    assert response.json() == {"errors": ["queueName must match [a-zA-Z0-9_.-]+"]}


def test_names_are_capped_at_255(c: TestClient[Litestar]) -> None:
    response = c.post(Q, json={"queueName": "a" * 256})
    assert response.status_code == 422
    assert set(response.json()) == {"errors"}


def test_invalid_account_and_key_names_are_422(c: TestClient[Litestar]) -> None:
    account = c.post("/api/v1/accounts", json="bad:acct", headers=ADMIN)
    assert account.status_code == 422
    assert account.json() == {"errors": ["accountName must match [a-zA-Z0-9_.-]+"]}
    key = c.post(f"{A}/keys", json={"keyName": "bad key"}, headers=ADMIN)
    assert key.status_code == 422 and set(key.json()) == {"errors"}
    dotted = c.post("/api/v1/accounts", json="acme.eu", headers=ADMIN)
    assert dotted.status_code == 201 and dotted.json()["accountName"] == "acme.eu"


# --------------------------------------------------------------------------- error bodies


def test_401_body(c: TestClient[Litestar]) -> None:
    response = c.get(Q, headers={"Authorization": "Key wrong"})
    assert response.status_code == 401
    body = response.json()
    assert {k: body[k] for k in ("code", "message")} == {
        "code": 401,
        "message": "HTTP 401 Unauthorized",
    }
    assert set(body) <= {"code", "message", "detail"}
    assert response.headers["content-type"] == "application/json"


def test_403_body(c: TestClient[Litestar]) -> None:
    grant = c.post(
        "/api/v1/permissions",
        json={"accountName": "acct", "keyName": "primary", "levels": ["r"]},
        headers=ADMIN,
    ).json()["queryParam"]
    response = c.get(f"{Q}?{grant}", headers={"Authorization": ""})
    assert response.status_code == 403
    body = response.json()
    assert body["code"] == 403 and body["message"] == "HTTP 403 Forbidden"
    assert set(body) <= {"code", "message", "detail"}


def test_404_body_names_the_queue_and_the_operation(c: TestClient[Litestar]) -> None:
    cases = [
        ("GET", f"{Q}/nope", "getQueue"),
        ("DELETE", f"{Q}/nope", "DeleteQueue"),
        ("GET", f"{Q}/nope/statistics", "getStatistics"),
        ("POST", f"{Q}/nope/messages", "putMessage"),
        ("GET", f"{Q}/nope/messages/next", "getMessage"),
    ]
    for method, path, operation in cases:
        response = c.request(method, path, content=b"m" if method == "POST" else None)
        assert response.status_code == 404, (path, response.text)
        body = response.json()
        assert body["reason"] == "NotFound" and body["operation"] == operation
        assert body["queueName"] == "nope" and isinstance(body["message"], str)
        assert set(body) <= {"reason", "operation", "message", "queueName", "detail"}


def test_404_for_an_account_names_the_account(c: TestClient[Litestar]) -> None:
    body = c.get("/api/v1/accounts/nobody", headers=ADMIN).json()
    assert body["reason"] == "NotFound" and body["account"] == "nobody"
    assert "queueName" not in body


def test_409_bodies_of_stale_update_and_ack(c: TestClient[Litestar]) -> None:
    _queue(c)
    c.post(f"{Q}/orders/messages", content=b"m")
    receipt = _get(c)["popReceipt"]
    fresh = {"message": "n", "newInvisibilitySeconds": 30}
    assert c.put(f"{Q}/orders/messages", params={"popReceipt": receipt}, json=fresh).is_success
    update = c.put(f"{Q}/orders/messages", params={"popReceipt": receipt}, json=fresh)
    assert update.status_code == 409
    body = update.json()
    assert {k: body[k] for k in ("reason", "operation", "message")} == {
        "reason": "Conflict",
        "operation": "UpdateMessage",
        "message": "Pop receipt is stale.",
    }
    ack = c.delete(f"{Q}/orders/messages", params={"popReceipt": receipt})
    assert ack.status_code == 409
    body = ack.json()
    assert {k: body[k] for k in ("reason", "operation", "message")} == {
        "reason": "Conflict",
        "operation": "AckMessage",
        "message": "The message is already being reprocessed.",
    }


def test_400_for_a_missing_pop_receipt(c: TestClient[Litestar]) -> None:
    _queue(c)
    response = c.delete(f"{Q}/orders/messages")
    assert response.status_code == 400
    assert response.json() == {"errors": ["query param popReceipt may not be null"]}


def test_400_for_negative_seconds(c: TestClient[Litestar]) -> None:
    _queue(c)
    response = c.get(f"{Q}/orders/messages/next", params={"invisibilityTimeSeconds": -1})
    assert response.status_code == 400 and set(response.json()) == {"errors"}


def test_400_for_a_malformed_receipt(c: TestClient[Litestar]) -> None:
    _queue(c)
    response = c.delete(f"{Q}/orders/messages", params={"popReceipt": "garbage"})
    assert response.status_code == 400 and set(response.json()) == {"errors"}


def test_422_for_an_invalid_body(c: TestClient[Litestar]) -> None:
    for body in (b"{not json", b'{"queueName": 5}', b'{"bucketSize": 3}'):
        response = c.post(Q, content=body, headers={"Content-Type": "application/json"})
        assert response.status_code == 422, body
        assert set(response.json()) == {"errors"}


def test_unknown_query_parameters_are_ignored(c: TestClient[Litestar]) -> None:
    assert c.post(Q, json={"queueName": "orders"}, params={"whatever": "1"}).status_code == 201


# --------------------------------------------------------------------------- empty successes


def _assert_empty(response: httpx.Response, status: int) -> None:
    r = response
    assert r.status_code == status, r.text
    assert r.content == b""
    assert "content-type" not in r.headers
    if status != 204:
        assert r.headers["content-length"] == "0"


def test_create_queue_is_201_then_200_with_an_empty_body(c: TestClient[Litestar]) -> None:
    _assert_empty(c.post(Q, json={"queueName": "orders"}), 201)
    _assert_empty(c.post(Q, json={"queueName": "orders"}), 200)


def test_an_unknown_create_option_is_422_naming_it(c: TestClient[Litestar]) -> None:
    # Not in CassieQ's contract either way: refused so that a misspelt option cannot
    # silently keep its default. The queue is not created.
    refused = c.post(Q, json={"queueName": "orders", "maxDeliveryCounts": 3})
    assert refused.status_code == 422
    assert any("maxDeliveryCounts" in e for e in refused.json()["errors"]), refused.text
    assert c.get(f"{Q}/orders").status_code == 404


def test_recreate_with_other_options_is_200_and_keeps_the_first(c: TestClient[Litestar]) -> None:
    # The contract: "200 empty body when it existed" (CassieQ's answer, whatever the
    # options); v2's PUT answers 409 for other options instead.
    _queue(c, bucketSize=10)
    again = c.post(Q, json={"queueName": "orders", "bucketSize": 30})
    assert again.status_code == 200 and again.content == b""
    assert c.get(f"{Q}/orders").json()["bucketSize"] == 10


def test_put_is_201_with_an_empty_body(c: TestClient[Litestar]) -> None:
    _queue(c)
    _assert_empty(c.post(f"{Q}/orders/messages", content=b"m"), 201)


def test_delete_queue_is_200_with_an_empty_body(c: TestClient[Litestar]) -> None:
    _queue(c)
    _assert_empty(c.delete(f"{Q}/orders"), 200)


def test_ack_is_204_with_an_empty_body(c: TestClient[Litestar]) -> None:
    _queue(c)
    c.post(f"{Q}/orders/messages", content=b"m")
    receipt = _get(c)["popReceipt"]
    _assert_empty(c.delete(f"{Q}/orders/messages", params={"popReceipt": receipt}), 204)


def test_json_content_type_is_exactly_application_json(c: TestClient[Litestar]) -> None:
    _queue(c)
    c.post(f"{Q}/orders/messages", content=b"m")
    for response in (c.get(Q), c.get(f"{Q}/orders"), c.get(f"{Q}/orders/statistics")):
        assert response.headers["content-type"] == "application/json"
    assert c.get(f"{Q}/orders/messages/next").headers["content-type"] == "application/json"
    assert c.get(f"{Q}/nope").headers["content-type"] == "application/json"


# --------------------------------------------------------------------------- messages


def test_delivery_count_counts_earlier_deliveries(c: TestClient[Litestar]) -> None:
    _queue(c)
    c.post(f"{Q}/orders/messages", content=b"m")
    first = _get(c, invisibilityTimeSeconds=0)
    assert first["deliveryCount"] == 0
    second = _get(c, invisibilityTimeSeconds=0)
    assert second["deliveryCount"] == 1
    assert second["messageTag"] == first["messageTag"]


def test_max_delivery_count_is_judged_on_the_same_count(c: TestClient[Litestar]) -> None:
    _queue(c, "dead")
    _queue(c, maxDeliveryCount=2, dlqName="dead")
    c.post(f"{Q}/orders/messages", content=b"poison")
    # maxDeliveryCount 2: delivered with counts 0 and 1, then moved to the DLQ.
    assert [_get(c, invisibilityTimeSeconds=0)["deliveryCount"] for _ in range(2)] == [0, 1]
    assert c.get(f"{Q}/orders/messages/next").status_code == 204
    moved = _get(c, "dead")
    assert moved["message"] == "poison" and moved["deliveryCount"] == 0


def test_update_without_new_invisibility_means_zero(c: TestClient[Litestar]) -> None:
    _queue(c)
    c.post(f"{Q}/orders/messages", content=b"m")
    first = _get(c, invisibilityTimeSeconds=3600)
    updated = c.put(f"{Q}/orders/messages", params={"popReceipt": first["popReceipt"]}, json={})
    assert updated.status_code == 200, updated.text
    assert set(updated.json()) == {"popReceipt", "messageTag"}
    again = _get(c)  # visible again at once, the payload kept
    assert again["message"] == "m" and again["deliveryCount"] == 1


# --------------------------------------------------------------------------- queue definition

DEFINITION_FIELDS = [
    "accountName", "queueName", "bucketSize", "maxDeliveryCount", "status", "version",
    "repairWorkerPollFrequencySeconds", "repairWorkerTombstonedBucketTimeoutSeconds",
    "deleteBucketsAfterFinalization", "queueStatsId", "dlqName", "strictFifo", "id",
]  # fmt: skip


def test_the_queue_definition_has_exactly_the_contract_fields(c: TestClient[Litestar]) -> None:
    _queue(c)
    body = c.get(f"{Q}/orders").json()
    assert list(body) == DEFINITION_FIELDS
    stats_uuid, _, rest = body.pop("queueStatsId").partition("_")
    assert len(stats_uuid) == 36 and rest == "acct:orders_v0"
    assert body == {
        "accountName": "acct", "queueName": "orders", "bucketSize": 20, "maxDeliveryCount": 5,
        "status": "Active", "version": 0, "repairWorkerPollFrequencySeconds": 5,
        "repairWorkerTombstonedBucketTimeoutSeconds": 15, "deleteBucketsAfterFinalization": True,
        "dlqName": None, "strictFifo": False, "id": "acct:orders_v0",
    }  # fmt: skip
    assert c.get(Q).json()[0]["id"] == "acct:orders_v0"


def test_a_recreated_queue_shows_version_0_and_old_receipts_do_not_ack_it(
    c: TestClient[Litestar],
) -> None:
    _queue(c)
    c.post(f"{Q}/orders/messages", content=b"old")
    old = _get(c, invisibilityTimeSeconds=0)
    old_stats_id = c.get(f"{Q}/orders").json()["queueStatsId"]
    assert c.delete(f"{Q}/orders").status_code == 200
    _queue(c)
    shown = c.get(f"{Q}/orders").json()
    assert shown["version"] == 0 and shown["id"] == "acct:orders_v0"
    assert shown["queueStatsId"] != old_stats_id  # another incarnation, another stats id
    assert c.get(f"{Q}/orders/messages/next").status_code == 204  # starts empty
    c.post(f"{Q}/orders/messages", content=b"new")
    new = _get(c, invisibilityTimeSeconds=0)
    assert new["message"] == "new"
    # The deleted queue's receipt names the same monoton and message version as the new
    # message's (both the first of their queue): only the internal identity tells them apart.
    stale = c.delete(f"{Q}/orders/messages", params={"popReceipt": old["popReceipt"]})
    assert stale.status_code == 409
    assert _get(c)["message"] == "new"  # not acked: delivered again


# --------------------------------------------------------------------------- statistics


def test_v1_statistics_are_exactly_the_size(c: TestClient[Litestar]) -> None:
    _queue(c)
    for body in (b"a", b"b"):
        c.post(f"{Q}/orders/messages", content=body)
    _get(c)
    assert c.get(f"{Q}/orders/statistics").json() == {"size": 2}
    # ?detail=true belongs to v2: v1 ignores it like any unknown parameter.
    assert c.get(f"{Q}/orders/statistics", params={"detail": "true"}).json() == {"size": 2}


def test_v2_statistics_have_the_richer_counts_with_the_same_auth(c: TestClient[Litestar]) -> None:
    _queue(c)
    c.post(f"{Q}/orders/messages", content=b"a")
    _get(c)
    v2 = "/api/v2/accounts/acct/queues/orders/statistics"
    stats = c.get(v2).json()
    assert stats.pop("oldestMessageAgeSeconds") >= 0  # a real clock: some milliseconds
    assert stats == {
        "size": 1, "visible": 0, "inFlight": 1, "delayed": 0, "published": 1, "delivered": 1,
        "acked": 0, "deadLettered": 0, "expired": 0, "deadLetterPending": 0,
    }  # fmt: skip
    assert c.get(v2, params={"detail": "true"}).json()["size"] == 1  # no snapshot yet
    assert c.get(v2, headers={"Authorization": "Key wrong"}).status_code == 401
    assert c.get("/api/v2/accounts/acct/queues/nope/statistics").status_code == 404


# --------------------------------------------------------------------------- grants


def _grant(c: TestClient[Litestar], **request: object) -> dict[str, str]:
    body = {"accountName": "acct", "keyName": "primary", "levels": ["r", "p", "a"], **request}
    issued = c.post("/api/v1/permissions", json=body, headers=ADMIN)
    assert issued.status_code == 201, issued.text
    pairs = (p.partition("=") for p in issued.json()["queryParam"].split("&"))
    return {k: v for k, _, v in pairs}


def _put_with(c: TestClient[Litestar], queue: str, grant: dict[str, str]) -> int:
    no_key = {"Authorization": ""}
    return c.post(f"{Q}/{queue}/messages", content=b"m", params=grant, headers=no_key).status_code


def test_a_grant_for_another_queue_is_401(c: TestClient[Litestar]) -> None:
    _queue(c, "a")
    _queue(c, "b")
    grant = _grant(c, queueName="a")
    assert _put_with(c, "a", grant) == 201
    assert _put_with(c, "b", grant) == 401


def test_an_expired_grant_is_401(c: TestClient[Litestar]) -> None:
    _queue(c)
    # The same kind of grant inside its window works: the 401 below is the window's.
    assert _put_with(c, "orders", _grant(c, startTime="2000-01-01T00:00:00Z")) == 201
    grant = _grant(c, startTime="2000-01-01T00:00:00Z", endTime="2000-01-02T00:00:00Z")
    assert _put_with(c, "orders", grant) == 401


def test_a_grant_not_yet_valid_is_401(c: TestClient[Litestar]) -> None:
    _queue(c)
    grant = _grant(c, startTime="2999-01-01T00:00:00Z")
    assert _put_with(c, "orders", grant) == 401


def test_a_grant_without_the_level_is_403(c: TestClient[Litestar]) -> None:
    _queue(c)
    assert (
        c.get(f"{Q}/orders/statistics", params=_grant(c), headers={"Authorization": ""}).status_code
        == 403
    )


def test_permissions_answer_st_and_et_not_percent_encoded(c: TestClient[Litestar]) -> None:
    body = {
        "accountName": "acct", "keyName": "primary", "levels": ["ReadMessage", "p"],
        "startTime": "2026-11-22T10:00:00.123Z", "endTime": "2026-11-22T12:00:00+01:00",
        "queueName": "q1",
    }  # fmt: skip
    issued = c.post("/api/v1/permissions", json=body, headers=ADMIN)
    assert issued.status_code == 201
    query = issued.json()["queryParam"]
    head, _, sig = query.partition("&sig=")
    assert head == "auth=rp&q=q1&st=2026-11-22T10:00:00Z&et=2026-11-22T11:00:00Z"
    assert sig and "%" not in sig and "&" not in sig


# --------------------------------------------------------------------------- receipts


def test_the_queue_is_looked_up_before_the_receipt(c: TestClient[Litestar]) -> None:
    for params in ({"popReceipt": "garbage"}, {"popReceipt": "a.b"}):
        ack = c.delete(f"{Q}/nope/messages", params=params)
        assert ack.status_code == 404 and ack.json()["operation"] == "AckMessage"
        update = c.put(f"{Q}/nope/messages", params=params, json={})
        assert update.status_code == 404 and update.json()["operation"] == "UpdateMessage"


def test_a_receipt_of_another_queue_is_stale(c: TestClient[Litestar]) -> None:
    _queue(c, "a")
    _queue(c, "b")
    c.post(f"{Q}/a/messages", content=b"m")
    receipt = _get(c, "a")["popReceipt"]
    ack = c.delete(f"{Q}/b/messages", params={"popReceipt": receipt})
    assert ack.status_code == 409 and ack.json()["reason"] == "Conflict"
    update = c.put(f"{Q}/b/messages", params={"popReceipt": receipt}, json={})
    assert update.status_code == 409 and update.json()["message"] == "Pop receipt is stale."
    assert c.delete(f"{Q}/a/messages", params={"popReceipt": receipt}).status_code == 204


# --------------------------------------------------------------------------- admin, root


def test_admin_routes_are_also_at_admin_api_v1(c: TestClient[Litestar]) -> None:
    created = c.post("/admin/api/v1/accounts", json="acme", headers=ADMIN)
    assert created.status_code == 201 and created.json()["accountName"] == "acme"
    assert c.get("/admin/api/v1/accounts/acme", headers=ADMIN).json()["accountName"] == "acme"
    key = c.post("/admin/api/v1/accounts/acme/keys", json={"keyName": "ci"}, headers=ADMIN)
    assert key.status_code == 201 and isinstance(key.json(), str)
    levels = c.get("/admin/api/v1/permissions/supportedAuthorizationLevels", headers=ADMIN)
    assert {"level": "None", "shortForm": "n"} in levels.json()
    grant = {"accountName": "acme", "keyName": "ci", "levels": ["r"]}
    assert c.post("/admin/api/v1/permissions", json=grant, headers=ADMIN).status_code == 201
    assert c.delete("/admin/api/v1/accounts/acme/keys/ci", headers=ADMIN).status_code == 204
    assert c.delete("/admin/api/v1/accounts/acme", headers=ADMIN).status_code == 204
    # Outside `cassieq dev`'s admin port, the operator token is required there too.
    assert c.get("/admin/api/v1/accounts", headers={"Authorization": ""}).status_code == 401


def test_get_root_is_200(c: TestClient[Litestar]) -> None:
    assert c.get("/", headers={"Authorization": ""}).status_code == 200


def test_the_deprecated_initial_invisibility_parameter(c: TestClient[Litestar]) -> None:
    _queue(c)
    put = c.post(f"{Q}/orders/messages", content=b"later", params={"initialInvisiblityTime": 3600})
    assert put.status_code == 201
    assert c.get(f"{Q}/orders/messages/next").status_code == 204  # honoured: still invisible
    both = {"initialInvisiblityTime": 1, "initialInvisibilitySeconds": 1}
    refused = c.post(f"{Q}/orders/messages", content=b"m", params=both)
    assert refused.status_code == 400 and set(refused.json()) == {"errors"}


def test_a_dlq_must_exist_when_named(c: TestClient[Litestar]) -> None:
    response = c.post(Q, json={"queueName": "work", "dlqName": "missing"})
    assert response.status_code == 422 and set(response.json()) == {"errors"}
    _queue(c, "missing")
    _queue(c, "work", dlqName="missing")
    assert c.get(f"{Q}/work").json()["dlqName"] == "missing"
