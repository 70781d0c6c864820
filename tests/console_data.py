"""A tenant's queues for the console's tests (HTTP, over TestClient or a real socket):
a work queue with a dead-letter queue holding one message, messages whose bodies and
attributes carry markup, and a repair pointer left behind (no background work runs)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import httpx

from cassieq.engine import FakeClock

XSS_BODY = "<script>document.title='owned'</script>"
XSS_ATTRIBUTE = "<img src=x onerror=\"document.title='owned'\">"


@dataclass
class Tenant:
    account: str
    key: dict[str, str]
    work: str = "orders"
    dlq: str = "orders-dlq"


def populate(http: httpx.Client, admin: dict[str, str], clock: FakeClock) -> Tenant:
    account = f"console-{uuid.uuid4().hex[:10]}"  # the Cassandra keyspace is shared
    created = http.post("/api/v1/accounts", json=account, headers=admin)
    assert created.status_code == 201, created.text
    t = Tenant(account, {"Authorization": f"Key {created.json()['keys']['primary']}"})
    v1, v2 = f"/api/v1/accounts/{account}", f"/api/v2/accounts/{account}"
    work = {"queueName": t.work, "dlqName": t.dlq, "bucketSize": 2, "maxDeliveryCount": 1,
            "strictFifo": True}  # fmt: skip
    for body in ({"queueName": t.dlq}, work):
        made = http.post(f"{v1}/queues", json=body, headers=t.key)
        assert made.status_code == 201, made.text
    sent = http.post(
        f"{v2}/queues/{t.work}/messages",
        json={"messages": [
            {"body": "first, to be dead-lettered"},
            {"body": XSS_BODY, "attributes": {"note": XSS_ATTRIBUTE}},
            *({"body": f"order {i}"} for i in range(6)),
        ]},
        headers=t.key,
    )  # fmt: skip
    assert sent.status_code in (200, 201), sent.text
    # One delivery of a 1-delivery queue, its lease let run out: the next receive moves it
    # to the dead-letter queue.
    got = http.post(
        f"{v2}/queues/{t.work}/messages/receive",
        json={"maxMessages": 1, "visibilityTimeoutSeconds": 1},
        headers=t.key,
    )
    assert got.json()["messages"][0]["body"] == "first, to be dead-lettered", got.text
    clock.advance(2)
    more = http.post(
        f"{v2}/queues/{t.work}/messages/receive",
        json={"maxMessages": 4, "visibilityTimeoutSeconds": 600},
        headers=t.key,
    )
    assert more.status_code == 200, more.text
    assert XSS_BODY in [m["body"] for m in more.json()["messages"]], more.text
    stats = http.get(f"{v2}/queues/{t.dlq}/statistics", headers=t.key).json()
    assert stats["size"] == 1, stats
    return t
