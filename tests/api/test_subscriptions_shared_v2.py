"""A shared subscription over v2 (issue 36), on each store: receive, ack and visibility with
the bodies and answers of the queue's messages/receive, messages/ack and messages/visibility;
its receipts bound to it; its deliveries its own (an ack in one subscription touches no
other, nor the queue); leases, maxDeliveryCount and the dead-letter queue; seek as replay;
the ordered routes and the shared ones refused on the other mode; bad input; levels.

The app runs in-process (Litestar's TestClient) with a FakeClock: leases run out when the
test moves the clock.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from cassieq.api.v2.times import iso_time
from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.store.base import Store
from tests.api.test_v2_long_polling import SAFETY_S, Live, live
from tests.conftest import AppClient, app_client

__all__ = ["live"]  # the fixture

TOKEN = "v2-shared-subscriptions-operator-token"
ALL_LEVELS = "rpuagcd"
RECEIVED_FIELDS = {
    "id",
    "body",
    "attributes",
    "popReceipt",
    "deliveryCount",
    "messageTag",
    "firstDeliveredAt",
    "sentAt",
}


@dataclass
class Api(AppClient[FakeClock]):
    """Its client sends the primary key; queue "q" exists."""

    def queue_url(self, queue: str = "q") -> str:
        return f"{self.v2}/queues/{queue}"

    def url(self, name: str = "s", route: str = "", queue: str = "q") -> str:
        return f"{self.queue_url(queue)}/subscriptions/{name}{route}"

    def subscribe(self, name: str = "s", start: str = "earliest", queue: str = "q") -> Any:
        created = self.client.put(
            self.url(name, queue=queue), json={"mode": "shared", "start": start}
        )
        assert created.status_code == 201, created.text
        return created.json()

    def send(self, *entries: str | dict[str, Any], queue: str = "q") -> list[str]:
        messages = [{"body": e} if isinstance(e, str) else e for e in entries]
        sent = self.client.post(f"{self.queue_url(queue)}/messages", json={"messages": messages})
        assert sent.status_code == 201, sent.text
        return [m["id"] for m in sent.json()["messages"]]

    def receive(self, name: str | None = "s", queue: str = "q", **body: Any) -> list[Any]:
        """Of subscription ``name``; of the queue itself when ``name`` is None."""
        url = (
            f"{self.queue_url(queue)}/messages/receive"
            if name is None
            else self.url(name, "/receive", queue)
        )
        got = self.client.post(url, json={"maxMessages": 10, **body})
        assert got.status_code == 200, got.text
        assert set(got.json()) == {"messages"}
        messages: list[Any] = got.json()["messages"]
        return messages

    def ack(self, receipts: list[str], name: str | None = "s") -> Any:
        url = f"{self.queue_url()}/messages/ack" if name is None else self.url(name, "/ack")
        acked = self.client.post(url, json={"popReceipts": receipts})
        assert acked.status_code == 200, acked.text
        return acked.json()

    def lease(self, entries: list[dict[str, Any]], name: str | None = "s") -> Any:
        url = (
            f"{self.queue_url()}/messages/visibility"
            if name is None
            else self.url(name, "/visibility")
        )
        changed = self.client.post(url, json={"entries": entries})
        assert changed.status_code == 200, changed.text
        return changed.json()

    def show(self, name: str = "s", queue: str = "q") -> Any:
        shown = self.client.get(self.url(name, queue=queue))
        assert shown.status_code == 200, shown.text
        return shown.json()


@pytest.fixture
def api(store: Store) -> Iterator[Api]:
    with app_client(Api, store, Settings(admin_token=TOKEN), FakeClock(), prefix="v2sh") as api:
        api.client.headers.update(api.auth)
        assert api.client.put(api.queue_url(), json={}).status_code == 201
        yield api


def _error(response: httpx.Response, status: int, *words: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == status and set(body) <= {"code", "message", "detail"}, body
    message: str = body["message"] + " " + (body.get("detail") or "")
    for word in words:
        assert word in message, (word, body)
    return message


def _failed(answer: Any) -> list[tuple[str, int]]:
    return [(f["popReceipt"], f["code"]) for f in answer["failed"]]


def test_put_shared_then_show_it(api: Api) -> None:
    made = api.subscribe("work")
    assert (made["name"], made["mode"], made["start"]) == ("work", "shared", "earliest")
    same = api.client.put(api.url("work"), json={"mode": "shared", "start": "earliest"})
    assert same.status_code == 200 and same.json() == made
    _error(api.client.put(api.url("work"), json={"mode": "ordered", "start": "earliest"}), 409)
    api.send("a", "b")
    shown = api.show("work")
    assert (shown["mode"], shown["lag"]) == ("shared", 2)  # not yet acked
    listed = api.client.get(f"{api.queue_url()}/subscriptions").json()["subscriptions"]
    assert [(s["name"], s["mode"]) for s in listed] == [("work", "shared")]


def test_receive_ack_and_visibility_answer_as_the_queues(api: Api) -> None:
    api.subscribe()
    ids = api.send({"body": "one ✓", "attributes": {"kind": "a"}}, "two")
    ours = api.receive()
    theirs = api.receive(None)  # the queue's own consumers: the same messages
    assert [m["id"] for m in ours] == [m["id"] for m in theirs] == ids
    for mine, queue_s in zip(ours, theirs, strict=True):
        assert set(mine) == set(queue_s) == RECEIVED_FIELDS
        for field in ("id", "body", "attributes", "sentAt", "deliveryCount"):
            assert mine[field] == queue_s[field], field
        assert mine["popReceipt"] != queue_s["popReceipt"]
        assert mine["firstDeliveredAt"] == iso_time(api.clock.now())
    assert (ours[0]["body"], ours[0]["attributes"], ours[0]["deliveryCount"]) == (
        "one ✓",
        {"kind": "a"},
        1,
    )
    # Visibility: the answer of messages/visibility, a new receipt, the old one stale.
    changed = api.lease([{"popReceipt": ours[1]["popReceipt"], "visibilityTimeoutSeconds": 60}])
    assert set(changed) == {"updated", "failed"} and changed["failed"] == []
    (updated,) = changed["updated"]
    assert set(updated) == {"popReceipt", "newPopReceipt", "messageTag"}
    assert updated["popReceipt"] == ours[1]["popReceipt"] != updated["newPopReceipt"]
    # Ack: the answer of messages/ack, per entry.
    acked = api.ack([ours[0]["popReceipt"], updated["newPopReceipt"]])
    assert acked == {"acked": [ours[0]["popReceipt"], updated["newPopReceipt"]], "failed": []}
    again = api.ack([ours[0]["popReceipt"], ours[1]["popReceipt"]])
    # Acked once only; the receipt the visibility change replaced is stale.
    assert _failed(again) == [(ours[0]["popReceipt"], 409), (ours[1]["popReceipt"], 409)]
    assert set(again["failed"][0]) == {"popReceipt", "code", "message"}
    assert api.receive() == []
    assert api.show()["lag"] == 0


def test_one_batch_with_two_receipts_of_one_message_answers_as_the_queues(api: Api) -> None:
    api.subscribe()
    api.send("m")
    answers = []
    for name in (None, "s"):
        (held,) = api.receive(name)
        lease = {"popReceipt": held["popReceipt"], "visibilityTimeoutSeconds": 60}
        new = api.lease([lease], name)["updated"][0]["newPopReceipt"]
        acked = api.ack([new, held["popReceipt"]], name)
        answers.append((acked["acked"] == [new], [f["code"] for f in acked["failed"]]))
    assert answers[0] == (True, [409])  # the queue's: the replaced receipt is stale
    assert answers[1] == answers[0]


def test_receipts_are_bound_to_their_subscription(api: Api) -> None:
    api.subscribe("a")
    api.subscribe("b")
    api.send("m")
    (in_a,) = api.receive("a")
    (in_b,) = api.receive("b")
    (in_queue,) = api.receive(None)
    for receipt, where in (
        (in_queue["popReceipt"], "a"),  # the queue's, on a subscription
        (in_b["popReceipt"], "a"),  # another subscription's
        (in_a["popReceipt"], None),  # a subscription's, on the queue
    ):
        refused = api.ack([receipt], where)
        assert refused["acked"] == [] and _failed(refused) == [(receipt, 400)]
        assert "another queue" in refused["failed"][0]["message"]
        leased = api.lease([{"popReceipt": receipt, "visibilityTimeoutSeconds": 5}], where)
        assert leased["updated"] == [] and _failed(leased) == [(receipt, 400)]
    forged = in_a["popReceipt"][:-3] + "AAA"
    assert _failed(api.ack([forged], "a")) == [(forged, 400)]
    # Each still acks where it belongs: the refusals changed nothing.
    assert api.ack([in_a["popReceipt"]], "a")["acked"] == [in_a["popReceipt"]]
    assert api.ack([in_b["popReceipt"]], "b")["acked"] == [in_b["popReceipt"]]
    assert api.ack([in_queue["popReceipt"]], None)["acked"] == [in_queue["popReceipt"]]


def test_an_ack_in_one_subscription_touches_no_other_nor_the_queue(api: Api) -> None:
    api.subscribe("a")
    api.subscribe("b")
    ids = api.send("x", "y", "z")
    taken = api.receive("a")
    assert api.ack([m["popReceipt"] for m in taken], "a")["failed"] == []
    assert api.receive("a") == []
    assert (api.show("a")["lag"], api.show("b")["lag"]) == (0, 3)
    # b's deliveries are its own: every message, first delivery.
    in_b = api.receive("b")
    assert [(m["id"], m["deliveryCount"]) for m in in_b] == [(i, 1) for i in ids]
    # The queue's own consumers too; and their acks leave b's leases alone.
    in_queue = api.receive(None)
    assert [m["id"] for m in in_queue] == ids
    assert api.ack([m["popReceipt"] for m in in_queue], None)["failed"] == []
    assert api.ack([m["popReceipt"] for m in in_b], "b")["acked"] == [m["popReceipt"] for m in in_b]


def test_a_lease_runs_out_and_the_message_is_delivered_again(api: Api) -> None:
    api.subscribe()
    (sent,) = api.send("again")
    (first,) = api.receive(visibilityTimeoutSeconds=30)
    assert api.receive() == []  # leased
    api.clock.advance(31)
    (second,) = api.receive(visibilityTimeoutSeconds=30)
    assert (second["id"], second["deliveryCount"]) == (sent, 2)
    assert second["firstDeliveredAt"] == first["firstDeliveredAt"]
    assert _failed(api.ack([first["popReceipt"]])) == [(first["popReceipt"], 409)]
    # A lease given back at once (0): visible again now.
    changed = api.lease([{"popReceipt": second["popReceipt"], "visibilityTimeoutSeconds": 0}])
    assert changed["failed"] == []
    (third,) = api.receive()
    assert third["deliveryCount"] == 3


def test_max_delivery_count_sends_it_to_the_queues_dead_letter_queue(api: Api) -> None:
    assert api.client.put(api.queue_url("dlq"), json={}).status_code == 201
    options = {"maxDeliveryCount": 2, "deadLetterQueue": "dlq"}
    assert api.client.put(api.queue_url("jobs"), json=options).status_code == 201
    api.subscribe(queue="jobs")
    (sent,) = api.send("poison", queue="jobs")
    for count in (1, 2):
        (delivery,) = api.receive(queue="jobs", visibilityTimeoutSeconds=0)
        assert delivery["deliveryCount"] == count
    assert api.receive(queue="jobs") == []  # past maxDeliveryCount: not delivered again
    (dead,) = api.receive(None, queue="dlq")
    assert dead["body"] == "poison"
    # The queue's own consumers still have it: the subscription's deliveries are its own.
    assert [m["id"] for m in api.receive(None, queue="jobs")] == [sent]
    assert api.show(queue="jobs")["lag"] == 0  # dead-lettered: passed


def test_seek_replays_with_a_new_generation(api: Api) -> None:
    api.subscribe()
    api.send("a")
    api.clock.advance(10)
    t_b = api.clock.now()
    api.send("b")
    held = api.receive()
    assert api.ack([held[0]["popReceipt"]])["failed"] == []
    assert api.receive() == []
    replay = api.client.post(api.url("s", "/seek"), json={"to": "earliest"})
    assert replay.status_code == 200, replay.text
    assert replay.json()["mode"] == "shared"
    # Every message from there afresh (the acked one too); the receipts of before are stale.
    again = api.receive()
    assert [(m["body"], m["deliveryCount"]) for m in again] == [("a", 1), ("b", 1)]
    stale = held[1]["popReceipt"]
    assert _failed(api.ack([stale])) == [(stale, 409)]
    leased = api.lease([{"popReceipt": stale, "visibilityTimeoutSeconds": 5}])
    assert _failed(leased) == [(stale, 409)]
    assert api.ack([m["popReceipt"] for m in again])["failed"] == []
    # A time: from the first message sent at or after it.
    assert api.client.post(api.url("s", "/seek"), json={"to": {"time": iso_time(t_b)}}).is_success
    assert [m["body"] for m in api.receive()] == ["b"]
    assert api.client.post(api.url("s", "/seek"), json={"to": "latest"}).is_success
    assert api.receive() == []


def test_start_latest_delivers_only_what_is_sent_after(api: Api) -> None:
    api.send("before")
    api.subscribe("tail", "latest")
    api.send("after")
    assert [m["body"] for m in api.receive("tail")] == ["after"]


def test_each_mode_refuses_the_others_routes(api: Api) -> None:
    api.subscribe("shared")
    ordered = api.client.put(api.url("ordered"), json={"mode": "ordered", "start": "earliest"})
    assert ordered.status_code == 201, ordered.text
    c = api.client
    position = ordered.json()["position"]
    _error(c.get(api.url("shared", "/messages")), 422, "shared", "receive")
    _error(c.post(api.url("shared", "/position"), json={"position": position}), 422, "shared")
    receipt = {"popReceipt": "x"}
    for route, body in (
        ("/receive", {}),
        ("/ack", {"popReceipts": ["x"]}),
        ("/visibility", {"entries": [{**receipt, "visibilityTimeoutSeconds": 1}]}),
    ):
        _error(c.post(api.url("ordered", route), json=body), 422, "ordered", "GET")
        _error(c.post(api.url("missing", route), json=body), 404, "missing")
        _error(c.post(api.url("s", route, queue="nope"), json=body), 404)


def test_bad_input_is_refused_with_4xx(api: Api) -> None:
    api.subscribe()
    c = api.client
    for body in (
        {"maxMessages": 0},
        {"maxMessages": 101},
        {"waitSeconds": 21},
        {"visibilityTimeoutSeconds": -1},
        {"max": 1},
    ):
        _error(c.post(api.url("s", "/receive"), json=body), 422)
    _error(c.post(api.url("s", "/receive"), json={"receiveAttemptId": "r1"}), 422, "receiveAttempt")
    _error(c.post(api.url("s", "/ack"), json={"popReceipts": []}), 422)
    _error(c.post(api.url("s", "/ack"), json={"popReceipts": ["r"] * 101}), 422)
    _error(c.post(api.url("s", "/ack"), json={"receipts": ["r"]}), 422)
    _error(c.post(api.url("s", "/visibility"), json={"entries": []}), 422)
    long_lease = {"popReceipt": "r", "visibilityTimeoutSeconds": 10**9}
    _error(c.post(api.url("s", "/visibility"), json={"entries": [long_lease]}), 422)
    api.send("m")
    (held,) = api.receive()
    # A subscription cannot change the queue's message: refused whole, nothing changed.
    with_body = [
        {"popReceipt": held["popReceipt"], "visibilityTimeoutSeconds": 0},
        {"popReceipt": held["popReceipt"], "body": "edited"},
    ]
    _error(c.post(api.url("s", "/visibility"), json={"entries": with_body}), 422, "entries[1]")
    no_lease = [{"popReceipt": held["popReceipt"]}]
    _error(
        c.post(api.url("s", "/visibility"), json={"entries": no_lease}), 422, "visibilityTimeout"
    )
    assert api.receive() == []  # the first entry's lease was not changed either
    assert api.ack([held["popReceipt"]])["acked"] == [held["popReceipt"]]
    assert api.receive(None)[0]["body"] == "m"


def test_each_shared_route_needs_the_queues_level(api: Api) -> None:
    api.subscribe()
    api.send("m")
    no_key = {"Authorization": ""}
    lease = {"visibilityTimeoutSeconds": 9}
    routes: list[tuple[str, str, Any]] = [
        ("r", "/receive", lambda _: {"visibilityTimeoutSeconds": 0}),
        ("u", "/visibility", lambda r: {"entries": [{"popReceipt": r, **lease}]}),
        ("a", "/ack", lambda receipt: {"popReceipts": [receipt]}),
    ]
    for level, route, body in routes:
        api.clock.advance(61)  # any lease given by the route before has run out
        (held,) = api.receive(visibilityTimeoutSeconds=60)
        url = api.url("s", route)
        others = api.grant(*ALL_LEVELS.replace(level, ""), queue="q")
        refused = api.client.post(url, json=body(held["popReceipt"]), params=others, headers=no_key)
        _error(refused, 403)
        own = api.grant(level, queue="q")
        allowed = api.client.post(url, json=body(held["popReceipt"]), params=own, headers=no_key)
        assert allowed.status_code == 200, (level, route, allowed.text)
        if route != "/receive":
            assert allowed.json()["failed"] == [], (route, allowed.text)
    wrong = {"Authorization": "Key wrong"}
    _error(api.client.post(api.url("s", "/receive"), json={}, headers=wrong), 401)


def test_a_waiting_receive_of_a_subscription_is_answered_by_a_send(live: Live) -> None:
    """Long polling passes through: served as `cassieq serve` serves it."""
    headers = {"Authorization": f"Key {live.key}"}
    sub = f"{live.base}/subscriptions/s"
    made = httpx.put(sub, json={"mode": "shared"}, headers=headers, timeout=SAFETY_S)
    assert made.status_code == 201, made.text
    with ThreadPoolExecutor(1) as pool:
        started = time.monotonic()
        waiting = pool.submit(
            httpx.post, f"{sub}/receive", json={"waitSeconds": 20}, headers=headers, timeout=60
        )
        assert live.joined.wait(SAFETY_S), "the receive never started waiting"
        assert not waiting.done()
        sent = live.post("", {"messages": [{"body": "wake up"}]})
        assert sent.status_code == 201, sent.text
        answer = waiting.result(SAFETY_S)
        elapsed = time.monotonic() - started
    assert answer.status_code == 200, answer.text
    (message,) = answer.json()["messages"]
    assert (message["id"], message["body"]) == (sent.json()["messages"][0]["id"], "wake up")
    assert elapsed < 10  # woken by the send, long before the 20 s the receive would wait
