"""v2 message routes over HTTP, on each store: send, receive, ack, visibility (api-v2.md).

The app runs in-process (Litestar's TestClient) on the memory store and on the real
Cassandra, with a FakeClock: leases end when the test moves it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from cassieq.api.v2.messages import BATCH_BODY_LIMIT
from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.store.base import Store
from tests.conftest import AppClient, app_client

TOKEN = "v2-messages-operator-token"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}


@dataclass
class Api(AppClient[FakeClock]):
    @property
    def headers(self) -> dict[str, str]:
        return self.auth

    def url(self, suffix: str = "", queue: str = "q") -> str:
        return f"/api/v2/accounts/{self.account}/queues/{queue}/messages{suffix}"

    def post(self, suffix: str, body: Any, queue: str = "q", **kw: Any) -> httpx.Response:
        return self.client.post(self.url(suffix, queue), json=body, headers=self.headers, **kw)

    def send(self, *bodies: str, queue: str = "q") -> list[str]:
        sent = self.post("", {"messages": [{"body": b} for b in bodies]}, queue)
        assert sent.status_code == 201, sent.text
        return [m["id"] for m in sent.json()["messages"]]

    def receive(self, **body: Any) -> list[dict[str, Any]]:
        got = self.post("/receive", body)
        assert got.status_code == 200, got.text
        messages: list[dict[str, Any]] = got.json()["messages"]
        return messages


@pytest.fixture
def api(store: Store) -> Iterator[Api]:
    settings = Settings(admin_token=TOKEN)
    with app_client(Api, store, settings, FakeClock(), prefix="v2m") as api:
        api.create_queue()
        yield api


def _error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == status and set(body) <= {"code", "message", "detail"}, body
    message: str = body["message"]
    return message


def test_send_answers_ids_in_request_order_and_receive_delivers_them(api: Api) -> None:
    sent = api.post(
        "",
        {
            "messages": [
                {"body": "first", "attributes": {"kind": "a", "trace-id": "t1"}},
                {"body": "second ✓"},
                {"body": "third", "attributes": {}},
            ]
        },
    )
    assert sent.status_code == 201, sent.text
    entries = sent.json()["messages"]
    ids = [int(m["id"]) for m in entries]
    assert ids == sorted(ids) and len(set(ids)) == 3
    assert all(m["messageTag"] for m in entries)

    got = api.receive(maxMessages=10)
    by_id = {m["id"]: m for m in got}
    assert set(by_id) == {m["id"] for m in entries}
    first = by_id[entries[0]["id"]]
    assert first["body"] == "first"
    assert first["attributes"] == {"kind": "a", "trace-id": "t1"}  # round-trip
    assert by_id[entries[1]["id"]]["body"] == "second ✓"
    assert by_id[entries[2]["id"]]["attributes"] == {}
    for m in got:
        assert m["deliveryCount"] == 1  # v2 counts this delivery
        assert m["messageTag"] == by_id[m["id"]]["messageTag"]
        assert m["sentAt"].endswith("Z") and m["firstDeliveredAt"].endswith("Z")
        assert m["popReceipt"]
    assert {m["messageTag"] for m in got} == {m["messageTag"] for m in entries}
    assert api.receive(maxMessages=10) == []  # all leased


def test_receive_takes_at_most_max_messages_and_counts_redeliveries(api: Api) -> None:
    api.send(*(f"m{i}" for i in range(5)))
    assert len(api.receive(maxMessages=2, visibilityTimeoutSeconds=10)) == 2
    assert len(api.receive(maxMessages=2, visibilityTimeoutSeconds=10)) == 2
    assert len(api.receive(maxMessages=2, visibilityTimeoutSeconds=10)) == 1
    api.clock.advance(11)  # every lease is over
    again = api.receive(maxMessages=10)
    assert len(again) == 5
    assert {m["deliveryCount"] for m in again} == {2}


def test_receive_with_wait_and_nothing_answers_an_empty_list(api: Api) -> None:
    assert api.receive(waitSeconds=1) == []


def test_delay_defaults_to_the_queue_option_and_can_be_given(api: Api) -> None:
    api.create_queue("slow", delay_seconds=30)
    sent = api.post(
        "", {"messages": [{"body": "default"}, {"body": "now", "delaySeconds": 0}]}, queue="slow"
    )
    assert sent.status_code == 201, sent.text
    first = {"maxMessages": 10, "visibilityTimeoutSeconds": 100}
    got = api.post("/receive", first, queue="slow").json()["messages"]
    assert [m["body"] for m in got] == ["now"]
    api.clock.advance(31)
    later = api.post("/receive", {"maxMessages": 10}, queue="slow").json()["messages"]
    assert [m["body"] for m in later] == ["default"]


def test_delay_seconds_is_bounded(api: Api) -> None:
    api.send("x")
    bad = api.post("", {"messages": [{"body": "late", "delaySeconds": 901}]})
    _error(bad, 422)
    fine = api.post("", {"messages": [{"body": "late", "delaySeconds": 900}]})
    assert fine.status_code == 201, fine.text
    got = api.receive(maxMessages=10)
    assert [m["body"] for m in got] == ["x"]
    assert api.post("/ack", {"popReceipts": [got[0]["popReceipt"]]}).json()["failed"] == []
    api.clock.advance(901)
    assert [m["body"] for m in api.receive(maxMessages=10)] == ["late"]


def test_ack_batch_acks_the_fresh_and_reports_the_stale(api: Api) -> None:
    api.send("a", "b", "c")
    first = api.receive(maxMessages=3, visibilityTimeoutSeconds=5)
    assert len(first) == 3
    api.clock.advance(6)
    # Two are delivered again: their first receipts are stale now.
    second = api.receive(maxMessages=2, visibilityTimeoutSeconds=60)
    assert len(second) == 2
    stale = {m["popReceipt"] for m in first if m["id"] in {s["id"] for s in second}}
    fresh_first = [m["popReceipt"] for m in first if m["popReceipt"] not in stale]
    receipts = [m["popReceipt"] for m in first] + [m["popReceipt"] for m in second]

    acked = api.post("/ack", {"popReceipts": receipts})
    assert acked.status_code == 200, acked.text
    body = acked.json()
    assert body["acked"] == fresh_first + [m["popReceipt"] for m in second]
    assert [f["popReceipt"] for f in body["failed"]] == [
        m["popReceipt"] for m in first if m["popReceipt"] in stale
    ]
    assert {f["code"] for f in body["failed"]} == {409}
    api.clock.advance(120)
    assert api.receive(maxMessages=10) == []  # every message is acked


def test_ack_reports_forged_foreign_and_duplicate_receipts_per_entry(api: Api) -> None:
    api.create_queue("other")
    api.send("mine")
    api.send("theirs", queue="other")
    mine = api.receive()[0]["popReceipt"]
    theirs = api.post("/receive", {}, queue="other").json()["messages"][0]["popReceipt"]
    forged = mine[:-4] + ("AAAA" if not mine.endswith("AAAA") else "BBBB")
    acked = api.post("/ack", {"popReceipts": [forged, mine, theirs, mine]})
    assert acked.status_code == 200, acked.text
    body = acked.json()
    assert body["acked"] == [mine]
    assert [(f["popReceipt"], f["code"]) for f in body["failed"]] == [
        (forged, 400),
        (theirs, 400),
        (mine, 409),
    ]
    assert all(f["message"] for f in body["failed"])
    # The other queue's message was not touched: its receipt acks there.
    there = api.post("/ack", {"popReceipts": [theirs]}, queue="other").json()
    assert there["acked"] == [theirs]


def test_visibility_gives_new_receipts_and_new_bodies(api: Api) -> None:
    api.send("v1-body", "keep")
    got = api.receive(maxMessages=2, visibilityTimeoutSeconds=5)
    by_body = {m["body"]: m for m in got}
    changed, kept = by_body["v1-body"], by_body["keep"]
    answer = api.post(
        "/visibility",
        {
            "entries": [
                {
                    "popReceipt": changed["popReceipt"],
                    "visibilityTimeoutSeconds": 0,
                    "body": "v2-body",
                },
                {"popReceipt": kept["popReceipt"], "visibilityTimeoutSeconds": 100},
                {"popReceipt": "not-a-receipt", "visibilityTimeoutSeconds": 1},
            ]
        },
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [u["popReceipt"] for u in body["updated"]] == [changed["popReceipt"], kept["popReceipt"]]
    assert all(u["newPopReceipt"] != u["popReceipt"] for u in body["updated"])
    assert [(f["popReceipt"], f["code"]) for f in body["failed"]] == [("not-a-receipt", 400)]
    again = api.receive(maxMessages=2)
    assert [(m["body"], m["deliveryCount"]) for m in again] == [("v2-body", 2)]
    api.clock.advance(10)  # past the first lease, not the extended one
    assert api.receive(maxMessages=2) == []
    # The old receipt is stale; the new one acks.
    new_kept = body["updated"][1]["newPopReceipt"]
    stale = api.post("/ack", {"popReceipts": [kept["popReceipt"], new_kept]}).json()
    assert stale["acked"] == [new_kept]
    assert [f["code"] for f in stale["failed"]] == [409]


def test_size_limits_count_body_and_attributes(api: Api) -> None:
    api.create_queue("small", max_message_bytes=1024)
    limit = 1024

    def send(entries: list[dict[str, Any]]) -> httpx.Response:
        return api.post("", {"messages": entries}, queue="small")

    fits = {"body": "é" * ((limit - 4) // 2), "attributes": {"ab": "cd"}}  # 2 bytes per é
    assert send([fits]).status_code == 201
    over = {"body": "x" * (limit - 4), "attributes": {"ab": "cde"}}
    message = _error(send([{"body": "ok"}, over]), 422)
    assert "messages[1]" in message and str(limit) in message
    _error(send([{"body": "x", "attributes": {f"n{i}": "v" for i in range(11)}}]), 422)
    _error(send([{"body": "x", "attributes": {"bad name": "v"}}]), 422)
    _error(send([{"body": "x", "attributes": {"n" * 257: "v"}}]), 422)
    _error(send([{"body": "x", "attributes": {"n": 1}}]), 422)
    # Nothing of a refused batch was stored.
    got = api.post("/receive", {"maxMessages": 10}, queue="small").json()["messages"]
    assert len(got) == 1


def test_batch_counts_and_bounds_are_checked(api: Api) -> None:
    _error(api.post("", {"messages": []}), 422)
    _error(api.post("", {"messages": [{"body": "x"}] * 101}), 422)
    _error(api.post("", {"message": [{"body": "x"}]}), 422)
    _error(api.post("/receive", {"maxMessages": 0}), 422)
    _error(api.post("/receive", {"maxMessages": 101}), 422)
    _error(api.post("/receive", {"waitSeconds": 21}), 422)
    _error(api.post("/receive", {"visibilityTimeoutSeconds": -1}), 422)
    _error(api.post("/ack", {"popReceipts": []}), 422)
    _error(api.post("/ack", {"popReceipts": ["r"] * 101}), 422)
    _error(api.post("/visibility", {"entries": []}), 422)
    _error(
        api.post("/visibility", {"entries": [{"popReceipt": "r", "visibilityTimeoutSeconds": -1}]}),
        422,
    )
    _error(api.post("", {"messages": [{"body": "x"}]}, queue="missing"), 404)
    _error(api.post("/ack", {"popReceipts": ["r"]}, queue="missing"), 404)


def test_a_body_beyond_the_route_limit_is_413(api: Api) -> None:
    too_big = b'{"messages": [{"body": "' + b"x" * BATCH_BODY_LIMIT + b'"}]}'
    answer = api.client.post(
        api.url(), content=too_big, headers={**api.headers, "Content-Type": "application/json"}
    )
    _error(answer, 413)


@pytest.mark.parametrize(
    ("levels", "suffix", "body"),
    [
        ("rau", "", {"messages": [{"body": "x"}]}),
        ("pau", "/receive", {}),
        ("rpu", "/ack", {"popReceipts": ["r"]}),
        ("rpa", "/visibility", {"entries": [{"popReceipt": "r", "visibilityTimeoutSeconds": 1}]}),
    ],
)
def test_each_route_needs_its_level(api: Api, levels: str, suffix: str, body: Any) -> None:
    issued = api.client.post(
        "/api/v1/permissions",
        json={"accountName": api.account, "keyName": "primary", "levels": list(levels)},
        headers=ADMIN,
    )
    assert issued.status_code == 201, issued.text
    query = issued.json()["queryParam"]
    refused = api.client.post(f"{api.url(suffix)}?{query}", json=body)
    _error(refused, 403)
    # The level it lacks, granted, lets the same request through.
    full = api.client.post(
        "/api/v1/permissions",
        json={"accountName": api.account, "keyName": "primary", "levels": list("rpua")},
        headers=ADMIN,
    ).json()["queryParam"]
    allowed = api.client.post(f"{api.url(suffix)}?{full}", json=body)
    assert allowed.status_code in (200, 201), allowed.text
