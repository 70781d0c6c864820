"""SQS queue actions, called as the route calls them (an SqsCall), on both stores."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.model import OutgoingMessage, QueueOptions
from cassieq.sqs.actions.queues import ACTIONS
from cassieq.sqs.context import SqsCall
from cassieq.sqs.errors import SqsError
from cassieq.store.memory import MemoryStore

BASE = "http://127.0.0.1:9324"
REGION = "eu-west-1"


@pytest.fixture(params=["memory", "cassandra"])
def engine(request: pytest.FixtureRequest) -> QueueEngine:
    store = (
        MemoryStore() if request.param == "memory" else request.getfixturevalue("cassandra_store")
    )
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
    assert attrs["MaximumMessageSize"] == "262144"
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
    await sqs.fails(
        "QueueNameExists", "CreateQueue", QueueName="jobs", Attributes={"VisibilityTimeout": "5"}
    )


async def test_bad_names_and_attributes_are_refused_as_sqs_does(sqs: Sqs) -> None:
    await sqs.fails("MissingParameter", "CreateQueue")
    await sqs.fails("InvalidParameterValue", "CreateQueue", QueueName="a.b")
    await sqs.fails("InvalidParameterValue", "CreateQueue", QueueName="x" * 81)
    await sqs.fails("UnsupportedOperation", "CreateQueue", QueueName="orders.fifo")
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
    await sqs.fails(
        "UnsupportedOperation", "CreateQueue", QueueName="q", Attributes={"FifoQueue": "true"}
    )
    made = await sqs("CreateQueue", QueueName="q", Attributes={"FifoQueue": "false"})
    assert made["QueueUrl"] == sqs.url("q")
    await sqs.fails(
        "InvalidAttributeName", "GetQueueAttributes", QueueUrl=sqs.url("q"), AttributeNames=["Nope"]
    )
    await sqs.fails("UnsupportedOperation", "AddPermission", QueueUrl=sqs.url("q"))
    await sqs.fails("UnsupportedOperation", "RemovePermission", QueueUrl=sqs.url("q"))


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
    await sqs.fails("InvalidAddress", "GetQueueAttributes", QueueUrl=f"{BASE}/only-one-part")
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
    gate, waiting = asyncio.Event(), asyncio.Event()

    async def held(_: float) -> None:  # the rate limiter's wait before the 2nd move
        waiting.set()
        await gate.wait()

    engine.redriver.sleep = held
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


async def test_queues_are_shared_with_v1_and_v2(sqs: Sqs, engine: QueueEngine) -> None:
    # Made by v2 (a dotted name SQS could not create): listed and reached through SQS.
    await engine.create_queue(sqs.account, "orders.v1", QueueOptions(visibility_timeout_seconds=9))
    assert sqs.url("orders.v1") in (await sqs("ListQueues"))["QueueUrls"]
    assert (await sqs.attributes("orders.v1", "VisibilityTimeout")) == {"VisibilityTimeout": "9"}
    # Made by SQS: the engine (v1 and v2 routes) sees the same queue.
    await sqs("CreateQueue", QueueName="made-by-sqs", Attributes={"DelaySeconds": "3"})
    assert (await engine.queues.get(sqs.account, "made-by-sqs")).options.delay_seconds == 3
