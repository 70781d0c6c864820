"""v2 subscription routes over HTTP (issue 36), on each store: create/list/show/delete, an
ordered subscription's read, commit (compare-and-set) and seek, their refusals and levels.

The app runs in-process (Litestar's TestClient) on the memory store and on the real
Cassandra, with a FakeClock: send times and ages are the ones the test set.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from cassieq.api.v2.times import iso_time
from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.model_subscriptions import MAX_SUBSCRIPTIONS_PER_QUEUE
from cassieq.store.base import Store
from tests.conftest import AppClient, app_client

TOKEN = "v2-subscriptions-operator-token"
ALL_LEVELS = "rpuagcd"


@dataclass
class Api(AppClient[FakeClock]):
    """Its client sends the primary key unless told otherwise; queue "q" exists."""

    def queue_url(self, queue: str = "q") -> str:
        return f"{self.v2}/queues/{queue}"

    def url(self, name: str = "", suffix: str = "", queue: str = "q") -> str:
        base = f"{self.queue_url(queue)}/subscriptions"
        return f"{base}/{name}{suffix}" if name else base

    def subscribe(self, name: str = "s", start: str = "earliest", queue: str = "q") -> Any:
        created = self.client.put(
            self.url(name, queue=queue), json={"mode": "ordered", "start": start}
        )
        assert created.status_code == 201, created.text
        return created.json()

    def send(self, *entries: str | dict[str, Any], queue: str = "q") -> list[str]:
        messages = [{"body": e} if isinstance(e, str) else e for e in entries]
        sent = self.client.post(f"{self.queue_url(queue)}/messages", json={"messages": messages})
        assert sent.status_code == 201, sent.text
        return [m["id"] for m in sent.json()["messages"]]

    def read(self, name: str = "s", limit: int = 1000, queue: str = "q") -> Any:
        got = self.client.get(self.url(name, "/messages", queue), params={"limit": limit})
        assert got.status_code == 200, got.text
        return got.json()

    def bodies(self, name: str = "s") -> list[str]:
        return [m["body"] for m in self.read(name)["messages"]]

    def commit(self, position: str, name: str = "s", **more: Any) -> httpx.Response:
        return self.client.post(self.url(name, "/position"), json={"position": position, **more})

    def seek(self, to: Any, name: str = "s") -> httpx.Response:
        return self.client.post(self.url(name, "/seek"), json={"to": to})

    def show(self, name: str = "s") -> Any:
        shown = self.client.get(self.url(name))
        assert shown.status_code == 200, shown.text
        return shown.json()


@pytest.fixture
def api(store: Store) -> Iterator[Api]:
    with app_client(Api, store, Settings(admin_token=TOKEN), FakeClock(), prefix="v2s") as api:
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


def test_put_creates_then_answers_unchanged_or_conflict(api: Api) -> None:
    c = api.client
    created = c.put(api.url("audit"), json={"mode": "ordered", "start": "earliest"})
    assert created.status_code == 201, created.text
    body = created.json()
    assert set(body) == {"name", "mode", "start", "createdAt", "position"}
    assert (body["name"], body["mode"], body["start"]) == ("audit", "ordered", "earliest")
    assert body["createdAt"] == iso_time(api.clock.now())
    assert isinstance(body["position"], str) and body["position"]
    same = c.put(api.url("audit"), json={"mode": "ordered", "start": "earliest"})
    assert same.status_code == 200 and same.json() == body
    _error(c.put(api.url("audit"), json={"mode": "ordered", "start": "latest"}), 409)
    # start absent: latest (a new reader of a stream starts with what comes next).
    default = c.put(api.url("tail"), json={"mode": "ordered"})
    assert default.status_code == 201 and default.json()["start"] == "latest"
    assert api.show("audit")["start"] == "earliest"  # unchanged by the refused PUT


def test_put_refuses_bad_input_with_4xx(api: Api) -> None:
    c = api.client
    ordered = {"mode": "ordered", "start": "earliest"}
    _error(c.put(api.url("s"), json={**ordered, "startAt": "earliest"}), 422, "startAt")
    _error(c.put(api.url("s"), json={"start": "earliest"}), 422, "mode")
    _error(c.put(api.url("s"), json={"mode": "fanout"}), 422, "mode")
    for start in ("yesterday", "2026-11-27", "2026-11-27T09:00:00", "2026-13-01T00:00:00Z", 5):
        _error(c.put(api.url("s"), json={"mode": "ordered", "start": start}), 422, "start")
    _error(c.put(api.url("bad:name"), json=ordered), 422, "[a-zA-Z0-9_.-]+")
    _error(c.put(api.url("x" * 256), json=ordered), 422, "255")
    _error(c.put(api.url("s", queue="missing"), json=ordered), 404)
    assert c.get(api.url()).json() == {"subscriptions": []}


def test_list_show_and_delete(api: Api, store: Store) -> None:
    c = api.client
    assert c.get(api.url()).json() == {"subscriptions": []}
    api.subscribe("a", "earliest")
    api.subscribe("b", "latest")
    listed = c.get(api.url())
    assert listed.status_code == 200, listed.text
    entries = listed.json()["subscriptions"]
    assert sorted(e["name"] for e in entries) == ["a", "b"]
    fields = {"name", "mode", "start", "createdAt", "position", "lag", "oldestUnackedAgeSeconds"}
    assert all(set(e) == fields for e in entries)
    assert c.get(api.url("a")).json() == next(e for e in entries if e["name"] == "a")
    _error(c.get(api.url("missing")), 404)
    _error(c.get(api.url(queue="missing")), 404)
    assert c.delete(api.url("a")).status_code == 204
    _error(c.get(api.url("a")), 404)
    _error(c.delete(api.url("a")), 404)
    _error(c.get(api.url("a", "/messages")), 404)
    assert [e["name"] for e in c.get(api.url()).json()["subscriptions"]] == ["b"]
    # Deleted and made again: a new subscription, from its own start.
    api.send("before")
    assert api.subscribe("a", "earliest")["start"] == "earliest"
    assert api.bodies("a") == ["before"]


def test_lag_and_oldest_unacked_age(api: Api) -> None:
    api.subscribe()
    shown = api.show()
    assert (shown["lag"], shown["oldestUnackedAgeSeconds"]) == (0, None)
    api.send("one", "two")
    api.clock.advance(2.5)
    api.send("three")
    api.clock.advance(5)
    shown = api.show()
    assert shown["lag"] == 3
    assert shown["oldestUnackedAgeSeconds"] == pytest.approx(7.5)
    first = api.read(limit=2)
    assert api.commit(first["next"]).status_code == 200
    shown = api.show()
    assert shown["lag"] == 1
    assert shown["oldestUnackedAgeSeconds"] == pytest.approx(5)
    assert api.commit(api.read()["next"]).status_code == 200
    assert (api.show()["lag"], api.show()["oldestUnackedAgeSeconds"]) == (0, None)


def test_read_answers_messages_after_the_position_until_committed(api: Api) -> None:
    api.subscribe()
    ids = api.send(
        {"body": "first", "attributes": {"kind": "a"}},
        {"body": "second ✓", "groupId": "g-1"},
        "third",
    )
    page = api.read(limit=2)
    assert set(page) == {"messages", "next"}
    first, second = page["messages"]
    assert set(first) == {"id", "body", "attributes", "position", "sentAt"}  # no group: none
    assert (first["id"], first["body"], first["attributes"]) == (ids[0], "first", {"kind": "a"})
    assert first["sentAt"] == iso_time(api.clock.now())
    assert (second["id"], second["body"], second["groupId"]) == (ids[1], "second ✓", "g-1")
    assert page["next"] == second["position"] != first["position"]
    # Not committed: read again, the same messages (at least once).
    assert api.read(limit=2) == page
    committed = api.commit(first["position"])
    assert committed.status_code == 200, committed.text
    assert committed.json()["position"] == first["position"] == api.show()["position"]
    assert [m["id"] for m in api.read()["messages"]] == ids[1:]
    assert api.commit(api.read()["next"]).status_code == 200
    empty = api.read()
    assert empty == {"messages": [], "next": api.show()["position"]}
    # A message sent later is read after the committed position.
    (later,) = api.send("fourth")
    assert [m["id"] for m in api.read()["messages"]] == [later]


def test_read_limit_bounds(api: Api) -> None:
    api.subscribe()
    api.send(*(f"m{i}" for i in range(5)))
    assert len(api.read(limit=1)["messages"]) == 1
    assert len(api.read(limit=1000)["messages"]) == 5
    assert len(api.client.get(api.url("s", "/messages")).json()["messages"]) == 5  # default
    for bad in ("0", "1001", "-1", "ten"):
        answer = api.client.get(api.url("s", "/messages"), params={"limit": bad})
        _error(answer, 400, "limit")


def test_two_subscriptions_keep_their_own_positions(api: Api) -> None:
    api.subscribe("a")
    api.subscribe("b")
    api.send("x", "y")
    assert api.commit(api.read("a")["next"], name="a").status_code == 200
    assert api.bodies("a") == []
    assert api.bodies("b") == ["x", "y"]
    # Nor do they take anything from the queue's own consumers.
    received = api.client.post(f"{api.queue_url()}/messages/receive", json={"maxMessages": 10})
    assert sorted(m["body"] for m in received.json()["messages"]) == ["x", "y"]


def test_start_latest_and_start_at_a_time(api: Api) -> None:
    api.send("old")
    api.clock.advance(10)
    middle = api.clock.now()
    api.send("middle")
    api.clock.advance(10)
    api.subscribe("tail", "latest")
    api.subscribe("since", iso_time(middle))
    api.send("new")
    assert api.bodies("tail") == ["new"]
    assert api.bodies("since") == ["middle", "new"]


def test_commit_compare_and_set(api: Api) -> None:
    api.subscribe()
    api.send("a", "b")
    start = api.show()["position"]
    first, second = (m["position"] for m in api.read()["messages"])
    moved = api.commit(first, expected=start)
    assert moved.status_code == 200 and moved.json()["position"] == first
    _error(api.commit(second, expected=start), 409)  # someone moved it: nothing changed
    assert api.show()["position"] == first
    assert api.commit(second, expected=first).json()["position"] == second
    # Without expected: stored as it is (backwards too).
    assert api.commit(start).json()["position"] == start
    assert api.bodies() == ["a", "b"]


def test_commit_refuses_bad_input(api: Api) -> None:
    api.subscribe()
    position = api.show()["position"]
    c = api.client
    _error(c.post(api.url("s", "/position"), json={"position": position, "at": 1}), 422, "at")
    _error(c.post(api.url("s", "/position"), json={}), 422, "position")
    _error(c.post(api.url("s", "/position"), json={"position": 3}), 422, "position")
    _error(c.post(api.url("s", "/position"), json={"position": ""}), 422, "position")
    for garbage in ("not a position", "-5", "1.2.3.4.5.6.7.8.9"):
        _error(api.commit(garbage), 422)
    _error(api.commit(position, name="missing"), 404)
    assert api.show()["position"] == position


def test_seek_earliest_latest_time_and_position(api: Api) -> None:
    api.subscribe()
    api.send("a")
    api.clock.advance(10)
    t_b = api.clock.now()
    api.send("b")
    api.clock.advance(10)
    api.send("c")
    assert api.commit(api.read()["next"]).status_code == 200
    assert api.bodies() == []
    replay = api.seek("earliest")
    assert replay.status_code == 200, replay.text
    assert set(replay.json()) == {"name", "mode", "start", "createdAt", "position"}
    assert replay.json()["position"] == api.show()["position"]
    assert api.bodies() == ["a", "b", "c"]
    assert api.seek("latest").status_code == 200
    assert api.bodies() == []
    # A time: from the first message sent at or after it, in any offset.
    assert api.seek({"time": iso_time(t_b)}).status_code == 200
    assert api.bodies() == ["b", "c"]
    in_paris = datetime.fromtimestamp(t_b / 1000, UTC).astimezone(timezone(timedelta(hours=1)))
    assert api.seek({"time": in_paris.isoformat()}).status_code == 200
    assert api.bodies() == ["b", "c"]
    # Within b's millisecond but after it: b was sent before T.
    just_after = iso_time(t_b).replace("Z", "1Z")  # ".000Z" -> ".0001Z": 100 µs later
    assert api.seek({"time": just_after}).status_code == 200
    assert api.bodies() == ["c"]
    assert api.seek({"time": "2000-01-01T00:00:00Z"}).status_code == 200
    assert api.bodies() == ["a", "b", "c"]
    # A position given earlier: the read starts after it.
    a_position = api.read()["messages"][0]["position"]
    assert api.seek("latest").status_code == 200
    assert api.seek({"position": a_position}).json()["position"] == a_position
    assert api.bodies() == ["b", "c"]


def test_seek_refuses_bad_input(api: Api) -> None:
    api.subscribe()
    c = api.client
    bad_times = ("noon", "2026-11-27", "20261127T090000Z", "2026-11-27t09:00:00z")
    for to in ("start", {}, *({"time": t} for t in bad_times), {"offset": 3}, 7):
        _error(api.seek(to), 422, "to")
    both = {"time": "2026-11-27T09:00:00Z", "position": api.show()["position"]}
    _error(api.seek(both), 422, "exactly one")
    _error(c.post(api.url("s", "/seek"), json={"to": "earliest", "now": True}), 422, "now")
    _error(c.post(api.url("s", "/seek"), json={}), 422, "to")
    _error(api.seek({"position": "not a position"}), 422)
    _error(api.seek("earliest", name="missing"), 404)


def test_a_partitioned_queue_reads_every_partition_in_order(api: Api) -> None:
    assert api.client.put(api.queue_url("wide"), json={"partitions": 3}).status_code == 201
    api.subscribe(queue="wide")
    entries = [{"body": f"m{i}", "partitionKey": f"k{i % 5}"} for i in range(30)]
    sent = api.send(*entries, queue="wide")
    seen: list[dict[str, Any]] = []
    while True:
        page = api.read(limit=7, queue="wide")
        if not page["messages"]:
            break
        seen += page["messages"]
        committed = api.client.post(
            api.url("s", "/position", "wide"), json={"position": page["next"]}
        )
        assert committed.status_code == 200, committed.text
    assert sorted(m["id"] for m in seen) == sorted(sent)  # each once
    by_partition: dict[str, list[int]] = {}
    for m in seen:
        partition, _, monoton = m["id"].rpartition("-")
        by_partition.setdefault(partition, []).append(int(monoton))
    assert len(by_partition) > 1
    assert all(monotons == sorted(monotons) for monotons in by_partition.values())


def test_a_queue_has_at_most_its_limit_of_subscriptions(api: Api) -> None:
    for i in range(MAX_SUBSCRIPTIONS_PER_QUEUE):
        api.subscribe(f"s{i}")
    _error(api.client.put(api.url("one-more"), json={"mode": "ordered"}), 409)
    # The same options again are still answered (nothing new is made).
    assert (
        api.client.put(api.url("s0"), json={"mode": "ordered", "start": "earliest"}).status_code
        == 200
    )
    assert api.client.delete(api.url("s0")).status_code == 204
    assert api.client.put(api.url("one-more"), json={"mode": "ordered"}).status_code == 201


def test_a_deleted_queue_takes_its_subscriptions(api: Api) -> None:
    api.subscribe()
    assert api.client.delete(api.queue_url()).status_code == 204
    _error(api.client.get(api.url("s")), 404)
    assert api.client.put(api.queue_url(), json={}).status_code == 201
    assert api.client.get(api.url()).json() == {"subscriptions": []}


def test_each_route_needs_its_level(api: Api) -> None:
    api.subscribe()
    position = api.show()["position"]
    routes: list[tuple[str, str, str, Any]] = [
        ("c", "PUT", api.url("new"), {"mode": "ordered"}),
        ("g", "GET", api.url(), None),
        ("g", "GET", api.url("s"), None),
        ("r", "GET", api.url("s", "/messages"), None),
        ("a", "POST", api.url("s", "/position"), {"position": position}),
        ("a", "POST", api.url("s", "/seek"), {"to": "earliest"}),
        ("d", "DELETE", api.url("s"), None),  # last: the others need it
    ]
    no_key = {"Authorization": ""}
    for level, method, url, body in routes:
        others = api.grant(*ALL_LEVELS.replace(level, ""), queue="q")
        refused = api.client.request(method, url, json=body, params=others, headers=no_key)
        _error(refused, 403)
        own = api.grant(level, queue="q")
        allowed = api.client.request(method, url, json=body, params=own, headers=no_key)
        assert allowed.status_code in (200, 201, 204), (level, method, url, allowed.text)
    _error(api.client.get(api.url(), headers={"Authorization": "Key wrong"}), 401)
