"""SQS queue actions, called as the route calls them (an SqsCall), on both stores."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import boto3
import httpx
import pytest
from awscli.clidriver import create_clidriver
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from cassieq.api.app import create_app
from cassieq.api.sqs.actions.queues import ACTIONS
from cassieq.api.sqs.context import SqsCall
from cassieq.api.sqs.errors import SqsError
from cassieq.api.sqs.model import XML_NAMESPACE
from cassieq.config import Settings
from cassieq.engine import FakeClock, QueueEngine
from cassieq.model import OutgoingMessage, QueueOptions
from cassieq.store.base import Store
from tests.api.live import served
from tests.engine.conftest import hold_redrives
from tests.sqs.live_sqs import new_account

BASE = "http://127.0.0.1:9324"
REGION = "us-east-1"  # the server's CASSIEQ_SQS_REGION (its default)


@pytest.fixture
def engine(store: Store) -> QueueEngine:
    return QueueEngine(store, FakeClock())


@pytest.fixture
async def account(engine: QueueEngine) -> str:
    name = f"s-{uuid.uuid4().hex[:12]}"  # a fresh account keeps tests apart on Cassandra
    await engine.accounts.create(name)
    return name


class Sqs:
    """Calls the actions as the route does, as one account."""

    def __init__(self, engine: QueueEngine, account: str) -> None:
        self.engine, self.account = engine, account

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
def sqs(engine: QueueEngine, account: str) -> Sqs:
    return Sqs(engine, account)


def clock(engine: QueueEngine) -> FakeClock:
    assert isinstance(engine.ctx.clock, FakeClock)
    return engine.ctx.clock


async def test_create_takes_sqs_defaults_and_is_idempotent_with_the_same_attributes(
    sqs: Sqs, engine: QueueEngine
) -> None:
    made = await sqs("CreateQueue", QueueName="jobs", Attributes={"VisibilityTimeout": "45"})
    assert made == {"QueueUrl": sqs.url("jobs")}
    attrs = await sqs.attributes("jobs", "All")
    assert attrs["VisibilityTimeout"] == "45"
    assert attrs["MessageRetentionPeriod"] == "345600"  # SQS's 4 days, not CassieQ's 14
    assert attrs["DelaySeconds"] == "0"
    assert attrs["MaximumMessageSize"] == "1048576"  # SQS's current default, 1 MiB
    assert attrs["SqsManagedSseEnabled"] == "false"
    assert "Policy" not in attrs and "KmsMasterKeyId" not in attrs
    assert attrs["ReceiveMessageWaitTimeSeconds"] == "0"
    assert attrs["QueueArn"] == sqs.arn("jobs")
    assert "RedrivePolicy" not in attrs
    assert attrs["ApproximateNumberOfMessages"] == "0"
    assert int(attrs["CreatedTimestamp"]) == clock(engine).now() // 1000
    # No RedrivePolicy: SQS redelivers without limit; CassieQ's 5 would drop the message.
    definition = await engine.queues.get(sqs.account, "jobs")
    assert definition.options.max_delivery_count == 1_000_000

    again = await sqs("CreateQueue", QueueName="jobs", Attributes={"VisibilityTimeout": "45"})
    assert again == made
    assert await sqs("CreateQueue", QueueName="jobs") == made  # nothing given: nothing differs
    exists = await sqs.fails(
        "QueueNameExists",
        "CreateQueue",
        QueueName="jobs",
        Attributes={"VisibilityTimeout": "5", "DelaySeconds": "0", "MaximumMessageSize": "2048"},
    )
    # The attributes that differ are named, not the queue (#39 item 2).
    assert exists.message.endswith("attribute(s) VisibilityTimeout, MaximumMessageSize.")


async def test_bad_names_and_attributes_are_refused_as_sqs_does(sqs: Sqs) -> None:
    await sqs.fails("MissingParameter", "CreateQueue")
    await sqs.fails("InvalidParameterValue", "CreateQueue", QueueName="a.b")
    await sqs.fails("InvalidParameterValue", "CreateQueue", QueueName="x" * 81)
    # A .fifo name without FifoQueue=true: a name with a '.', as SQS answers (test_fifo*.py).
    await sqs.fails("InvalidParameterValue", "CreateQueue", QueueName="orders.fifo")
    await sqs.fails("InvalidAttributeName", "CreateQueue", QueueName="q", Attributes={"Color": "1"})
    for name, value in [
        ("VisibilityTimeout", "43201"),
        ("VisibilityTimeout", "-1"),
        ("DelaySeconds", "901"),
        ("MessageRetentionPeriod", "59"),
        ("MaximumMessageSize", "1023"),
        ("ReceiveMessageWaitTimeSeconds", "21"),
        ("RedrivePolicy", "not json"),
        ("RedrivePolicy", '{"maxReceiveCount": 3}'),
        ("RedriveAllowPolicy", '{"redrivePermission": "some"}'),
    ]:
        await sqs.fails(
            "InvalidAttributeValue", "CreateQueue", QueueName="q", Attributes={name: value}
        )
    await sqs.fails(  # a FIFO queue's name ends in .fifo
        "InvalidParameterValue", "CreateQueue", QueueName="q", Attributes={"FifoQueue": "true"}
    )
    made = await sqs("CreateQueue", QueueName="q", Attributes={"FifoQueue": "false"})
    assert made["QueueUrl"] == sqs.url("q")
    await sqs.fails(
        "InvalidAttributeName", "GetQueueAttributes", QueueUrl=sqs.url("q"), AttributeNames=["Nope"]
    )


async def test_urls_of_another_account_or_unknown_queues_are_refused(
    sqs: Sqs, engine: QueueEngine
) -> None:
    other = f"o-{uuid.uuid4().hex[:12]}"
    await engine.accounts.create(other)
    await engine.create_queue(other, "theirs", QueueOptions())
    theirs = f"{BASE}/{other}/theirs"
    for action in ("GetQueueAttributes", "DeleteQueue", "PurgeQueue", "TagQueue", "ListQueueTags"):
        await sqs.fails("AccessDenied", action, QueueUrl=theirs, Tags={"a": "b"})
    await sqs.fails("AccessDenied", "GetQueueUrl", QueueName="theirs", QueueOwnerAWSAccountId=other)
    await sqs.fails("QueueDoesNotExist", "GetQueueUrl", QueueName="theirs")
    await sqs.fails("QueueDoesNotExist", "GetQueueAttributes", QueueUrl=sqs.url("missing"))
    # A URL that is no queue's, as SQS answers it (#39 item 15).
    for malformed in (f"{BASE}/only-one-part", f"{BASE}/a/b/c", "not a url", f"{BASE}/a/b%00"):
        await sqs.fails("QueueDoesNotExist", "GetQueueAttributes", QueueUrl=malformed)
    policy = json.dumps(
        {"deadLetterTargetArn": f"arn:aws:sqs:{REGION}:{other}:theirs", "maxReceiveCount": 2}
    )
    await sqs.fails(
        "AccessDenied", "CreateQueue", QueueName="q", Attributes={"RedrivePolicy": policy}
    )
    assert (await engine.queues.get(other, "theirs")).status == "active"  # untouched


async def test_list_queues_by_prefix_in_pages(sqs: Sqs) -> None:
    for name in ("a1", "a2", "a3", "b1"):
        await sqs("CreateQueue", QueueName=name)
    every = await sqs("ListQueues")
    assert every == {"QueueUrls": [sqs.url(n) for n in ("a1", "a2", "a3", "b1")]}
    first = await sqs("ListQueues", QueueNamePrefix="a", MaxResults=2)
    assert first["QueueUrls"] == [sqs.url("a1"), sqs.url("a2")]
    rest = await sqs("ListQueues", QueueNamePrefix="a", MaxResults=2, NextToken=first["NextToken"])
    assert rest == {"QueueUrls": [sqs.url("a3")]}
    assert await sqs("ListQueues", QueueNamePrefix="z") == {}
    await sqs.fails("InvalidParameterValue", "ListQueues", MaxResults=1001)
    await sqs.fails("InvalidParameterValue", "ListQueues", MaxResults=1, NextToken="%%%")


async def test_set_attributes_redrive_policy_and_dead_letter_sources(
    sqs: Sqs, engine: QueueEngine
) -> None:
    await sqs("CreateQueue", QueueName="dlq")
    policy = json.dumps({"deadLetterTargetArn": sqs.arn("dlq"), "maxReceiveCount": "3"})
    await sqs("CreateQueue", QueueName="work", Attributes={"RedrivePolicy": policy})
    await sqs("CreateQueue", QueueName="other")
    shown = json.loads((await sqs.attributes("work", "RedrivePolicy"))["RedrivePolicy"])
    assert shown == {"deadLetterTargetArn": sqs.arn("dlq"), "maxReceiveCount": 3}
    definition = await engine.queues.get(sqs.account, "work")
    assert (definition.options.dlq_name, definition.options.max_delivery_count) == ("dlq", 3)
    sources = await sqs("ListDeadLetterSourceQueues", QueueUrl=sqs.url("dlq"))
    assert sources == {"queueUrls": [sqs.url("work")]}

    created = int((await sqs.attributes("other", "LastModifiedTimestamp"))["LastModifiedTimestamp"])
    clock(engine).advance(5)
    allow = json.dumps({"redrivePermission": "byQueue", "sourceQueueArns": [sqs.arn("work")]})
    await sqs(
        "SetQueueAttributes",
        QueueUrl=sqs.url("other"),
        Attributes={
            "DelaySeconds": "7",
            "ReceiveMessageWaitTimeSeconds": "20",
            "RedriveAllowPolicy": allow,
            "RedrivePolicy": policy,
        },
    )
    attrs = await sqs.attributes("other", "All")
    assert attrs["DelaySeconds"] == "7"
    assert attrs["ReceiveMessageWaitTimeSeconds"] == "20"
    assert attrs["RedriveAllowPolicy"] == allow
    assert int(attrs["LastModifiedTimestamp"]) == created + 5
    sources = await sqs("ListDeadLetterSourceQueues", QueueUrl=sqs.url("dlq"), MaxResults=1)
    assert sources["queueUrls"] == [sqs.url("other")] and "NextToken" in sources

    # An empty RedrivePolicy removes it (and the delivery limit with it).
    await sqs("SetQueueAttributes", QueueUrl=sqs.url("work"), Attributes={"RedrivePolicy": ""})
    assert "RedrivePolicy" not in await sqs.attributes("work", "All")
    missing = json.dumps({"deadLetterTargetArn": sqs.arn("nope"), "maxReceiveCount": 3})
    await sqs.fails(
        "QueueDoesNotExist", "SetQueueAttributes", QueueUrl=sqs.url("work"),
        Attributes={"RedrivePolicy": missing},
    )  # fmt: skip
    await sqs.fails(
        "InvalidAttributeValue", "SetQueueAttributes", QueueUrl=sqs.url("work"),
        Attributes={"VisibilityTimeout": "x"},
    )  # fmt: skip


async def test_counts_purge_and_delete(sqs: Sqs, engine: QueueEngine) -> None:
    await sqs("CreateQueue", QueueName="q")
    await engine.send(
        sqs.account,
        "q",
        [OutgoingMessage(body=b) for b in "abc"] + [OutgoingMessage(body="d", delay_ms=60_000)],
    )
    assert len(await engine.receive(sqs.account, "q", 1, 30)) == 1
    counts = await sqs.attributes(
        "q", "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    )  # fmt: skip
    assert counts == {
        "ApproximateNumberOfMessages": "2",
        "ApproximateNumberOfMessagesNotVisible": "1",
        "ApproximateNumberOfMessagesDelayed": "1",
    }
    assert await sqs("PurgeQueue", QueueUrl=sqs.url("q")) == {}
    assert (await sqs.attributes("q", "ApproximateNumberOfMessages"))[
        "ApproximateNumberOfMessages"
    ] == "0"
    assert await sqs("DeleteQueue", QueueUrl=sqs.url("q")) == {}
    await sqs.fails("QueueDoesNotExist", "GetQueueUrl", QueueName="q")
    await sqs.fails("QueueDoesNotExist", "DeleteQueue", QueueUrl=sqs.url("q"))


async def test_tags(sqs: Sqs, engine: QueueEngine) -> None:
    await sqs("CreateQueue", QueueName="q", tags={"team": "a", "env": "dev"})
    assert await sqs("ListQueueTags", QueueUrl=sqs.url("q")) == {
        "Tags": {"team": "a", "env": "dev"}
    }
    await sqs("TagQueue", QueueUrl=sqs.url("q"), Tags={"env": "prod", "cost": "7"})
    await sqs("UntagQueue", QueueUrl=sqs.url("q"), TagKeys=["team", "absent"])
    assert await sqs("ListQueueTags", QueueUrl=sqs.url("q")) == {
        "Tags": {"env": "prod", "cost": "7"}
    }
    # Another server sees them (they are on the queue row, not in this server's memory).
    other = QueueEngine(engine.ctx.store, engine.ctx.clock, instance_id="other")
    assert (await other.queues.get(sqs.account, "q")).tags == {"env": "prod", "cost": "7"}
    await sqs("UntagQueue", QueueUrl=sqs.url("q"), TagKeys=["env", "cost"])
    assert await sqs("ListQueueTags", QueueUrl=sqs.url("q")) == {}
    assert (await other.queues.get(sqs.account, "q", fresh=True)).tags == {}
    await sqs.fails("InvalidParameterValue", "TagQueue", QueueUrl=sqs.url("q"), Tags={"": "x"})
    too_many = {f"k{i}": "v" for i in range(51)}
    await sqs.fails("InvalidParameterValue", "TagQueue", QueueUrl=sqs.url("q"), Tags=too_many)
    await sqs.fails("MissingParameter", "UntagQueue", QueueUrl=sqs.url("q"))
    # Empty, as SQS: the query protocol's form of an empty map or list is no parameter.
    await sqs.fails("MissingParameter", "TagQueue", QueueUrl=sqs.url("q"), Tags={})
    await sqs.fails("MissingParameter", "UntagQueue", QueueUrl=sqs.url("q"), TagKeys=[])


async def _dead_letter(sqs: Sqs, engine: QueueEngine, count: int) -> None:
    """A queue "src" whose ``count`` messages went to "dlq" after one receive each."""
    await sqs("CreateQueue", QueueName="dlq")
    policy = json.dumps({"deadLetterTargetArn": sqs.arn("dlq"), "maxReceiveCount": 1})
    await sqs("CreateQueue", QueueName="src", Attributes={"RedrivePolicy": policy})
    await engine.send(sqs.account, "src", [OutgoingMessage(body=str(i)) for i in range(count)])
    assert len(await engine.receive(sqs.account, "src", count, 1)) == count
    clock(engine).advance(2)
    assert await engine.receive(sqs.account, "src", count, 1) == []  # past maxReceiveCount
    stats = await engine.statistics(sqs.account, "dlq")
    assert stats.visible == count


async def test_message_move_task_moves_dead_letters_back(sqs: Sqs, engine: QueueEngine) -> None:
    await _dead_letter(sqs, engine, 3)
    started = await sqs("StartMessageMoveTask", SourceArn=sqs.arn("dlq"))
    assert set(started) == {"TaskHandle"}
    await engine.redriver.join()
    listed = await sqs("ListMessageMoveTasks", SourceArn=sqs.arn("dlq"), MaxResults=10)
    (task,) = listed["Results"]
    assert task["Status"] == "COMPLETED"
    assert task["ApproximateNumberOfMessagesMoved"] == 3
    assert task["ApproximateNumberOfMessagesToMove"] == 3
    assert task["SourceArn"] == sqs.arn("dlq")
    assert task["StartedTimestamp"] == clock(engine).now()
    assert "TaskHandle" not in task  # SQS shows the handle of a running task only
    assert (await engine.statistics(sqs.account, "src")).visible == 3
    await sqs.fails(
        "UnsupportedOperation", "CancelMessageMoveTask", TaskHandle=started["TaskHandle"]
    )
    await sqs.fails("QueueDoesNotExist", "StartMessageMoveTask", SourceArn=sqs.arn("nope"))
    await sqs.fails(
        "InvalidParameterValue", "StartMessageMoveTask", SourceArn=sqs.arn("dlq"),
        MaxNumberOfMessagesPerSecond=501,
    )  # fmt: skip
    await sqs.fails("ResourceNotFoundException", "CancelMessageMoveTask", TaskHandle="b3RoZXI6cTp4")
    await sqs.fails("InvalidParameterValue", "CancelMessageMoveTask", TaskHandle="%%")


async def test_message_move_task_can_be_cancelled(sqs: Sqs, engine: QueueEngine) -> None:
    await _dead_letter(sqs, engine, 3)
    gate = asyncio.Event()
    waiting = hold_redrives(engine, gate)  # after the first move, until the gate opens
    started = await sqs(
        "StartMessageMoveTask", SourceArn=sqs.arn("dlq"), DestinationArn=sqs.arn("src"),
        MaxNumberOfMessagesPerSecond=1,
    )  # fmt: skip
    await waiting.wait()  # one message moved, the task waits for its next turn
    (running,) = (await sqs("ListMessageMoveTasks", SourceArn=sqs.arn("dlq")))["Results"]
    assert running["Status"] == "RUNNING" and running["TaskHandle"] == started["TaskHandle"]
    assert running["DestinationArn"] == sqs.arn("src")
    assert running["MaxNumberOfMessagesPerSecond"] == 1
    cancelled = await sqs("CancelMessageMoveTask", TaskHandle=started["TaskHandle"])
    assert cancelled == {"ApproximateNumberOfMessagesMoved": 1}
    (cancelling,) = (await sqs("ListMessageMoveTasks", SourceArn=sqs.arn("dlq")))["Results"]
    assert cancelling["Status"] == "CANCELLING"
    gate.set()
    await engine.redriver.join()
    (done,) = (await sqs("ListMessageMoveTasks", SourceArn=sqs.arn("dlq")))["Results"]
    assert done["Status"] == "CANCELLED"
    assert done["ApproximateNumberOfMessagesMoved"] == 1
    assert (await engine.statistics(sqs.account, "dlq")).visible == 2  # the rest stayed


async def test_a_message_move_task_whose_server_stopped_is_failed_with_the_reason(
    sqs: Sqs, engine: QueueEngine
) -> None:
    await _dead_letter(sqs, engine, 3)
    waiting = hold_redrives(engine)  # after the first move, until the server shuts down
    await sqs(
        "StartMessageMoveTask", SourceArn=sqs.arn("dlq"), DestinationArn=sqs.arn("src"),
        MaxNumberOfMessagesPerSecond=1,
    )  # fmt: skip
    await waiting.wait()
    await engine.redriver.close()  # the server's shutdown
    (task,) = (await sqs("ListMessageMoveTasks", SourceArn=sqs.arn("dlq")))["Results"]
    assert task["Status"] == "FAILED"
    assert task["FailureReason"].startswith("The server running the task stopped")
    assert task["ApproximateNumberOfMessagesMoved"] == 1
    assert "TaskHandle" not in task
    assert (await engine.statistics(sqs.account, "dlq")).visible == 2  # the rest stayed


async def test_queues_are_shared_with_v1_and_v2(sqs: Sqs, engine: QueueEngine) -> None:
    # Made by v2 (a dotted name SQS could not create): listed and reached through SQS.
    await engine.create_queue(sqs.account, "orders.v1", QueueOptions(visibility_timeout_seconds=9))
    assert sqs.url("orders.v1") in (await sqs("ListQueues"))["QueueUrls"]
    assert (await sqs.attributes("orders.v1", "VisibilityTimeout")) == {"VisibilityTimeout": "9"}
    # Made by SQS: the engine (v1 and v2 routes) sees the same queue.
    await sqs("CreateQueue", QueueName="made-by-sqs", Attributes={"DelaySeconds": "3"})
    assert (await engine.queues.get(sqs.account, "made-by-sqs")).options.delay_seconds == 3


# --------------------------------------------------------------------------- through boto3

TOKEN = "sqs-queue-actions-operator-token"
SAFETY_S = 30.0  # bounds a wait that would otherwise hang; nothing waits for it to pass


@dataclass
class Live:
    url: str
    account: str
    key: str

    def client(self, account: str | None = None, key: str | None = None) -> Any:
        return boto3.client(
            "sqs",
            endpoint_url=self.url,
            region_name=REGION,
            aws_access_key_id=account or self.account,
            aws_secret_access_key=key or self.key,
            config=Config(retries={"max_attempts": 1}),
        )

    def http(self, api: str) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.url}/api/{api}/accounts/{self.account}",
            headers={"Authorization": f"Key {self.key}"},
            timeout=30,
        )


def _new_account(url: str) -> tuple[str, str]:
    name, keys = new_account(url, TOKEN)
    return name, keys["primary"]


@pytest.fixture
def live(store: Store) -> Iterator[Live]:
    app = create_app(Settings(admin_token=TOKEN), store, background=False)
    with served(app) as port:
        url = f"http://127.0.0.1:{port}"
        yield Live(url, *_new_account(url))


def _code(caught: pytest.ExceptionInfo[ClientError]) -> str:
    return str(caught.value.response["Error"]["Code"])


def test_boto3_queue_lifecycle_attributes_and_tags(live: Live) -> None:
    sqs = live.client()
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    assert dlq == f"{live.url}/{live.account}/dlq"
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    assert dlq_arn == f"arn:aws:sqs:{REGION}:{live.account}:dlq"
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 4})
    attrs = {"VisibilityTimeout": "40", "RedrivePolicy": policy, "DelaySeconds": "2"}
    url = sqs.create_queue(QueueName="work", Attributes=attrs, tags={"team": "a"})["QueueUrl"]
    assert sqs.create_queue(QueueName="work", Attributes=attrs)["QueueUrl"] == url
    with pytest.raises(ClientError) as exists:
        sqs.create_queue(QueueName="work", Attributes={"VisibilityTimeout": "41"})
    assert _code(exists) == "QueueAlreadyExists"  # the legacy code boto3 shows for QueueNameExists
    assert sqs.get_queue_url(QueueName="work")["QueueUrl"] == url

    shown = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert shown["VisibilityTimeout"] == "40" and shown["DelaySeconds"] == "2"
    assert shown["MessageRetentionPeriod"] == "345600"
    assert json.loads(shown["RedrivePolicy"]) == {
        "deadLetterTargetArn": dlq_arn,
        "maxReceiveCount": 4,
    }
    assert shown["ApproximateNumberOfMessages"] == "0"
    for name in ("CreatedTimestamp", "LastModifiedTimestamp", "ReceiveMessageWaitTimeSeconds"):
        assert shown[name].isdigit()
    sqs.set_queue_attributes(
        QueueUrl=url,
        Attributes={"ReceiveMessageWaitTimeSeconds": "3", "MaximumMessageSize": "2048"},
    )
    changed = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ReceiveMessageWaitTimeSeconds", "MaximumMessageSize"]
    )["Attributes"]
    assert changed == {"ReceiveMessageWaitTimeSeconds": "3", "MaximumMessageSize": "2048"}
    # A queue with no Policy shows none (#39 item 13: Policy is an attribute now).
    assert "Attributes" not in sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])
    with pytest.raises(ClientError) as bad:
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Colour"])
    assert _code(bad) == "InvalidAttributeName"
    with pytest.raises(ClientError) as bad:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "901"})
    assert _code(bad) == "InvalidAttributeValue"

    assert sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"] == [url]
    sqs.tag_queue(QueueUrl=url, Tags={"env": "prod"})
    sqs.untag_queue(QueueUrl=url, TagKeys=["team"])
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"env": "prod"}

    # Messages through v2 (the message actions are another module's): SQS counts them.
    with live.http("v2") as v2:
        sent = v2.post(
            "/queues/work/messages",
            json={"messages": [{"body": "one", "delaySeconds": 0}, {"body": "later"}]},
        )
        assert sent.status_code == 201, sent.text
    counts = sqs.get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed"],
    )["Attributes"]
    assert counts == {"ApproximateNumberOfMessages": "1", "ApproximateNumberOfMessagesDelayed": "1"}
    sqs.purge_queue(QueueUrl=url)
    after = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    assert after["Attributes"] == {"ApproximateNumberOfMessages": "0"}

    names = [f"p{i}" for i in range(3)]
    for name in names:
        sqs.create_queue(QueueName=name)
    first = sqs.list_queues(QueueNamePrefix="p", MaxResults=2)
    rest = sqs.list_queues(QueueNamePrefix="p", MaxResults=2, NextToken=first["NextToken"])
    assert first["QueueUrls"] + rest["QueueUrls"] == [
        f"{live.url}/{live.account}/{n}" for n in names
    ]
    assert "NextToken" not in rest
    paginated = sqs.get_paginator("list_queues").paginate(PaginationConfig={"PageSize": 1})
    assert len([u for page in paginated for u in page.get("QueueUrls", [])]) == 5

    sqs.delete_queue(QueueUrl=url)
    with pytest.raises(ClientError) as gone:
        sqs.get_queue_url(QueueName="work")
    assert _code(gone) == "AWS.SimpleQueueService.NonExistentQueue"
    assert gone.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_boto3_unsupported_and_refused(live: Live) -> None:
    sqs = live.client()
    url = sqs.create_queue(QueueName="q")["QueueUrl"]
    refused: tuple[Callable[[], object], ...] = (
        lambda: sqs.create_queue(QueueName="q.fifo"),  # a FIFO name without FifoQueue=true
        lambda: sqs.create_queue(QueueName="q", Attributes={"FifoQueue": "true"}),
    )
    for call in refused:
        with pytest.raises(ClientError) as caught:
            call()
        assert _code(caught) == "InvalidParameterValue"
    with pytest.raises(ClientError) as caught:
        sqs.create_queue(QueueName="q", Attributes={"Colour": "blue"})
    assert _code(caught) == "InvalidAttributeName"

    # Another account's queue: refused, though its URL is right and its owner reaches it.
    other, other_key = _new_account(live.url)
    theirs = live.client(other, other_key).create_queue(QueueName="theirs")["QueueUrl"]
    for call in (
        lambda: sqs.get_queue_attributes(QueueUrl=theirs, AttributeNames=["All"]),
        lambda: sqs.delete_queue(QueueUrl=theirs),
        lambda: sqs.purge_queue(QueueUrl=theirs),
        lambda: sqs.list_queue_tags(QueueUrl=theirs),
    ):
        with pytest.raises(ClientError) as caught:
            call()
        assert _code(caught) == "AccessDenied"
        assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert live.client(other, other_key).get_queue_url(QueueName="theirs")["QueueUrl"] == theirs
    assert sqs.list_queues()["QueueUrls"] == [url]  # only its own


def _settled(sqs: Any, arn: str) -> dict[str, Any]:
    """The latest move task once it is no longer running (bounded by SAFETY_S)."""
    deadline = time.monotonic() + SAFETY_S
    while True:
        (task,) = sqs.list_message_move_tasks(SourceArn=arn)["Results"]
        if task["Status"] != "RUNNING":
            return dict(task)
        assert time.monotonic() < deadline, f"move task still running: {task}"
        time.sleep(0.05)  # polling a stored status; the task runs on the server's loop


def test_boto3_message_move_task(live: Live) -> None:
    sqs = live.client()
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    dlq_arn = f"arn:aws:sqs:{REGION}:{live.account}:dlq"
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})
    src = sqs.create_queue(QueueName="src", Attributes={"RedrivePolicy": policy})["QueueUrl"]
    with live.http("v2") as v2:
        assert v2.post("/queues/src/messages", json={"messages": [{"body": "poison"}]}).is_success
        for expected in (1, 0):  # the second receive finds it past maxReceiveCount: moved
            got = v2.post(
                "/queues/src/messages/receive", json={"visibilityTimeoutSeconds": 0}
            ).json()["messages"]
            assert len(got) == expected
    counts = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["ApproximateNumberOfMessages"])
    assert counts["Attributes"] == {"ApproximateNumberOfMessages": "1"}

    handle = sqs.start_message_move_task(SourceArn=dlq_arn, MaxNumberOfMessagesPerSecond=50)
    assert handle["TaskHandle"]
    task = _settled(sqs, dlq_arn)
    assert task["Status"] == "COMPLETED"
    assert task["ApproximateNumberOfMessagesMoved"] == 1
    assert task["MaxNumberOfMessagesPerSecond"] == 50
    back = sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["ApproximateNumberOfMessages"])
    assert back["Attributes"] == {"ApproximateNumberOfMessages": "1"}
    with pytest.raises(ClientError) as caught:
        sqs.cancel_message_move_task(TaskHandle=handle["TaskHandle"])  # finished already
    assert "UnsupportedOperation" in _code(caught)


def test_boto3_queues_are_shared_with_v1_and_v2(live: Live) -> None:
    sqs = live.client()
    url = sqs.create_queue(QueueName="from-sqs", Attributes={"VisibilityTimeout": "12"})["QueueUrl"]
    with live.http("v2") as v2, live.http("v1") as v1:
        shown = v2.get("/queues/from-sqs")
        assert shown.status_code == 200, shown.text
        assert shown.json()["visibilityTimeoutSeconds"] == 12
        put = v1.post("/queues/from-sqs/messages", content=b"via v1")
        assert put.is_success, put.text
        counts = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        assert counts["ApproximateNumberOfMessages"] == "1"
        got = v2.post("/queues/from-sqs/messages/receive", json={}).json()["messages"]
        assert [m["body"] for m in got] == ["via v1"]

        made = v2.put("/queues/from-v2", json={"delaySeconds": 4})
        assert made.status_code == 201, made.text
        made = v1.post("/queues", json={"queueName": "from.v1"})
        assert made.status_code in (200, 201), made.text
    urls = sqs.list_queues()["QueueUrls"]
    assert {u.rsplit("/", 1)[1] for u in urls} == {"from-sqs", "from-v2", "from.v1"}
    delay = sqs.get_queue_attributes(
        QueueUrl=sqs.get_queue_url(QueueName="from-v2")["QueueUrl"], AttributeNames=["DelaySeconds"]
    )
    assert delay["Attributes"] == {"DelaySeconds": "4"}
    sqs.delete_queue(QueueUrl=f"{live.url}/{live.account}/from.v1")
    with live.http("v2") as v2:
        assert v2.get("/queues/from.v1").status_code == 404


def _query(live: Live, form: dict[str, str]) -> ET.Element:
    """A query-protocol request (form POST, SigV4-signed as botocore signs it); its XML."""
    body = urlencode({"Version": "2012-11-05", **form})
    request = AWSRequest(
        method="POST",
        url=live.url + "/",
        data=body,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    SigV4Auth(Credentials(live.account, live.key), "sqs", REGION).add_auth(request)
    answer = httpx.post(request.url, content=body, headers=dict(request.headers), timeout=30)
    assert answer.status_code == 200, answer.text
    return ET.fromstring(answer.content)


def test_query_protocol_queue_actions(live: Live) -> None:
    ns = {"q": XML_NAMESPACE}
    made = _query(
        live,
        {
            "Action": "CreateQueue",
            "QueueName": "xml",
            "Attribute.1.Name": "VisibilityTimeout",
            "Attribute.1.Value": "45",
            "Tag.1.Key": "team",
            "Tag.1.Value": "a",
        },
    )
    url = made.findtext("q:CreateQueueResult/q:QueueUrl", namespaces=ns)
    assert url == f"{live.url}/{live.account}/xml"
    shown = _query(
        live, {"Action": "GetQueueAttributes", "QueueUrl": url, "AttributeName.1": "All"}
    )
    attrs = {
        a.findtext("q:Name", namespaces=ns): a.findtext("q:Value", namespaces=ns)
        for a in shown.findall("q:GetQueueAttributesResult/q:Attribute", ns)
    }
    assert attrs["VisibilityTimeout"] == "45"
    assert attrs["QueueArn"] == f"arn:aws:sqs:{REGION}:{live.account}:xml"
    tags = _query(live, {"Action": "ListQueueTags", "QueueUrl": url})
    found = {
        t.findtext("q:Key", namespaces=ns): t.findtext("q:Value", namespaces=ns)
        for t in tags.findall("q:ListQueueTagsResult/q:Tag", ns)
    }
    assert found == {"team": "a"}
    listed = _query(live, {"Action": "ListQueues", "MaxResults": "1"})
    assert listed.findtext("q:ListQueuesResult/q:QueueUrl", namespaces=ns) == url


def test_aws_cli_queue_actions(
    live: Live,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The AWS CLI's own driver (as the `aws` command runs it, in this process: a
    subprocess per command costs seconds of start-up)."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": live.account,
        "AWS_SECRET_ACCESS_KEY": live.key,
        "AWS_DEFAULT_REGION": REGION,
        # Nothing of this machine's own AWS set-up.
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
    }.items():
        monkeypatch.setenv(name, value)

    driver = create_clidriver()  # one for every command: loading it is most of the cost

    def run(*args: str) -> Any:
        capsys.readouterr()
        code = driver.main(["--endpoint-url", live.url, "--output", "json", "sqs", *args])
        out, err = capsys.readouterr()
        assert code == 0, err
        return json.loads(out) if out.strip() else None

    url = run("create-queue", "--queue-name", "cli", "--attributes", "DelaySeconds=3")["QueueUrl"]
    assert url == f"{live.url}/{live.account}/cli"
    shown = run("get-queue-attributes", "--queue-url", url, "--attribute-names", "DelaySeconds")
    assert shown["Attributes"] == {"DelaySeconds": "3"}
    run("tag-queue", "--queue-url", url, "--tags", "env=dev")
    assert run("list-queue-tags", "--queue-url", url)["Tags"] == {"env": "dev"}
    run("delete-queue", "--queue-url", url)
    assert "QueueUrls" not in live.client().list_queues()


async def test_a_move_task_from_a_queue_that_is_no_dead_letter_queue_is_refused(
    sqs: Sqs, engine: QueueEngine
) -> None:
    """Before: a task handle, then a task that failed each message with no reason."""
    await sqs("CreateQueue", QueueName="plain")
    await engine.send(sqs.account, "plain", [OutgoingMessage(body="x")])
    refused = await sqs.fails(
        "InvalidParameterValue", "StartMessageMoveTask", SourceArn=sqs.arn("plain")
    )
    assert "no dead-letter queue" in refused.message
    listed = await sqs("ListMessageMoveTasks", SourceArn=sqs.arn("plain"), MaxResults=10)
    assert listed["Results"] == []
