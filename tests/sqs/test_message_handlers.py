"""The SQS message actions on the engine, below the HTTP route: both stores, FakeClock.

What boto3 sees over HTTP is in test_message_actions.py; here the cases that need the
clock moved (visibility, receipt handles across redeliveries) and the validation matrix.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable
from typing import Any

import pytest

from cassieq.api.sqs.errors import SqsError
from cassieq.api.sqs.md5 import md5_of_attributes
from cassieq.engine import FakeClock, QueueEngine
from tests.engine.conftest import account, calls, clock, engine, make_queue, tuning  # noqa: F401
from tests.sqs.message_calls import Caller

ATTRS: dict[str, dict[str, Any]] = {
    "s": {"DataType": "String", "StringValue": "héllo"},
    "n": {"DataType": "Number.float", "StringValue": "-1.5e3"},
    "b": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xff"},
    "app.trace": {"DataType": "String.id", "StringValue": "t-1"},
}


@pytest.fixture
async def sqs(engine: QueueEngine, account: str) -> Caller:  # noqa: F811
    await make_queue(engine, account, "q")
    return Caller(engine, account)


async def _code(call: Awaitable[object]) -> str:
    with pytest.raises(SqsError) as info:
        await call
    return info.value.code


async def test_send_receive_delete_with_typed_attributes(sqs: Caller, clock: FakeClock) -> None:  # noqa: F811
    sent = await sqs(
        "SendMessage", QueueUrl=sqs.url("q"), MessageBody="body", MessageAttributes=ATTRS
    )
    assert sent["MD5OfMessageBody"] == hashlib.md5(b"body").hexdigest()
    assert sent["MD5OfMessageAttributes"] == md5_of_attributes(ATTRS)
    clock.advance(5)
    got = await sqs(
        "ReceiveMessage",
        QueueUrl=sqs.url("q"),
        MessageAttributeNames=["All"],
        MessageSystemAttributeNames=["All"],
    )
    [m] = got["Messages"]
    assert m["MessageId"] == sent["MessageId"]
    assert m["Body"] == "body" and m["MD5OfBody"] == sent["MD5OfMessageBody"]
    assert m["MessageAttributes"] == ATTRS
    assert m["MD5OfMessageAttributes"] == sent["MD5OfMessageAttributes"]
    assert m["Attributes"]["ApproximateReceiveCount"] == "1"
    assert m["Attributes"]["SenderId"] == sqs.account
    assert int(m["Attributes"]["ApproximateFirstReceiveTimestamp"]) == (
        int(m["Attributes"]["SentTimestamp"]) + 5000
    )
    assert await sqs("DeleteMessage", QueueUrl=sqs.url("q"), ReceiptHandle=m["ReceiptHandle"]) == {}
    assert (await sqs.engine.statistics(sqs.account, "q")).size == 0


async def test_attribute_selection_by_name_and_prefix(sqs: Caller) -> None:
    await sqs("SendMessage", QueueUrl=sqs.url("q"), MessageBody="x", MessageAttributes=ATTRS)
    got = await sqs(
        "ReceiveMessage",
        QueueUrl=sqs.url("q"),
        MessageAttributeNames=["s", "app.*"],
        AttributeNames=["SentTimestamp"],
        VisibilityTimeout=0,
    )
    [m] = got["Messages"]
    assert set(m["MessageAttributes"]) == {"s", "app.trace"}
    assert m["MD5OfMessageAttributes"] == md5_of_attributes(
        {k: ATTRS[k] for k in ("s", "app.trace")}
    )
    assert set(m["Attributes"]) == {"SentTimestamp"}
    bare = (await sqs("ReceiveMessage", QueueUrl=sqs.url("q")))["Messages"][0]
    assert "MessageAttributes" not in bare and "Attributes" not in bare


async def test_v2_attributes_read_as_strings(sqs: Caller) -> None:
    from cassieq.model import OutgoingMessage

    await sqs.engine.send(sqs.account, "q", [OutgoingMessage(body="v2", attributes={"k": "v"})])
    [m] = (await sqs("ReceiveMessage", QueueUrl=sqs.url("q"), MessageAttributeNames=[".*"]))[
        "Messages"
    ]
    assert m["MessageAttributes"] == {"k": {"DataType": "String", "StringValue": "v"}}


async def test_handle_survives_visibility_changes_and_goes_stale_on_redelivery(
    sqs: Caller,
    clock: FakeClock,  # noqa: F811
) -> None:
    url = sqs.url("q")
    await sqs("SendMessage", QueueUrl=url, MessageBody="m")
    [m] = (await sqs("ReceiveMessage", QueueUrl=url, VisibilityTimeout=10))["Messages"]
    handle = m["ReceiptHandle"]
    # The same handle, twice: SQS keeps it good through visibility changes.
    await sqs("ChangeMessageVisibility", QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=0)
    await sqs("ChangeMessageVisibility", QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=30)
    clock.advance(20)
    assert await sqs("ReceiveMessage", QueueUrl=url) == {}  # still invisible: 30 s lease
    clock.advance(11)
    [again] = (await sqs("ReceiveMessage", QueueUrl=url, VisibilityTimeout=30))["Messages"]
    # The first delivery is over: its handle is no longer valid (SQS: the most recently
    # received handle must be used) and does not move the new delivery (#39 item 15)...
    code = await _code(
        sqs("ChangeMessageVisibility", QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=0)
    )
    assert code == "ReceiptHandleIsInvalid"
    assert await sqs("ReceiveMessage", QueueUrl=url) == {}  # the new lease still holds
    [batch_failed] = (
        await sqs(
            "ChangeMessageVisibilityBatch",
            QueueUrl=url,
            Entries=[{"Id": "a", "ReceiptHandle": handle, "VisibilityTimeout": 0}],
        )
    )["Failed"]
    assert batch_failed["Code"] == "ReceiptHandleIsInvalid"
    # ...and deleting with it succeeds, as in SQS, without deleting the new delivery.
    assert await sqs("DeleteMessage", QueueUrl=url, ReceiptHandle=handle) == {}
    assert (await sqs.engine.statistics(sqs.account, "q")).in_flight == 1
    await sqs("DeleteMessage", QueueUrl=url, ReceiptHandle=again["ReceiptHandle"])
    assert (await sqs.engine.statistics(sqs.account, "q")).size == 0


async def test_forged_and_other_queue_handles_are_invalid(sqs: Caller) -> None:
    await make_queue(sqs.engine, sqs.account, "other")
    await sqs("SendMessage", QueueUrl=sqs.url("other"), MessageBody="m")
    [m] = (await sqs("ReceiveMessage", QueueUrl=sqs.url("other")))["Messages"]
    for handle in (m["ReceiptHandle"], m["ReceiptHandle"][:-2] + "xx", "nonsense"):
        code = await _code(sqs("DeleteMessage", QueueUrl=sqs.url("q"), ReceiptHandle=handle))
        assert code == "ReceiptHandleIsInvalid"
    out = await sqs(
        "DeleteMessageBatch",
        QueueUrl=sqs.url("other"),
        Entries=[
            {"Id": "a", "ReceiptHandle": m["ReceiptHandle"]},
            {"Id": "b", "ReceiptHandle": "x"},
        ],
    )
    assert out["Successful"] == [{"Id": "a"}]
    assert [(f["Id"], f["Code"], f["SenderFault"]) for f in out["Failed"]] == [
        ("b", "ReceiptHandleIsInvalid", True)
    ]


async def test_batches(sqs: Caller, clock: FakeClock) -> None:  # noqa: F811
    url = sqs.url("q")
    entries = [{"Id": f"e{i}", "MessageBody": f"b{i}"} for i in range(10)]
    entries[3]["MessageBody"] = "bad \x00 char"
    out = await sqs("SendMessageBatch", QueueUrl=url, Entries=entries)
    assert [s["Id"] for s in out["Successful"]] == [f"e{i}" for i in range(10) if i != 3]
    assert [(f["Id"], f["Code"]) for f in out["Failed"]] == [("e3", "InvalidMessageContents")]
    got = (await sqs("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=10))["Messages"]
    assert sorted(m["Body"] for m in got) == sorted(f"b{i}" for i in range(10) if i != 3)
    change = await sqs(
        "ChangeMessageVisibilityBatch",
        QueueUrl=url,
        Entries=[
            {"Id": f"c{i}", "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
            for i, m in enumerate(got[:4])
        ],
    )
    assert len(change["Successful"]) == 4 and change["Failed"] == []
    deleted = await sqs(
        "DeleteMessageBatch",
        QueueUrl=url,
        Entries=[{"Id": f"d{i}", "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)],
    )
    assert len(deleted["Successful"]) == 9 and deleted["Failed"] == []
    assert (await sqs.engine.statistics(sqs.account, "q")).size == 0


@pytest.mark.parametrize(
    ("action", "params", "code"),
    [
        ("SendMessageBatch", {"Entries": []}, "EmptyBatchRequest"),
        (
            "SendMessageBatch",
            {"Entries": [{"Id": f"i{i}", "MessageBody": "b"} for i in range(11)]},
            "TooManyEntriesInBatchRequest",
        ),
        (
            "SendMessageBatch",
            {"Entries": [{"Id": "a", "MessageBody": "b"}, {"Id": "a", "MessageBody": "c"}]},
            "BatchEntryIdsNotDistinct",
        ),
        (
            "SendMessageBatch",
            {"Entries": [{"Id": "a b", "MessageBody": "b"}]},
            "InvalidBatchEntryId",
        ),
        (
            "SendMessageBatch",
            {"Entries": [{"Id": f"i{i}", "MessageBody": "x" * 600_000} for i in range(2)]},
            "BatchRequestTooLong",
        ),
        ("SendMessage", {"MessageBody": "x" * 1_048_577}, "InvalidParameterValue"),
        ("SendMessage", {}, "MissingParameter"),
        ("SendMessage", {"MessageBody": "x", "DelaySeconds": 901}, "InvalidParameterValue"),
        (
            "SendMessage",
            {"MessageBody": "x", "MessageAttributes": {"AWS.x": ATTRS["s"]}},
            "InvalidParameterValue",
        ),
        (
            "SendMessage",
            {"MessageBody": "x", "MessageAttributes": {f"a{i}": ATTRS["s"] for i in range(11)}},
            "InvalidParameterValue",
        ),
        (
            "SendMessage",
            {
                "MessageBody": "x",
                "MessageAttributes": {"n": {"DataType": "Number", "StringValue": "abc"}},
            },
            "InvalidParameterValue",
        ),
        (
            "SendMessage",
            {
                "MessageBody": "x",
                "MessageAttributes": {"n": {"DataType": "Float", "StringValue": "1"}},
            },
            "InvalidParameterValue",
        ),
        ("ReceiveMessage", {"MaxNumberOfMessages": 11}, "InvalidParameterValue"),
        ("ReceiveMessage", {"WaitTimeSeconds": 21}, "InvalidParameterValue"),
        ("ReceiveMessage", {"VisibilityTimeout": 43201}, "InvalidParameterValue"),
        ("ReceiveMessage", {"AttributeNames": ["Nope"]}, "InvalidAttributeName"),
        ("DeleteMessage", {}, "MissingParameter"),
        ("ChangeMessageVisibility", {"ReceiptHandle": "x"}, "ReceiptHandleIsInvalid"),
    ],
)
async def test_refusals(sqs: Caller, action: str, params: dict[str, object], code: str) -> None:
    assert await _code(sqs(action, QueueUrl=sqs.url("q"), **params)) == code
    assert (await sqs.engine.statistics(sqs.account, "q")).published == 0


async def test_unknown_queue(sqs: Caller) -> None:
    code = await _code(sqs("SendMessage", QueueUrl=sqs.url("nope"), MessageBody="x"))
    assert code == "QueueDoesNotExist"


async def test_batch_entries_follow_their_delivery(sqs: Caller) -> None:
    url = sqs.url("q")
    await sqs("SendMessageBatch", QueueUrl=url, Entries=[
        {"Id": "a", "MessageBody": "a"}, {"Id": "b", "MessageBody": "b"},
    ])  # fmt: skip
    got = (await sqs("ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=2))["Messages"]
    first, second = (m["ReceiptHandle"] for m in got)
    # A change made with the handle leaves its receipt stale: the batch follows it.
    await sqs("ChangeMessageVisibility", QueueUrl=url, ReceiptHandle=first, VisibilityTimeout=60)
    changed = await sqs("ChangeMessageVisibilityBatch", QueueUrl=url, Entries=[
        {"Id": "x", "ReceiptHandle": first, "VisibilityTimeout": 90},
        {"Id": "y", "ReceiptHandle": second, "VisibilityTimeout": 90},
    ])  # fmt: skip
    assert [s["Id"] for s in changed["Successful"]] == ["x", "y"] and changed["Failed"] == []
    deleted = await sqs("DeleteMessageBatch", QueueUrl=url, Entries=[
        {"Id": "1", "ReceiptHandle": first},
        {"Id": "2", "ReceiptHandle": second},
        {"Id": "3", "ReceiptHandle": second},  # the same handle again: done once, succeeds
    ])  # fmt: skip
    assert [s["Id"] for s in deleted["Successful"]] == ["1", "2", "3"]
    stats = await sqs.engine.statistics(sqs.account, "q")
    assert (stats.size, stats.acked) == (0, 2)
