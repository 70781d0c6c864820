"""FIFO queues over /api/v2 (issue 37 item 3), on each store: the queue options, groupId and
deduplicationId on send, sequenceNumber and duplicate in the send's answer, groupId and
sequenceNumber on receive and peek, a group delivered in order with one message in flight,
and the refusals (422 with a JSON body naming the field, as every v2 body problem).

The app runs in process on a FakeClock: the 5-minute deduplication interval and leases end
when the test moves the clock.
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.store.base import Store
from tests.conftest import AppClient, app_client

TOKEN = "fifo-v2-operator-token"
FIFO = {"fifo": True}
# Every character SQS allows in a group or deduplication id (94: no space, ASCII only).
ALLOWED = string.ascii_letters + string.digits + string.punctuation


@dataclass
class Api(AppClient[FakeClock]):
    @property
    def q(self) -> str:
        return f"/api/v2/accounts/{self.account}/queues"

    def send(self, queue: str, *messages: dict[str, Any]) -> httpx.Response:
        return self.client.post(f"{self.q}/{queue}/messages", json={"messages": list(messages)})

    def sent(self, queue: str, *messages: dict[str, Any]) -> list[dict[str, Any]]:
        response = self.send(queue, *messages)
        assert response.status_code == 201, response.text
        answer: list[dict[str, Any]] = response.json()["messages"]
        return answer

    def receive(self, queue: str, n: int = 10, **extra: Any) -> list[dict[str, Any]]:
        response = self.client.post(
            f"{self.q}/{queue}/messages/receive", json={"maxMessages": n, **extra}
        )
        assert response.status_code == 200, response.text
        got: list[dict[str, Any]] = response.json()["messages"]
        return got

    def ack(self, queue: str, *messages: dict[str, Any]) -> None:
        receipts = [m["popReceipt"] for m in messages]
        acked = self.client.post(f"{self.q}/{queue}/messages/ack", json={"popReceipts": receipts})
        assert acked.status_code == 200 and acked.json()["failed"] == [], acked.text

    def create(self, queue: str, **options: Any) -> dict[str, Any]:
        created = self.client.put(f"{self.q}/{queue}", json=options)
        assert created.status_code == 201, created.text
        body: dict[str, Any] = created.json()
        return body


@pytest.fixture
def api(store: Store) -> Iterator[Api]:
    with app_client(Api, store, Settings(admin_token=TOKEN), FakeClock(), prefix="fifo2") as api:
        api.client.headers.update(api.auth)
        yield api


def _refused(response: httpx.Response, *words: str) -> None:
    """A 422 in v2's error shape whose message names each of ``words``."""
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == 422
    for word in words:
        assert word in body["message"], body


# --------------------------------------------------------------------------- options


def test_a_per_group_throughput_limit_needs_deduplication_per_group(api: Api) -> None:
    # SQS's rule, which its endpoint applies to the same queues.
    limit = {"fifo": True, "fifoThroughputLimit": "perMessageGroupId"}
    _refused(api.client.put(f"{api.q}/orders", json=limit), "deduplicationScope")
    api.create("orders", fifo=True, deduplicationScope="messageGroup")
    _refused(
        api.client.patch(f"{api.q}/orders", json={"deduplicationScope": "queue", **limit}),
        "fifoThroughputLimit",
    )
    both = api.client.patch(f"{api.q}/orders", json={"fifoThroughputLimit": "perMessageGroupId"})
    assert both.status_code == 200, both.text
    assert both.json()["fifoThroughputLimit"] == "perMessageGroupId"


def test_fifo_options_round_trip(api: Api) -> None:
    options = {
        "fifo": True,
        "contentBasedDeduplication": True,
        "deduplicationScope": "messageGroup",
        "fifoThroughputLimit": "perMessageGroupId",
    }
    created = api.create("orders", **options)
    assert {k: created[k] for k in options} == options
    shown = api.client.get(f"{api.q}/orders").json()
    assert {k: shown[k] for k in options} == options
    # The same options again: unchanged; other FIFO options: exists with others.
    assert api.client.put(f"{api.q}/orders", json=options).status_code == 200
    other = {**options, "contentBasedDeduplication": False}
    assert api.client.put(f"{api.q}/orders", json=other).status_code == 409
    # A standard queue shows the defaults.
    plain = api.create("plain")
    assert (
        plain["fifo"],
        plain["contentBasedDeduplication"],
        plain["deduplicationScope"],
        plain["fifoThroughputLimit"],
    ) == (False, False, "queue", "perQueue")


def test_patch_changes_a_fifo_queues_deduplication(api: Api) -> None:
    api.create("orders", **FIFO)
    changed = api.client.patch(
        f"{api.q}/orders",
        json={
            "fifo": True,
            "contentBasedDeduplication": True,
            "deduplicationScope": "messageGroup",
        },
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["contentBasedDeduplication"] is True
    assert changed.json()["deduplicationScope"] == "messageGroup"
    assert api.client.get(f"{api.q}/orders").json()["deduplicationScope"] == "messageGroup"


def test_fifo_is_fixed_at_creation(api: Api) -> None:
    api.create("orders", **FIFO)
    api.create("plain")
    to_standard = api.client.patch(f"{api.q}/orders", json={"fifo": False})
    assert to_standard.status_code == 409, to_standard.text
    to_fifo = api.client.patch(f"{api.q}/plain", json={"fifo": True})
    assert to_fifo.status_code == 409, to_fifo.text
    assert api.client.get(f"{api.q}/orders").json()["fifo"] is True
    assert api.client.get(f"{api.q}/plain").json()["fifo"] is False


def test_a_fifo_queues_partitions_are_fixed(api: Api) -> None:
    api.create("orders", fifo=True, partitions=4)
    grown = api.client.patch(f"{api.q}/orders", json={"partitions": 8})
    assert grown.status_code == 409, grown.text
    assert api.client.get(f"{api.q}/orders").json()["partitions"] == 4


def test_fifo_only_options_are_refused_on_a_standard_queue(api: Api) -> None:
    for option, value in (
        ("contentBasedDeduplication", True),
        ("deduplicationScope", "messageGroup"),
        ("fifoThroughputLimit", "perMessageGroupId"),
    ):
        _refused(api.client.put(f"{api.q}/plain", json={option: value}), option, "FIFO")
    api.create("plain")
    _refused(
        api.client.patch(f"{api.q}/plain", json={"contentBasedDeduplication": True}),
        "contentBasedDeduplication",
    )
    for option, bad in (
        ("deduplicationScope", "group"),
        ("fifoThroughputLimit", "perGroup"),
        ("fifo", "yes"),
    ):
        _refused(api.client.put(f"{api.q}/orders", json={"fifo": True, option: bad}), option)


def test_a_fifo_queues_dead_letter_queue_must_be_fifo(api: Api) -> None:
    api.create("dead")
    refused = api.client.put(f"{api.q}/orders", json={"fifo": True, "deadLetterQueue": "dead"})
    assert refused.status_code == 422, refused.text
    assert refused.json()["code"] == 422
    api.create("dead-fifo", **FIFO)
    api.create("orders", fifo=True, deadLetterQueue="dead-fifo")
    moved = api.client.patch(f"{api.q}/orders", json={"deadLetterQueue": "dead"})
    assert moved.status_code == 422, moved.text
    assert api.client.get(f"{api.q}/orders").json()["deadLetterQueue"] == "dead-fifo"


# --------------------------------------------------------------------------- send


def test_group_and_deduplication_ids_are_checked_naming_the_field(api: Api) -> None:
    api.create("plain")
    for field in ("groupId", "deduplicationId"):
        for bad in ("", "a b", "x" * 129, "caf\u00e9", "tab\there"):
            response = api.send("plain", {"body": "fine"}, {"body": "x", field: bad})
            _refused(response, "messages[1]", field)
    # Every allowed character, and the longest id, are accepted.
    longest = (ALLOWED * 2)[:128]
    for good in (ALLOWED, longest, "a"):
        sent = api.sent("plain", {"body": "x", "groupId": good})
        assert len(sent) == 1


def test_a_standard_queue_keeps_the_group_and_shows_it(api: Api) -> None:
    api.create("plain")
    sent = api.sent("plain", {"body": "a", "groupId": "tenant-1"}, {"body": "b"})
    # A standard queue's answer has no FIFO fields.
    assert all("sequenceNumber" not in s and "duplicate" not in s for s in sent)
    peeked = api.client.get(f"{api.q}/plain/messages/peek").json()["messages"]
    assert [(m["body"], m.get("groupId")) for m in peeked] == [("a", "tenant-1"), ("b", None)]
    got = api.receive("plain")
    assert sorted((m["body"], m.get("groupId")) for m in got) == [
        ("a", "tenant-1"),
        ("b", None),
    ]
    assert all("sequenceNumber" not in m for m in got)


def test_a_group_stays_in_one_partition_without_a_partition_key(api: Api) -> None:
    api.create("spread", partitions=8)
    ids = [api.sent("spread", {"body": f"m{i}", "groupId": "device-7"})[0]["id"] for i in range(12)]
    # An id is "<partition>-<monoton>" beyond partition 0, "<monoton>" in it.
    partitions = {i.partition("-")[0] if "-" in i else "0" for i in ids}
    assert len(partitions) == 1, ids
    # A partitionKey still decides when given.
    keyed = [
        api.sent("spread", {"body": "k", "groupId": "device-7", "partitionKey": f"k{i}"})[0]["id"]
        for i in range(12)
    ]
    assert len({i.partition("-")[0] if "-" in i else "0" for i in keyed}) > 1, keyed


def test_a_fifo_send_needs_a_group_and_refuses_a_per_message_delay(api: Api) -> None:
    api.create("orders", **FIFO)
    first = {"body": "a", "groupId": "g", "deduplicationId": "a"}
    missing = api.send("orders", first, {"body": "b", "deduplicationId": "b"})
    _refused(missing, "messages[1]", "groupId")
    delayed = api.send("orders", {**first, "delaySeconds": 5})
    _refused(delayed, "messages[0]", "delaySeconds")
    # Without content-based deduplication every message needs its deduplicationId (SQS's
    # rule: a send that could silently be stored twice is refused).
    undeduplicated = api.send("orders", first, {"body": "b", "groupId": "g"})
    _refused(undeduplicated, "messages[1]", "deduplicationId")
    assert api.client.get(f"{api.q}/orders/messages/peek").json()["messages"] == []


def test_a_fifo_send_answers_increasing_sequence_numbers(api: Api) -> None:
    api.create("orders", **FIFO)
    sent = api.sent(
        "orders",
        *({"body": f"a{i}", "groupId": "a", "deduplicationId": f"a{i}"} for i in range(3)),
        {"body": "b0", "groupId": "b", "deduplicationId": "b0"},
    )
    assert all(s["duplicate"] is False for s in sent)
    numbers = [int(s["sequenceNumber"]) for s in sent[:3]]
    assert numbers == sorted(numbers) and len(set(numbers)) == 3
    later = api.sent("orders", {"body": "a3", "groupId": "a", "deduplicationId": "a3"})
    assert int(later[0]["sequenceNumber"]) > numbers[-1]


def test_a_reused_deduplication_id_is_a_duplicate_for_five_minutes(api: Api) -> None:
    api.create("orders", **FIFO)
    first = api.sent("orders", {"body": "pay 10", "groupId": "g", "deduplicationId": "pay-1"})[0]
    api.clock.advance(299)
    again = api.sent("orders", {"body": "pay 10", "groupId": "g", "deduplicationId": "pay-1"})[0]
    assert again["duplicate"] is True
    assert again["id"] == first["id"]
    peeked = api.client.get(f"{api.q}/orders/messages/peek").json()["messages"]
    assert [m["body"] for m in peeked] == ["pay 10"]  # stored once
    api.clock.advance(2)  # past 5 minutes from the first send
    fresh = api.sent("orders", {"body": "pay 10", "groupId": "g", "deduplicationId": "pay-1"})[0]
    assert fresh["duplicate"] is False and fresh["id"] != first["id"]


def test_content_based_deduplication_uses_the_body(api: Api) -> None:
    api.create("orders", fifo=True, contentBasedDeduplication=True)
    first, second, other = api.sent(
        "orders",
        {"body": "same", "groupId": "g"},
        {"body": "same", "groupId": "g"},
        {"body": "other", "groupId": "g"},
    )
    assert (first["duplicate"], second["duplicate"], other["duplicate"]) == (False, True, False)
    assert second["id"] == first["id"]
    # An explicit deduplicationId decides over the body.
    by_id = api.sent("orders", {"body": "same", "groupId": "g", "deduplicationId": "new"})[0]
    assert by_id["duplicate"] is False and by_id["id"] != first["id"]


# --------------------------------------------------------------------------- receive


def test_receive_delivers_a_group_in_order_one_in_flight(api: Api) -> None:
    api.create("orders", fifo=True, contentBasedDeduplication=True)
    sent = api.sent("orders", *({"body": f"a{i}", "groupId": "a"} for i in range(2)))
    [a0] = api.receive("orders", 1)
    sent += api.sent("orders", {"body": "a2", "groupId": "a"}, {"body": "b0", "groupId": "b"})
    sequence = {m["body"]: m["sequenceNumber"] for m in zip_bodies(sent, "a0 a1 a2 b0")}
    # The group's first, with its group and sequence number.
    assert (a0["body"], a0["groupId"], a0["sequenceNumber"]) == ("a0", "a", sequence["a0"])
    got = api.receive("orders")
    assert [(m["body"], m["groupId"]) for m in got] == [("b0", "b")]  # a1 waits for a0
    assert api.receive("orders") == []  # both groups have a message in flight
    api.ack("orders", a0)
    nxt = api.receive("orders")
    # As many of the group as the answer holds, in order.
    assert [(m["body"], m["sequenceNumber"]) for m in nxt] == [
        ("a1", sequence["a1"]),
        ("a2", sequence["a2"]),
    ]
    api.ack("orders", nxt[0])
    # a2's and b0's leases end unacked: both again.
    api.clock.advance(31)
    again = api.receive("orders")
    assert sorted(m["body"] for m in again) == ["a2", "b0"]
    api.ack("orders", *(m for m in again if m["body"] == "b0"))
    peeked = api.client.get(f"{api.q}/orders/messages/peek").json()["messages"]
    assert [(m["body"], m["groupId"], m["sequenceNumber"]) for m in peeked] == [
        ("a2", "a", sequence["a2"])
    ]


def test_a_retried_receive_with_its_attempt_id_gets_the_same_messages(api: Api) -> None:
    api.create("orders", fifo=True, contentBasedDeduplication=True)
    api.sent("orders", {"body": "a0", "groupId": "a"}, {"body": "b0", "groupId": "b"})
    first = api.receive("orders", receiveAttemptId="try-1")
    assert sorted(m["body"] for m in first) == ["a0", "b0"]
    again = api.receive("orders", receiveAttemptId="try-1")
    assert again == first  # the same deliveries, the same receipts
    assert api.receive("orders", receiveAttemptId="try-2") == []  # both groups in flight
    api.ack("orders", *again)
    bad = api.client.post(
        f"{api.q}/orders/messages/receive", json={"receiveAttemptId": "has space"}
    )
    _refused(bad, "receiveAttemptId")


def zip_bodies(sent: list[dict[str, Any]], bodies: str) -> list[dict[str, Any]]:
    """The send's answers with the bodies they were sent with (in request order)."""
    return [{**s, "body": b} for s, b in zip(sent, bodies.split(), strict=True)]


# --------------------------------------------------------------------------- console


def test_the_console_shows_fifo_options_groups_and_sequence_numbers(api: Api) -> None:
    api.create("orders", fifo=True, contentBasedDeduplication=True)
    api.create("plain")
    sent = api.sent("orders", {"body": "a", "groupId": "<g&1>"}, {"body": "b", "groupId": "g2"})
    api.sent("plain", {"body": "x"})
    login = api.client.post("/console/login", data={"token": TOKEN}, follow_redirects=False)
    assert login.status_code == 303, login.text
    page = api.client.get(f"/console/accounts/{api.account}/queues/orders")
    assert page.status_code == 200, page.text
    assert 'id="fifo"' in page.text and "the SHA-256 of the body" in page.text
    assert "<th>Group</th><th>Sequence</th>" in page.text
    assert '<td class="group">&lt;g&amp;1&gt;</td>' in page.text  # escaped: tenant data
    for s in sent:
        assert f'<td class="num sequence">{s["sequenceNumber"]}</td>' in page.text
    plain = api.client.get(f"/console/accounts/{api.account}/queues/plain").text
    assert 'id="fifo"' not in plain and "<th>Group</th>" not in plain
