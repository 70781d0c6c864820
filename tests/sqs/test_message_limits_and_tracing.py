"""SQS message sizes (1 MiB, botocore's current model), AWSTraceHeader, and the entry type an
empty batch names (#39 items 12, 14, 15): below the route on both stores, then through
boto3 (its MD5 checks on) against a served app on both stores."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from botocore.exceptions import ClientError

from cassieq.api.sqs.errors import SqsError
from cassieq.api.sqs.md5 import md5_of_attributes
from cassieq.engine import QueueEngine
from tests.engine.conftest import account, calls, clock, engine, make_queue, tuning  # noqa: F401
from tests.sqs.conftest import SqsServer
from tests.sqs.live_sqs import LiveSqs
from tests.sqs.message_calls import Caller
from tests.sqs.test_message_query_protocol import NS, _post

MIB = 1024 * 1024
TRACE = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
SYSTEM = {"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE}}


@pytest.fixture
async def sqs(engine: QueueEngine, account: str) -> Caller:  # noqa: F811
    await make_queue(engine, account, "q")
    return Caller(engine, account)


async def _error(sqs: Caller, action: str, **params: Any) -> SqsError:
    with pytest.raises(SqsError) as caught:
        await sqs(action, QueueUrl=sqs.url("q"), **params)
    return caught.value


async def test_a_message_of_1_mib_is_sent_and_received_whole(sqs: Caller) -> None:
    body = "m" * (MIB - 4) + "é" * 2  # 1 MiB of UTF-8, two 2-byte characters at its end
    assert len(body.encode()) == MIB
    sent = await sqs("SendMessage", QueueUrl=sqs.url("q"), MessageBody=body)
    [got] = (await sqs("ReceiveMessage", QueueUrl=sqs.url("q")))["Messages"]
    assert got["Body"] == body and got["MessageId"] == sent["MessageId"]
    too_big = await _error(sqs, "SendMessage", MessageBody=body + "x")
    assert too_big.code == "InvalidParameterValue"
    assert f"shorter than {MIB} bytes" in too_big.message


async def test_a_batch_carries_1_mib_in_all_and_no_more(sqs: Caller) -> None:
    quarter = MIB // 4
    entries = [{"Id": f"e{i}", "MessageBody": str(i) * quarter} for i in range(4)]
    sent = await sqs("SendMessageBatch", QueueUrl=sqs.url("q"), Entries=entries)
    assert [e["Id"] for e in sent["Successful"]] == ["e0", "e1", "e2", "e3"]
    assert sent["Failed"] == []
    entries[3]["MessageBody"] += "x"
    over = await _error(sqs, "SendMessageBatch", Entries=entries)
    assert over.code == "BatchRequestTooLong" and str(MIB) in over.message
    assert (await sqs.engine.statistics(sqs.account, "q")).published == 4


async def test_maximum_message_size_of_the_queue_still_applies(sqs: Caller) -> None:
    await make_queue(sqs.engine, sqs.account, "small", max_message_bytes=2048)
    with pytest.raises(SqsError) as caught:
        await sqs("SendMessage", QueueUrl=sqs.url("small"), MessageBody="x" * 2049)
    assert "shorter than 2048 bytes" in caught.value.message


@pytest.mark.parametrize(
    ("action", "entry_type"),
    [
        ("SendMessageBatch", "SendMessageBatchRequestEntry"),
        ("DeleteMessageBatch", "DeleteMessageBatchRequestEntry"),
        ("ChangeMessageVisibilityBatch", "ChangeMessageVisibilityBatchRequestEntry"),
    ],
)
async def test_an_empty_batch_names_its_own_entry_type(
    sqs: Caller, action: str, entry_type: str
) -> None:
    empties: list[dict[str, Any]] = [{"Entries": []}, {}]
    for empty in empties:
        error = await _error(sqs, action, **empty)
        assert error.code == "EmptyBatchRequest"
        assert error.message == f"There should be at least one {entry_type} in the request."


async def test_aws_trace_header_is_kept_and_returned_as_a_system_attribute(sqs: Caller) -> None:
    url = sqs.url("q")
    sent = await sqs("SendMessage", QueueUrl=url, MessageBody="b", MessageSystemAttributes=SYSTEM)
    assert sent["MD5OfMessageSystemAttributes"] == md5_of_attributes(SYSTEM)
    await sqs(
        "SendMessageBatch",
        QueueUrl=url,
        Entries=[{"Id": "a", "MessageBody": "a", "MessageSystemAttributes": SYSTEM}],
    )
    got = (
        await sqs(
            "ReceiveMessage",
            QueueUrl=url,
            MaxNumberOfMessages=2,
            MessageSystemAttributeNames=["AWSTraceHeader"],
            MessageAttributeNames=["All"],
            VisibilityTimeout=0,
        )
    )["Messages"]
    assert [m["Attributes"] for m in got] == [{"AWSTraceHeader": TRACE}] * 2
    assert all("MessageAttributes" not in m for m in got)  # a system attribute only
    [first] = (
        await sqs("ReceiveMessage", QueueUrl=url, AttributeNames=["All"], VisibilityTimeout=0)
    )["Messages"]
    assert first["Attributes"]["AWSTraceHeader"] == TRACE
    assert first["Attributes"]["ApproximateReceiveCount"] == "2"
    # A message sent without one has none.
    await sqs.engine.ack_batch(
        sqs.account, "q", [d.receipt for d in await sqs.engine.receive(sqs.account, "q", 10, 30)]
    )
    await sqs("SendMessage", QueueUrl=url, MessageBody="plain")
    [plain] = (await sqs("ReceiveMessage", QueueUrl=url, AttributeNames=["All"]))["Messages"]
    assert "AWSTraceHeader" not in plain["Attributes"]


@pytest.mark.parametrize(
    "system",
    [
        {"Other": {"DataType": "String", "StringValue": "x"}},
        {"AWSTraceHeader": {"DataType": "Number", "StringValue": "1"}},
        {"AWSTraceHeader": {"DataType": "String", "StringValue": ""}},
        {"AWSTraceHeader": {"DataType": "String", "StringValue": "x" * 1025}},
    ],
)
async def test_bad_system_attributes_are_refused(sqs: Caller, system: dict[str, Any]) -> None:
    error = await _error(sqs, "SendMessage", MessageBody="b", MessageSystemAttributes=system)
    assert error.code == "InvalidParameterValue"
    assert (await sqs.engine.statistics(sqs.account, "q")).published == 0


# --- boto3 ------------------------------------------------------------------------------------


@pytest.fixture
def boto(live: LiveSqs) -> Any:
    return live.client()


def test_boto3_a_1_mib_message_round_trips(boto: Any) -> None:
    url = boto.create_queue(QueueName="big")["QueueUrl"]
    attributes = boto.get_queue_attributes(QueueUrl=url, AttributeNames=["MaximumMessageSize"])
    assert attributes["Attributes"]["MaximumMessageSize"] == str(MIB)
    body = "ü" * (MIB // 2)  # 1 MiB of UTF-8: its JSON request is 3 MiB of \u00fc escapes
    sent = boto.send_message(QueueUrl=url, MessageBody=body)
    assert sent["MD5OfMessageBody"] == hashlib.md5(body.encode()).hexdigest()
    [got] = boto.receive_message(QueueUrl=url)["Messages"]  # boto3 checks the MD5 too
    assert got["Body"] == body
    with pytest.raises(ClientError) as caught:
        boto.send_message(QueueUrl=url, MessageBody=body + "x")
    assert caught.value.response["Error"]["Code"] == "InvalidParameterValue"


def test_boto3_aws_trace_header_comes_back_on_receive(boto: Any) -> None:
    url = boto.create_queue(QueueName="traced")["QueueUrl"]
    boto.send_message(QueueUrl=url, MessageBody="b", MessageSystemAttributes=SYSTEM)
    [got] = boto.receive_message(QueueUrl=url, MessageSystemAttributeNames=["AWSTraceHeader"])[
        "Messages"
    ]
    assert got["Attributes"] == {"AWSTraceHeader": TRACE}


def test_query_protocol_aws_trace_header(sqs_server: SqsServer) -> None:
    sqs_server.client().create_queue(QueueName="query-traced")
    path = f"/{sqs_server.account}/query-traced"
    sent = _post(
        sqs_server,
        path,
        {
            "Action": "SendMessage",
            "MessageBody": "b",
            "MessageSystemAttribute.1.Name": "AWSTraceHeader",
            "MessageSystemAttribute.1.Value.DataType": "String",
            "MessageSystemAttribute.1.Value.StringValue": TRACE,
        },
    )
    digest = sent.findtext("q:SendMessageResult/q:MD5OfMessageSystemAttributes", namespaces=NS)
    assert digest == md5_of_attributes(SYSTEM)
    got = _post(
        sqs_server,
        path,
        {"Action": "ReceiveMessage", "MessageSystemAttributeName.1": "AWSTraceHeader"},
    )
    attributes = {
        a.findtext("q:Name", namespaces=NS): a.findtext("q:Value", namespaces=NS)
        for a in got.findall("q:ReceiveMessageResult/q:Message/q:Attribute", NS)
    }
    assert attributes == {"AWSTraceHeader": TRACE}
