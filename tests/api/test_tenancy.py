"""Tenancy over HTTP, on each store: account deletion, dead-letter integrity, queue limits.

The app runs in-process (Litestar's TestClient speaks HTTP to it) on the memory store and
on the real Cassandra, with a FakeClock: leases and holds end when the test moves it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.engine.context import Tuning
from cassieq.store.base import Store
from tests.conftest import AppClient, app_client

TOKEN = "tenancy-operator-token"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
MAX_QUEUES = 3


@dataclass
class Api(AppClient[FakeClock]):
    """The account is not made at the start: `create_account` makes it (again)."""


def _key(key: str) -> dict[str, str]:
    return {"Authorization": f"Key {key}"}


@pytest.fixture
def api(store: Store) -> Iterator[Api]:
    settings = Settings(admin_token=TOKEN, max_queues_per_account=MAX_QUEUES)
    with app_client(Api, store, settings, FakeClock(), prefix="ten", account=False) as api:
        yield api


def test_a_re_created_account_starts_empty(api: Api) -> None:
    c, old = api.client, _key(api.create_account()["primary"])
    assert c.post(f"{api.v1}/queues", json={"queueName": "dead"}, headers=old).status_code == 201
    salaries = {"queueName": "salaries", "dlqName": "dead"}
    assert c.post(f"{api.v1}/queues", json=salaries, headers=old).status_code == 201
    for body in (b"carol-salary-data", b"dave-salary-data"):
        assert (
            c.post(f"{api.v1}/queues/salaries/messages", content=body, headers=old).status_code
            == 201
        )
    assert c.get(f"{api.v1}/queues/salaries/messages/next", headers=old).status_code == 200

    assert c.delete(api.v1, headers=ADMIN).status_code == 204
    assert c.get(api.v1, headers=ADMIN).status_code == 404
    assert c.get(f"{api.v1}/queues", headers=old).status_code == 401
    # The name stays refused until no server can still hold the old account in its cache.
    again = c.post("/api/v1/accounts", json=api.account, headers=ADMIN)
    assert again.status_code == 409 and "moments ago" in again.text
    api.clock.advance(2 * Tuning().account_cache_ms / 1000)
    new = _key(api.create_account()["primary"])
    assert c.get(f"{api.v1}/queues", headers=old).status_code == 401  # old keys: nothing
    assert c.get(f"{api.v1}/queues", headers=new).json() == []
    assert c.get(f"{api.v1}/queues/salaries", headers=new).status_code == 404
    assert c.post(f"{api.v1}/queues", json={"queueName": "dead"}, headers=new).status_code == 201
    assert c.post(f"{api.v1}/queues", json=salaries, headers=new).status_code == 201
    for queue in ("salaries", "dead"):
        assert c.get(f"{api.v1}/queues/{queue}/messages/next", headers=new).status_code == 204
        assert c.get(f"{api.v1}/queues/{queue}/statistics", headers=new).json() == {"size": 0}
        stats = c.get(f"{api.v2}/queues/{queue}/statistics", headers=new).json()
        assert stats == {
            "size": 0, "visible": 0, "inFlight": 0, "delayed": 0, "published": 0, "delivered": 0,
            "acked": 0, "deadLettered": 0, "expired": 0, "oldestMessageAgeSeconds": None,
            "deadLetterPending": 0,
        }  # fmt: skip


def test_a_dead_letter_queue_must_exist_and_its_messages_are_kept_while_it_does_not(
    api: Api,
) -> None:
    c, key = api.client, _key(api.create_account()["primary"])
    work = {"queueName": "work", "maxDeliveryCount": 1, "dlqName": "dead"}
    missing = c.post(f"{api.v1}/queues", json=work, headers=key)
    assert missing.status_code == 422
    assert missing.json() == {"errors": ["dlqName 'dead' must name an existing queue"]}
    assert c.post(f"{api.v1}/queues", json={"queueName": "dead"}, headers=key).status_code == 201
    assert c.post(f"{api.v1}/queues", json=work, headers=key).status_code == 201
    assert (
        c.post(f"{api.v1}/queues/work/messages", content=b"poison", headers=key).status_code == 201
    )
    next_of = f"{api.v1}/queues/work/messages/next"
    assert c.get(next_of, params={"invisibilityTimeSeconds": 1}, headers=key).status_code == 200

    assert c.delete(f"{api.v1}/queues/dead", headers=key).status_code == 200
    api.clock.advance(2)
    assert c.get(next_of, headers=key).status_code == 204  # not delivered again
    stats = c.get(f"{api.v2}/queues/work/statistics", headers=key).json()
    assert (stats["size"], stats["deadLetterPending"], stats["deadLettered"]) == (1, 1, 0)
    assert c.get(f"{api.v1}/queues/work/statistics", headers=key).json() == {"size": 1}

    assert c.post(f"{api.v1}/queues", json={"queueName": "dead"}, headers=key).status_code == 201
    api.clock.advance(Tuning().dead_letter_hold_ms / 1000 + 1)
    assert c.get(next_of, headers=key).status_code == 204  # moved, not delivered
    stats = c.get(f"{api.v2}/queues/work/statistics", headers=key).json()
    assert (stats["size"], stats["deadLetterPending"], stats["deadLettered"]) == (0, 0, 1)
    moved = c.get(f"{api.v1}/queues/dead/messages/next", headers=key)
    assert moved.status_code == 200 and moved.json()["message"] == "poison"
    ack = c.delete(
        f"{api.v1}/queues/dead/messages", params={"popReceipt": moved.json()["popReceipt"]},
        headers=key,
    )  # fmt: skip
    assert ack.status_code == 204
    assert c.get(f"{api.v1}/queues/dead/messages/next", headers=key).status_code == 204


def test_an_account_has_a_queue_limit(api: Api) -> None:
    c, key = api.client, _key(api.create_account()["primary"])
    for i in range(MAX_QUEUES):
        assert (
            c.post(f"{api.v1}/queues", json={"queueName": f"q{i}"}, headers=key).status_code == 201
        )
    over = c.post(f"{api.v1}/queues", json={"queueName": "one-more"}, headers=key)
    assert over.status_code == 409
    assert over.json() == {
        "reason": "Conflict",
        "operation": "createQueue",
        "message": f"account {api.account!r} has {MAX_QUEUES} queues, the most allowed "
        f"({MAX_QUEUES}): delete one first",
        "account": api.account,
    }
    # An existing queue is still found (200), and a deleted one makes room.
    assert c.post(f"{api.v1}/queues", json={"queueName": "q0"}, headers=key).status_code == 200
    assert c.delete(f"{api.v1}/queues/q0", headers=key).status_code == 200
    assert (
        c.post(f"{api.v1}/queues", json={"queueName": "one-more"}, headers=key).status_code == 201
    )
