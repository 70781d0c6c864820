"""A queue's message policy holds whatever API a message comes through (issue #34).

`maxMessageBytes` and `delaySeconds` are applied by the engine: before, v2 and SQS each
checked them and v1 checked neither, so a v1 put of 5,000 bytes into a queue made with
`maxMessageBytes: 1024, delaySeconds: 60` answered 201 and was delivered at once. One app per
store, on a socket (boto3 needs one), with a FakeClock that starts at the wall clock (SigV4
checks request times against it) and moves only when a test says.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import httpx
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.store.base import Store
from tests.api.live import served

TOKEN = "queue-policy-operator-token"
LIMIT = 1024
DELAY_S = 60


@dataclass
class Policy:
    url: str
    account: str
    key: str
    clock: FakeClock
    queue: str

    def v1(self) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.url}/api/v1/accounts/{self.account}/queues/{self.queue}",
            headers={"Authorization": f"Key {self.key}"},
            timeout=30,
        )

    def v2(self) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.url}/api/v2/accounts/{self.account}/queues/{self.queue}",
            headers={"Authorization": f"Key {self.key}"},
            timeout=30,
        )

    def sqs(self) -> Any:
        return boto3.client(
            "sqs",
            endpoint_url=self.url,
            region_name="us-east-1",
            aws_access_key_id=self.account,
            aws_secret_access_key=self.key,
            config=Config(retries={"max_attempts": 1}),
        )

    def queue_url(self) -> str:
        url: str = self.sqs().get_queue_url(QueueName=self.queue)["QueueUrl"]
        return url

    def visible_count(self) -> int:
        """Messages a v2 peek sees (visible or not): what was stored."""
        with self.v2() as v2:
            peeked = v2.get("/messages/peek", params={"limit": 100})
        assert peeked.status_code == 200, peeked.text
        return len(peeked.json()["messages"])


@pytest.fixture
def policy(store: Store) -> Iterator[Policy]:
    clock = FakeClock(start_ms=int(time.time() * 1000))
    app = create_app(Settings(admin_token=TOKEN), store, clock=clock, background=False)
    with served(app) as port:
        url = f"http://127.0.0.1:{port}"
        account = f"policy-{uuid.uuid4().hex[:10]}"  # the Cassandra keyspace is shared
        created = httpx.post(
            f"{url}/api/v1/accounts",
            json=account,
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=30,
        )
        assert created.status_code == 201, created.text
        running = Policy(url, account, created.json()["keys"]["primary"], clock, "small")
        with running.v2() as v2:
            made = v2.put("", json={"maxMessageBytes": LIMIT, "delaySeconds": DELAY_S})
        assert made.status_code == 201, made.text
        yield running


# --------------------------------------------------------------------------- maxMessageBytes


def test_v1_put_over_the_queues_limit_is_413_in_v1s_shape_and_stores_nothing(
    policy: Policy,
) -> None:
    with policy.v1() as v1:
        refused = v1.post("/messages", content="x" * 5000, headers={"Content-Type": "text/plain"})
    assert refused.status_code == 413, refused.text
    body = refused.json()
    assert set(body) == {"errors"}, body  # v1's (Dropwizard's) {"errors": [...]} shape
    assert "5000 bytes" in body["errors"][0] and "maxMessageBytes, 1024" in body["errors"][0]
    assert policy.visible_count() == 0


def test_v1_put_at_the_limit_is_stored(policy: Policy) -> None:
    with policy.v1() as v1:
        put = v1.post("/messages", content="x" * LIMIT, headers={"Content-Type": "text/plain"})
    assert put.status_code == 201, put.text
    assert policy.visible_count() == 1


def test_v1_update_with_a_body_over_the_limit_is_413(policy: Policy) -> None:
    with policy.v1() as v1:
        assert v1.post("/messages?initialInvisibilitySeconds=0", content="small").status_code == 201
        got = v1.get("/messages/next")
        assert got.status_code == 200, got.text
        receipt = got.json()["popReceipt"]
        refused = v1.put(
            "/messages",
            params={"popReceipt": receipt},
            json={"message": "y" * (LIMIT + 1), "newInvisibilitySeconds": 30},
        )
    assert refused.status_code == 413, refused.text
    assert "maxMessageBytes, 1024" in refused.json()["errors"][0]


def test_v2_send_over_the_limit_is_refused_naming_the_entry(policy: Policy) -> None:
    with policy.v2() as v2:
        refused = v2.post(
            "/messages", json={"messages": [{"body": "ok"}, {"body": "x" * (LIMIT + 1)}]}
        )
    assert refused.status_code == 422, refused.text
    assert refused.json()["message"] == (
        "messages[1] is 1025 bytes (body and attributes, UTF-8): more than the queue's "
        "maxMessageBytes, 1024"
    )
    assert policy.visible_count() == 0  # the whole send is refused


def test_sqs_send_over_the_limit_is_refused_as_sqs_refuses_it(policy: Policy) -> None:
    sqs = policy.sqs()
    with pytest.raises(ClientError) as refused:
        sqs.send_message(QueueUrl=policy.queue_url(), MessageBody="x" * (LIMIT + 1))
    assert refused.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert "shorter than 1024 bytes" in refused.value.response["Error"]["Message"]
    batch = sqs.send_message_batch(
        QueueUrl=policy.queue_url(),
        Entries=[
            {"Id": "big", "MessageBody": "x" * (LIMIT + 1)},
            {"Id": "fits", "MessageBody": "ok"},
        ],
    )
    assert [f["Id"] for f in batch.get("Failed", [])] == ["big"]
    assert [s["Id"] for s in batch["Successful"]] == ["fits"]
    assert policy.visible_count() == 1


# --------------------------------------------------------------------------- delaySeconds


def test_v1_put_without_an_initial_invisibility_gets_the_queues_delay(policy: Policy) -> None:
    with policy.v1() as v1:
        assert v1.post("/messages", content="later").status_code == 201
        assert v1.get("/messages/next").status_code == 204  # not visible before the delay
        policy.clock.advance(DELAY_S - 1)
        assert v1.get("/messages/next").status_code == 204
        policy.clock.advance(1)
        got = v1.get("/messages/next")
    assert got.status_code == 200, got.text
    assert got.json()["message"] == "later"


def test_v1_put_with_an_explicit_zero_is_visible_at_once(policy: Policy) -> None:
    with policy.v1() as v1:
        assert v1.post("/messages?initialInvisibilitySeconds=0", content="now").status_code == 201
        got = v1.get("/messages/next")
    assert got.status_code == 200, got.text


def test_v2_send_without_a_delay_gets_the_queues_delay(policy: Policy) -> None:
    with policy.v2() as v2:
        assert v2.post("/messages", json={"messages": [{"body": "later"}]}).status_code == 201
        empty = v2.post("/messages/receive", json={"maxMessages": 10})
        assert empty.status_code == 200 and empty.json()["messages"] == [], empty.text
        policy.clock.advance(DELAY_S)
        got = v2.post("/messages/receive", json={"maxMessages": 10})
    assert [m["body"] for m in got.json()["messages"]] == ["later"]


def test_sqs_send_without_delay_seconds_gets_the_queues_delay(policy: Policy) -> None:
    sqs = policy.sqs()
    sqs.send_message(QueueUrl=policy.queue_url(), MessageBody="later")
    assert sqs.receive_message(QueueUrl=policy.queue_url()).get("Messages", []) == []
    policy.clock.advance(DELAY_S)
    got = sqs.receive_message(QueueUrl=policy.queue_url()).get("Messages", [])
    assert [m["Body"] for m in got] == ["later"]
