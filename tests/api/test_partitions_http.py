"""Partitioned queues over HTTP (issue 35), on each store: the v2 option, its growth and
refused shrink, partition keys and ids, peek's cursor; v1 clients on a partitioned queue
made by the server's default (they do not know)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.store.base import Store
from tests.conftest import AppClient, app_client

TOKEN = "partitions-operator-token"


@dataclass
class Api(AppClient[FakeClock]):
    @property
    def q(self) -> str:
        return f"/api/v2/accounts/{self.account}/queues"

    @property
    def v1(self) -> str:
        return f"/api/v1/accounts/{self.account}/queues"


@pytest.fixture
def api(store: Store) -> Iterator[Api]:
    settings = Settings(admin_token=TOKEN, default_partitions=4)
    with app_client(Api, store, settings, FakeClock(), prefix="part") as api:
        api.client.headers.update(api.auth)
        yield api


def test_v2_creates_grows_and_refuses_to_shrink_partitions(api: Api) -> None:
    c = api.client
    created = c.put(f"{api.q}/orders", json={"partitions": 3})
    assert created.status_code == 201, created.text
    assert created.json()["partitions"] == 3
    assert c.put(f"{api.q}/orders", json={"partitions": 3}).status_code == 200
    assert c.put(f"{api.q}/orders", json={"partitions": 5}).status_code == 409
    grown = c.patch(f"{api.q}/orders", json={"partitions": 6})
    assert grown.status_code == 200 and grown.json()["partitions"] == 6
    shrink = c.patch(f"{api.q}/orders", json={"partitions": 2})
    assert shrink.status_code == 409, shrink.text
    assert "only grow" in shrink.text
    for bad in (0, 257, "many"):
        refused = c.patch(f"{api.q}/orders", json={"partitions": bad})
        assert refused.status_code in (400, 422), refused.text
        assert "partitions" in refused.text
    assert c.get(f"{api.q}/orders").json()["partitions"] == 6
    # Absent on create: the server's default.
    assert c.put(f"{api.q}/plain", json={}).json()["partitions"] == 4


def test_v2_messages_carry_partitioned_ids_and_keys_keep_order(api: Api) -> None:
    c = api.client
    assert c.put(f"{api.q}/orders", json={"partitions": 4}).status_code == 201
    messages = [{"body": f"{k}/{n}", "partitionKey": k} for n in range(3) for k in "abcdef"]
    for m in messages:
        sent = c.post(f"{api.q}/orders/messages", json={"messages": [m]})
        assert sent.status_code == 201, sent.text
    ids: set[str] = set()
    bodies: list[str] = []
    while True:
        got = c.post(f"{api.q}/orders/messages/receive", json={"maxMessages": 10}).json()
        if not got["messages"]:
            break
        ids |= {m["id"] for m in got["messages"]}
        bodies += [m["body"] for m in got["messages"]]
        acked = c.post(
            f"{api.q}/orders/messages/ack",
            json={"popReceipts": [m["popReceipt"] for m in got["messages"]]},
        ).json()
        assert acked["failed"] == []
    assert sorted(bodies) == sorted(m["body"] for m in messages)
    assert len(ids) == len(messages)  # unique across partitions
    assert any("-" in i for i in ids)  # a partition beyond the first prefixes its ids
    for k in "abcdef":
        assert [b for b in bodies if b.startswith(f"{k}/")] == [f"{k}/{n}" for n in range(3)]
    bad_key = c.post(
        f"{api.q}/orders/messages", json={"messages": [{"body": "x", "partitionKey": ""}]}
    )
    assert bad_key.status_code in (400, 422) and "partitionKey" in bad_key.text


def test_peek_pages_through_every_partition(api: Api) -> None:
    c = api.client
    assert c.put(f"{api.q}/orders", json={"partitions": 3}).status_code == 201
    for i in range(7):
        api.clock.advance(0.01)
        c.post(f"{api.q}/orders/messages", json={"messages": [{"body": f"m{i}"}]})
    seen: list[str] = []
    params: dict[str, str | int] = {"limit": 3}
    for _ in range(5):
        page = c.get(f"{api.q}/orders/messages/peek", params=params)
        assert page.status_code == 200, page.text
        seen += [m["body"] for m in page.json()["messages"]]
        following = page.json()["next"]
        if following is None:
            break
        params["after"] = following
    assert seen == [f"m{i}" for i in range(7)]
    bad = c.get(f"{api.q}/orders/messages/peek", params={"after": "1.x"})
    assert bad.status_code in (400, 422)


def test_v1_clients_use_a_queue_partitioned_by_the_servers_default(api: Api) -> None:
    c = api.client
    created = c.post(api.v1, json={"queueName": "legacy"})
    assert created.status_code == 201, created.text
    assert c.get(f"{api.q}/legacy").json()["partitions"] == 4
    for i in range(8):
        put = c.post(f"{api.v1}/legacy/messages", content=f"m{i}".encode())
        assert put.status_code == 201, put.text
    got: list[str] = []
    while (nxt := c.get(f"{api.v1}/legacy/messages/next")).status_code == 200:
        body = nxt.json()
        got.append(body["message"])
        ack = c.delete(f"{api.v1}/legacy/messages", params={"popReceipt": body["popReceipt"]})
        assert ack.is_success, ack.text
    assert sorted(got) == [f"m{i}" for i in range(8)]
