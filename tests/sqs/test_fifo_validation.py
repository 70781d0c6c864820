"""SQS FIFO queues (issue 37 item 1), what the endpoint checks itself: names, the FIFO
attributes on CreateQueue / SetQueueAttributes / GetQueueAttributes, a dead-letter queue's
type, and a send's MessageGroupId, MessageDeduplicationId and DelaySeconds, refused with
SQS's codes and words. Called as the route calls the actions, on both stores."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from cassieq.api.sqs.actions import messages, queues
from cassieq.api.sqs.actions.fifo import ATTRIBUTES as FIFO_ATTRIBUTES
from cassieq.api.sqs.actions.fifo import FIFO_NAME_RULE, STANDARD_NAME_RULE
from cassieq.api.sqs.context import SqsCall
from cassieq.api.sqs.errors import SqsError
from cassieq.auth.receipt_keys import ReceiptSecrets, ReceiptSigner
from cassieq.engine import FakeClock, QueueEngine
from cassieq.store.base import Store

BASE = "http://127.0.0.1:9324"
REGION = "us-east-1"
ACTIONS = {**queues.ACTIONS, **messages.ACTIONS}
FIFO = {"FifoQueue": "true"}


class Sqs:
    def __init__(self, engine: QueueEngine, account: str) -> None:
        self.engine, self.account = engine, account

        async def load() -> ReceiptSecrets:
            return ReceiptSecrets("a-test-receipt-secret")

        self.receipts = ReceiptSigner(load, engine.ctx.clock.now)

    async def __call__(self, action: str, **params: Any) -> dict[str, Any]:
        call = SqsCall(
            engine=self.engine,
            account=self.account,
            key_name="primary",
            action=action,
            params=params,
            base_url=BASE,
            region=REGION,
            protocol="json",
            receipts=self.receipts,
        )
        return await ACTIONS[action](call)

    async def fails(self, code: str, action: str, **params: Any) -> SqsError:
        with pytest.raises(SqsError) as caught:
            await self(action, **params)
        assert caught.value.code == code, caught.value.message
        return caught.value

    def url(self, name: str) -> str:
        return f"{BASE}/{self.account}/{name}"

    def arn(self, name: str) -> str:
        return f"arn:aws:sqs:{REGION}:{self.account}:{name}"

    async def attributes(self, name: str, *names: str) -> dict[str, str]:
        got = await self("GetQueueAttributes", QueueUrl=self.url(name), AttributeNames=list(names))
        return dict(got.get("Attributes", {}))


@pytest.fixture
async def sqs(store: Store) -> Sqs:
    engine = QueueEngine(store, FakeClock())
    account = f"f-{uuid.uuid4().hex[:12]}"  # a fresh account keeps tests apart on Cassandra
    await engine.accounts.create(account)
    return Sqs(engine, account)


async def test_fifo_names_go_with_fifo_queue_true(sqs: Sqs) -> None:
    # A .fifo name alone is a name with a '.'; FifoQueue=true alone a name without .fifo.
    plain = await sqs.fails("InvalidParameterValue", "CreateQueue", QueueName="orders.fifo")
    assert plain.message == STANDARD_NAME_RULE
    for name in ("orders", "a.b.fifo", ".fifo", "x" * 76 + ".fifo", "orders.FIFO"):
        refused = await sqs.fails(
            "InvalidParameterValue", "CreateQueue", QueueName=name, Attributes=FIFO
        )
        assert refused.message == FIFO_NAME_RULE
    await sqs.fails(
        "InvalidAttributeValue", "CreateQueue", QueueName="o.fifo", Attributes={"FifoQueue": "1"}
    )
    longest = "x" * 75 + ".fifo"  # the suffix counts in the 80 characters
    assert await sqs("CreateQueue", QueueName=longest, Attributes=FIFO) == {
        "QueueUrl": sqs.url(longest)
    }
    assert (await sqs.engine.queue(sqs.account, longest)).options.fifo
    # FifoQueue=false still makes a standard queue (what templates send).
    await sqs("CreateQueue", QueueName="plain", Attributes={"FifoQueue": "false"})
    assert not (await sqs.engine.queue(sqs.account, "plain")).options.fifo


async def test_a_fifo_queue_shows_its_attributes_and_a_standard_queue_none(sqs: Sqs) -> None:
    await sqs("CreateQueue", QueueName="orders.fifo", Attributes=FIFO)
    shown = await sqs.attributes("orders.fifo", "All")
    assert {k: shown[k] for k in FIFO_ATTRIBUTES} == {
        "FifoQueue": "true",
        "ContentBasedDeduplication": "false",
        "DeduplicationScope": "queue",
        "FifoThroughputLimit": "perQueue",
    }
    assert await sqs.attributes("orders.fifo", "FifoQueue") == {"FifoQueue": "true"}

    await sqs("CreateQueue", QueueName="plain")
    shown = await sqs.attributes("plain", "All")
    assert not set(FIFO_ATTRIBUTES) & set(shown)
    assert await sqs.attributes("plain", "FifoQueue", "ContentBasedDeduplication") == {}


async def test_create_of_an_existing_fifo_queue_compares_its_fifo_attributes(sqs: Sqs) -> None:
    given = {**FIFO, "ContentBasedDeduplication": "true"}
    made = await sqs("CreateQueue", QueueName="o.fifo", Attributes=given)
    assert await sqs("CreateQueue", QueueName="o.fifo", Attributes=given) == made
    assert await sqs("CreateQueue", QueueName="o.fifo", Attributes=FIFO) == made
    exists = await sqs.fails(
        "QueueNameExists",
        "CreateQueue",
        QueueName="o.fifo",
        Attributes={**FIFO, "ContentBasedDeduplication": "false", "DeduplicationScope": "queue"},
    )
    assert exists.message.endswith("attribute(s) ContentBasedDeduplication.")


async def test_fifo_only_attributes_are_refused_on_a_standard_queue(sqs: Sqs) -> None:
    await sqs("CreateQueue", QueueName="plain")
    for action, params in (
        ("CreateQueue", {"QueueName": "other"}),
        ("SetQueueAttributes", {"QueueUrl": sqs.url("plain")}),
    ):
        unknown = await sqs.fails(
            "InvalidAttributeName",
            action,
            Attributes={"ContentBasedDeduplication": "true"},
            **params,
        )
        assert unknown.message == "Unknown Attribute ContentBasedDeduplication."
        for name, value in (("DeduplicationScope", "queue"), ("FifoThroughputLimit", "perQueue")):
            only = await sqs.fails(
                "InvalidAttributeName", action, Attributes={name: value}, **params
            )
            assert only.message == f"You can specify the {name} only when FifoQueue is set to true."
    assert await sqs.engine.find_queue(sqs.account, "other") is None


async def test_set_queue_attributes_of_a_fifo_queue(sqs: Sqs) -> None:
    await sqs("CreateQueue", QueueName="o.fifo", Attributes=FIFO)
    url = sqs.url("o.fifo")
    await sqs(
        "SetQueueAttributes",
        QueueUrl=url,
        Attributes={
            "ContentBasedDeduplication": "true",
            "DeduplicationScope": "messageGroup",
            "FifoThroughputLimit": "perMessageGroupId",
        },
    )
    names = ("ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit")
    assert await sqs.attributes("o.fifo", *names) == {
        "ContentBasedDeduplication": "true",
        "DeduplicationScope": "messageGroup",
        "FifoThroughputLimit": "perMessageGroupId",
    }
    # perMessageGroupId needs deduplication per message group: checked on the queue's
    # options as they are, not only on those given.
    pair = await sqs.fails(
        "InvalidAttributeValue",
        "SetQueueAttributes",
        QueueUrl=url,
        Attributes={"DeduplicationScope": "queue"},
    )
    assert "the DeduplicationScope must be messageGroup" in pair.message
    for name, value in (
        ("DeduplicationScope", "group"),
        ("FifoThroughputLimit", "perGroup"),
        ("ContentBasedDeduplication", "yes"),
    ):
        await sqs.fails(
            "InvalidAttributeValue", "SetQueueAttributes", QueueUrl=url, Attributes={name: value}
        )
    # A queue's type never changes: FifoQueue is no attribute SetQueueAttributes knows.
    for value in ("true", "false"):
        await sqs.fails(
            "InvalidAttributeName",
            "SetQueueAttributes",
            QueueUrl=url,
            Attributes={"FifoQueue": value},
        )
    # Nor its partitions (its groups are ordered in the partition their ids hash to).
    await sqs.fails(
        "InvalidAttributeValue",
        "SetQueueAttributes",
        QueueUrl=url,
        Attributes={"CassieqPartitions": "2"},
    )
    assert await sqs.attributes("o.fifo", "CassieqPartitions") == {"CassieqPartitions": "1"}
    assert await sqs.attributes("o.fifo", *names, "FifoQueue") == {
        "FifoQueue": "true",
        "ContentBasedDeduplication": "true",
        "DeduplicationScope": "messageGroup",
        "FifoThroughputLimit": "perMessageGroupId",
    }
    await sqs.fails(
        "InvalidAttributeValue",
        "CreateQueue",
        QueueName="p.fifo",
        Attributes={**FIFO, "FifoThroughputLimit": "perMessageGroupId"},
    )
    assert await sqs.engine.find_queue(sqs.account, "p.fifo") is None


async def test_a_dead_letter_queue_is_of_its_source_queues_type(sqs: Sqs) -> None:
    await sqs("CreateQueue", QueueName="dead")
    await sqs("CreateQueue", QueueName="dead.fifo", Attributes=FIFO)

    def policy(target: str) -> str:
        return json.dumps({"deadLetterTargetArn": sqs.arn(target), "maxReceiveCount": 3})

    for source, target, attributes in (
        ("o.fifo", "dead", FIFO),
        ("plain", "dead.fifo", {}),
    ):
        refused = await sqs.fails(
            "InvalidParameterValue",
            "CreateQueue",
            QueueName=source,
            Attributes={**attributes, "RedrivePolicy": policy(target)},
        )
        assert refused.message.endswith(
            "Dead-letter queue must be same type of queue as the source."
        )
        await sqs("CreateQueue", QueueName=source, Attributes=attributes)
        await sqs.fails(
            "InvalidParameterValue",
            "SetQueueAttributes",
            QueueUrl=sqs.url(source),
            Attributes={"RedrivePolicy": policy(target)},
        )
    await sqs(
        "SetQueueAttributes",
        QueueUrl=sqs.url("o.fifo"),
        Attributes={"RedrivePolicy": policy("dead.fifo")},
    )
    shown = json.loads((await sqs.attributes("o.fifo", "RedrivePolicy"))["RedrivePolicy"])
    assert shown["deadLetterTargetArn"] == sqs.arn("dead.fifo")


async def test_sends_to_a_fifo_queue_are_checked_as_sqs_checks_them(sqs: Sqs) -> None:
    await sqs("CreateQueue", QueueName="o.fifo", Attributes=FIFO)
    url = sqs.url("o.fifo")
    missing = await sqs.fails("MissingParameter", "SendMessage", QueueUrl=url, MessageBody="b")
    assert missing.message == "The request must contain the parameter MessageGroupId."
    no_dedup = await sqs.fails(
        "InvalidParameterValue", "SendMessage", QueueUrl=url, MessageBody="b", MessageGroupId="g"
    )
    assert no_dedup.message == (
        "The queue should either have ContentBasedDeduplication enabled or "
        "MessageDeduplicationId provided explicitly"
    )
    # A per-message delay, even 0, is refused (the queue's DelaySeconds applies).
    delay = await sqs.fails(
        "InvalidParameterValue",
        "SendMessage",
        QueueUrl=url,
        MessageBody="b",
        MessageGroupId="g",
        MessageDeduplicationId="d",
        DelaySeconds=0,
    )
    assert delay.message == (
        "Value 0 for parameter DelaySeconds is invalid. Reason: The request include parameter "
        "that is not valid for this queue type."
    )
    for name, value in (
        ("MessageGroupId", "has space"),
        ("MessageGroupId", "g" * 129),
        ("MessageGroupId", "é"),
        ("MessageDeduplicationId", "d" * 129),
    ):
        bad = await sqs.fails(
            "InvalidParameterValue",
            "SendMessage",
            QueueUrl=url,
            MessageBody="b",
            **{"MessageGroupId": "g", "MessageDeduplicationId": "d", name: value},
        )
        assert bad.message.endswith(
            f"Reason: {name} can only include alphanumeric and punctuation characters. "
            "1 to 128 in length."
        )
    # In a batch, each entry alone.
    batch = await sqs(
        "SendMessageBatch",
        QueueUrl=url,
        Entries=[
            {"Id": "nogroup", "MessageBody": "b", "MessageDeduplicationId": "d1"},
            {"Id": "nodedup", "MessageBody": "b", "MessageGroupId": "g"},
            {"Id": "delayed", "MessageBody": "b", "MessageGroupId": "g", "DelaySeconds": 5,
             "MessageDeduplicationId": "d2"},
        ],
    )  # fmt: skip
    assert batch["Successful"] == []
    assert [(f["Id"], f["Code"], f["SenderFault"]) for f in batch["Failed"]] == [
        ("nogroup", "MissingParameter", True),
        ("nodedup", "InvalidParameterValue", True),
        ("delayed", "InvalidParameterValue", True),
    ]
    bad_attempt = await sqs.fails(
        "InvalidParameterValue", "ReceiveMessage", QueueUrl=url, ReceiveRequestAttemptId="a b"
    )
    assert "ReceiveRequestAttemptId" in bad_attempt.message
    assert await sqs.engine.statistics(sqs.account, "o.fifo") is not None
    assert (await sqs.attributes("o.fifo", "ApproximateNumberOfMessages")) == {
        "ApproximateNumberOfMessages": "0"
    }


async def test_a_standard_queue_refuses_a_deduplication_id(sqs: Sqs) -> None:
    await sqs("CreateQueue", QueueName="plain")
    url = sqs.url("plain")
    refused = await sqs.fails(
        "InvalidParameterValue",
        "SendMessage",
        QueueUrl=url,
        MessageBody="b",
        MessageDeduplicationId="d",
    )
    assert refused.message == (
        "Value d for parameter MessageDeduplicationId is invalid. Reason: The request include "
        "parameter that is not valid for this queue type."
    )
    # DelaySeconds and a group are a standard queue's; ReceiveRequestAttemptId is ignored.
    await sqs("SendMessage", QueueUrl=url, MessageBody="b", MessageGroupId="g", DelaySeconds=0)
    got = await sqs("ReceiveMessage", QueueUrl=url, ReceiveRequestAttemptId="not checked here")
    assert [m["Body"] for m in got["Messages"]] == ["b"]
