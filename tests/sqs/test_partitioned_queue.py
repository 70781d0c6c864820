"""boto3, unchanged, on queues the server partitions by default (issue 35): send, batch
send, receive across partitions, visibility change, batch delete, attributes, on both
stores. The client never learns that the queue has partitions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from botocore.exceptions import ClientError

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.store.base import Store
from tests.api.live import served
from tests.sqs.conftest import TOKEN, SqsServer
from tests.sqs.live_sqs import new_account


@pytest.fixture(scope="module")
def partitioned(sqs_store: Store) -> Iterator[SqsServer]:
    settings = Settings(admin_token=TOKEN, sqs_region="eu-west-1", default_partitions=4)
    app = create_app(settings, sqs_store, background=False)
    with served(app) as port:
        base = f"http://127.0.0.1:{port}"
        name, keys = new_account(base, TOKEN)
        yield SqsServer(base, name, keys)


def _drain(sqs: Any, url: str) -> list[str]:
    bodies: list[str] = []
    while got := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
        bodies += [m["Body"] for m in got]
        entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
        deleted = sqs.delete_message_batch(QueueUrl=url, Entries=entries)
        assert deleted.get("Failed", []) == [] and len(deleted["Successful"]) == len(got)
    return bodies


def test_boto3_on_a_partitioned_queue(partitioned: SqsServer) -> None:
    sqs = partitioned.client()
    url = sqs.create_queue(QueueName="orders")["QueueUrl"]
    shown = httpx.get(
        f"{partitioned.base}/api/v2/accounts/{partitioned.account}/queues/orders",
        headers={"Authorization": f"Key {partitioned.keys['primary']}"},
    )
    assert shown.json()["partitions"] == 4  # the server's default: SQS has no word for it
    sent = [f"single-{i}" for i in range(12)]
    for body in sent:
        sqs.send_message(QueueUrl=url, MessageBody=body)
    for batch in range(3):
        entries = [{"Id": str(i), "MessageBody": f"batch-{batch}-{i}"} for i in range(10)]
        assert len(sqs.send_message_batch(QueueUrl=url, Entries=entries)["Successful"]) == 10
        sent += [e["MessageBody"] for e in entries]
    # A message group keeps to one partition (and its order there, strictFifo by default).
    grouped = [f"group-a-{i}" for i in range(5)]
    for body in grouped:
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="a")
    sent += grouped
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == str(len(sent))

    # A visibility change through a handle of any partition.
    first = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    for m in first:
        sqs.change_message_visibility(
            QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
        )
    received = _drain(sqs, url)
    assert sorted(received) == sorted(sent)  # every message once, none left behind
    assert [b for b in received if b.startswith("group-a-")] == grouped
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "0"
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "0"


def test_the_cassieq_partitions_attribute(partitioned: SqsServer) -> None:
    sqs = partitioned.client()
    url = sqs.create_queue(QueueName="wide", Attributes={"CassieqPartitions": "8"})["QueueUrl"]

    def partitions() -> str:
        got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["CassieqPartitions"])
        return str(got["Attributes"]["CassieqPartitions"])

    assert partitions() == "8"
    # Not among "All": what SQS answers to All stays SQS's.
    every = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert "CassieqPartitions" not in every
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"CassieqPartitions": "12"})
    assert partitions() == "12"
    for bad in ("4", "0", "300", "many"):
        with pytest.raises(ClientError) as refused:
            sqs.set_queue_attributes(QueueUrl=url, Attributes={"CassieqPartitions": bad})
        assert refused.value.response["Error"]["Code"] == "InvalidAttributeValue", bad
    assert partitions() == "12"
