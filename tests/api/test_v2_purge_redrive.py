"""/api/v2 purge and redrive over HTTP, on each store.

The app runs in-process (Litestar's TestClient speaks HTTP to it) on the memory store and
on the real Cassandra, with a FakeClock. A redrive task runs on the app's event loop: the
test waits for it through the client's portal (no sleep).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from cassieq.api.state import AppState
from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.store.base import Store
from tests.conftest import AppClient, app_client

TOKEN = "purge-redrive-operator-token"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
NO_KEY = {"Authorization": ""}


@dataclass
class Api(AppClient[FakeClock]):
    def queue(self, name: str, **options: object) -> None:
        self.create_v1_queue(name, **options)

    def put(self, queue: str, body: str) -> None:
        put = self.client.post(
            f"{self.v1}/queues/{queue}/messages", content=body, headers=self.auth
        )
        assert put.status_code == 201, put.text

    def drain(self, queue: str) -> list[str]:
        seen = []
        next_url = f"{self.v1}/queues/{queue}/messages/next"
        while (got := self.client.get(next_url, headers=self.auth)).status_code == 200:
            seen.append(got.json()["message"])
            receipt = got.json()["popReceipt"]
            acked = self.client.delete(
                f"{self.v1}/queues/{queue}/messages",
                params={"popReceipt": receipt},
                headers=self.auth,
            )
            assert acked.status_code == 204, acked.text
        assert got.status_code == 204
        return seen

    def join_redrives(self) -> None:
        app: AppState = self.client.app.state.cassieq
        assert self.client.blocking_portal is not None
        self.client.blocking_portal.call(app.engine.redriver.join)


@pytest.fixture
def api(store: Store) -> Iterator[Api]:
    with app_client(Api, store, Settings(admin_token=TOKEN), FakeClock(), prefix="pr") as api:
        yield api


def test_purge(api: Api) -> None:
    c = api.client
    api.queue("q")
    for i in range(5):
        api.put("q", f"m{i}")
    taken = c.get(f"{api.v1}/queues/q/messages/next", headers=api.auth)
    assert taken.status_code == 200
    purged = c.post(f"{api.v2}/queues/q/purge", headers=api.auth)
    assert (purged.status_code, purged.json()) == (202, {"purged": 5})
    stale = c.delete(
        f"{api.v1}/queues/q/messages",
        params={"popReceipt": taken.json()["popReceipt"]},
        headers=api.auth,
    )
    assert stale.status_code == 409  # the message in flight was purged too
    api.put("q", "later")
    assert api.drain("q") == ["later"]
    stats = c.get(f"{api.v2}/queues/q/statistics", headers=api.auth).json()
    assert (stats["size"], stats["published"], stats["acked"]) == (0, 6, 1)
    again = c.post(f"{api.v2}/queues/q/purge", headers=api.auth)
    assert (again.status_code, again.json()) == (202, {"purged": 0})


def test_purge_needs_level_d_and_an_existing_queue(api: Api) -> None:
    c = api.client
    api.queue("q")
    api.put("q", "kept")
    no_d = api.grant("r", "p", "a", "u", "g", "c")
    refused = c.post(f"{api.v2}/queues/q/purge", params=no_d, headers=NO_KEY)
    assert refused.status_code == 403
    assert refused.json()["code"] == 403  # the v2 error shape
    with_d = api.grant("d")
    done = c.post(f"{api.v2}/queues/q/purge", params=with_d, headers=NO_KEY)
    assert (done.status_code, done.json()) == (202, {"purged": 1})
    missing = c.post(f"{api.v2}/queues/nope/purge", headers=api.auth)
    assert missing.status_code == 404
    assert set(missing.json()) <= {"code", "message", "detail"}
    assert c.post(f"{api.v2}/queues/q/purge").status_code == 401


def _dead_lettered(api: Api, sources: dict[str, list[str]]) -> None:
    api.queue("dead")
    for name, bodies in sources.items():
        api.queue(name, maxDeliveryCount=1, dlqName="dead")
        for body in bodies:
            api.put(name, body)
        for _ in bodies:
            got = api.client.get(
                f"{api.v1}/queues/{name}/messages/next",
                params={"invisibilityTimeSeconds": 5},
                headers=api.auth,
            )
            assert got.status_code == 200
    api.clock.advance(6)
    total = sum(len(b) for b in sources.values())
    for name in sources:  # each is past its deliveries: moved to "dead", not delivered
        got = api.client.get(f"{api.v1}/queues/{name}/messages/next", headers=api.auth)
        assert got.status_code == 204
    stats = api.client.get(f"{api.v2}/queues/dead/statistics", headers=api.auth).json()
    assert stats["size"] == total


def test_redrive_back_to_the_sources(api: Api) -> None:
    c = api.client
    _dead_lettered(api, {"a": ["a0", "a1"], "b": ["b0"]})
    started = c.post(f"{api.v2}/queues/dead/redrive", json={}, headers=api.auth)
    assert started.status_code == 202, started.text
    task = started.json()["taskId"]
    api.join_redrives()
    status = c.get(f"{api.v2}/queues/dead/redrive/{task}", headers=api.auth)
    assert status.status_code == 200
    assert status.json() == {"status": "completed", "moved": 3, "total": 3, "failed": 0, "to": None}
    assert sorted(api.drain("a")) == ["a0", "a1"]
    assert api.drain("b") == ["b0"]
    assert api.drain("dead") == []


def test_redrive_to_a_given_queue_without_a_body_field_and_errors(api: Api) -> None:
    c = api.client
    _dead_lettered(api, {"a": ["x"]})
    api.queue("c")
    started = c.post(
        f"{api.v2}/queues/dead/redrive", json={"to": "c", "maxPerSecond": 500}, headers=api.auth
    )
    assert started.status_code == 202, started.text
    api.join_redrives()
    assert api.drain("c") == ["x"]
    unknown = c.get(f"{api.v2}/queues/dead/redrive/no-such-task", headers=api.auth)
    assert unknown.status_code == 404 and unknown.json()["code"] == 404
    nowhere = c.post(f"{api.v2}/queues/dead/redrive", json={"to": "nope"}, headers=api.auth)
    assert nowhere.status_code == 404 and nowhere.json()["code"] == 404
    no_dlq = c.post(f"{api.v2}/queues/nope/redrive", json={}, headers=api.auth)
    assert no_dlq.status_code == 404
    for bad in ({"maxPerSecond": 0}, {"to": "bad name"}, {"unknown": 1}, {"to": "dead"}):
        refused = c.post(f"{api.v2}/queues/dead/redrive", json=bad, headers=api.auth)
        assert refused.status_code in (400, 422), (bad, refused.text)
        assert set(refused.json()) <= {"code", "message", "detail"}


def test_redrive_levels(api: Api) -> None:
    c = api.client
    _dead_lettered(api, {"a": ["x"]})
    api.queue("c")
    no_p = api.grant("r", "a", "u", "g", "c", "d")
    assert (
        c.post(f"{api.v2}/queues/dead/redrive", json={}, params=no_p, headers=NO_KEY).status_code
        == 403
    )
    # A grant for the dead-letter queue only does not reach the target named as "to".
    dead_only = api.grant("p", queue="dead")
    to_c = c.post(
        f"{api.v2}/queues/dead/redrive", json={"to": "c"}, params=dead_only, headers=NO_KEY
    )
    assert to_c.status_code == 401
    started = c.post(
        f"{api.v2}/queues/dead/redrive", json={"to": "c"}, params=api.grant("p"), headers=NO_KEY
    )
    assert started.status_code == 202
    task = started.json()["taskId"]
    api.join_redrives()
    no_g = c.get(f"{api.v2}/queues/dead/redrive/{task}", params=api.grant("p"), headers=NO_KEY)
    assert no_g.status_code == 403
    with_g = c.get(f"{api.v2}/queues/dead/redrive/{task}", params=api.grant("g"), headers=NO_KEY)
    assert with_g.json()["moved"] == 1


def test_a_queue_that_is_no_dead_letter_queue_is_refused_with_the_reason(api: Api) -> None:
    """Before: 202, then a task that failed each message with no reason given."""
    api.queue("plain")
    api.put("plain", "x")
    refused = api.client.post(f"{api.v2}/queues/plain/redrive", json={}, headers=api.auth)
    assert refused.status_code == 422, refused.text
    assert "'plain' is no dead-letter queue" in refused.json()["message"]
    assert api.drain("plain") == ["x"]  # untouched
