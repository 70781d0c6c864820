"""The SQS message actions through boto3 (checksum validation on) against a served app, on
both stores: every action, the error codes boto3 shows, and long polling."""

from __future__ import annotations

import hashlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from botocore.exceptions import ClientError

from cassieq.api.sqs.md5 import md5_of_attributes
from tests.sqs.live_sqs import LiveSqs

ATTRS: dict[str, dict[str, Any]] = {
    "text": {"DataType": "String", "StringValue": "héllo"},
    "count": {"DataType": "Number", "StringValue": "42"},
    "blob": {"DataType": "Binary", "BinaryValue": b"\x00\xffbytes"},
    "kind": {"DataType": "String.custom", "StringValue": "x"},
}
SAFETY_S = 30  # bounds a call that would hang; nothing waits for it to pass


@pytest.fixture
def sqs(live: LiveSqs) -> Any:
    return live.client()


def _code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def test_send_receive_change_delete(sqs: Any) -> None:
    url = sqs.create_queue(QueueName="work")["QueueUrl"]
    sent = sqs.send_message(QueueUrl=url, MessageBody="hello", MessageAttributes=ATTRS)
    assert sent["MD5OfMessageBody"] == hashlib.md5(b"hello").hexdigest()
    assert sent["MD5OfMessageAttributes"] == md5_of_attributes(ATTRS)
    got = sqs.receive_message(
        QueueUrl=url,
        MessageAttributeNames=["All"],
        MessageSystemAttributeNames=["ApproximateReceiveCount", "SentTimestamp", "SenderId"],
        VisibilityTimeout=30,
    )
    [m] = got["Messages"]
    assert (m["MessageId"], m["Body"]) == (sent["MessageId"], "hello")
    assert m["MessageAttributes"] == ATTRS  # Binary comes back as bytes
    assert m["MD5OfMessageAttributes"] == sent["MD5OfMessageAttributes"]
    assert m["Attributes"]["ApproximateReceiveCount"] == "1"
    assert set(m["Attributes"]) == {"ApproximateReceiveCount", "SentTimestamp", "SenderId"}
    handle = m["ReceiptHandle"]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=0)
    # Visible again at once; the new delivery counts 2, the first handle is over.
    [again] = sqs.receive_message(QueueUrl=url, AttributeNames=["All"])["Messages"]
    assert again["Attributes"]["ApproximateReceiveCount"] == "2"
    with pytest.raises(ClientError) as exc:
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=5)
    # Superseded by the newer delivery's handle: not valid any more (#39 item 15).
    assert _code(exc) == "ReceiptHandleIsInvalid"
    sqs.delete_message(QueueUrl=url, ReceiptHandle=again["ReceiptHandle"])
    assert "Messages" not in sqs.receive_message(QueueUrl=url, VisibilityTimeout=0)


def test_batches(sqs: Any) -> None:
    url = sqs.create_queue(QueueName="batches")["QueueUrl"]
    entries: list[dict[str, Any]] = [{"Id": f"m{i}", "MessageBody": f"body {i}"} for i in range(10)]
    entries[2]["MessageAttributes"] = {"n": {"DataType": "Number.int", "StringValue": "7"}}
    sent = sqs.send_message_batch(QueueUrl=url, Entries=entries)
    assert sorted(s["Id"] for s in sent["Successful"]) == sorted(e["Id"] for e in entries)
    assert not sent.get("Failed")
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["n"])
    messages = got["Messages"]
    assert sorted(m["Body"] for m in messages) == sorted(e["MessageBody"] for e in entries)
    [typed] = [m for m in messages if m["Body"] == "body 2"]
    assert typed["MessageAttributes"] == entries[2]["MessageAttributes"]
    changed = sqs.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[
            {"Id": f"c{i}", "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 60}
            for i, m in enumerate(messages[:9])
        ]
        + [{"Id": "bad", "ReceiptHandle": "forged", "VisibilityTimeout": 60}],
    )
    assert len(changed["Successful"]) == 9
    assert [(f["Id"], f["Code"]) for f in changed["Failed"]] == [("bad", "ReceiptHandleIsInvalid")]
    # The handles still delete after their visibility changed (as in SQS).
    deleted = sqs.delete_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": f"d{i}", "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)
        ],
    )
    assert len(deleted["Successful"]) == 10 and not deleted.get("Failed")
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == "0"
    assert attrs["ApproximateNumberOfMessagesNotVisible"] == "0"


def test_error_codes_boto3_sees(live: LiveSqs, sqs: Any) -> None:
    url = sqs.create_queue(QueueName="errors")["QueueUrl"]
    twice = [{"Id": "a", "MessageBody": "1"}, {"Id": "a", "MessageBody": "2"}]
    big = [{"Id": f"e{i}", "MessageBody": "x" * 400_000} for i in range(3)]  # 1.2 MB in all
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("send_message", {"QueueUrl": url + "-nope", "MessageBody": "x"},
         "AWS.SimpleQueueService.NonExistentQueue"),
        ("send_message_batch",
         {"QueueUrl": url, "Entries": twice},
         "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"),
        ("send_message_batch",
         {"QueueUrl": url, "Entries": [{"Id": f"e{i}", "MessageBody": "1"} for i in range(11)]},
         "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"),
        ("send_message", {"QueueUrl": url, "MessageBody": "x" * (1024 * 1024 + 1)},
         "InvalidParameterValue"),
        ("send_message_batch",
         {"QueueUrl": url, "Entries": big},
         "AWS.SimpleQueueService.BatchRequestTooLong"),
        ("delete_message", {"QueueUrl": url, "ReceiptHandle": "forged"}, "ReceiptHandleIsInvalid"),
        ("receive_message", {"QueueUrl": url, "MaxNumberOfMessages": 11}, "InvalidParameterValue"),
    ]  # fmt: skip
    for method, params, code in cases:
        with pytest.raises(ClientError) as exc:
            getattr(sqs, method)(**params)
        assert _code(exc) == code, (method, exc.value.response)
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


def test_long_poll_returns_when_a_message_arrives(live: LiveSqs, sqs: Any) -> None:
    url = sqs.create_queue(QueueName="longpoll")["QueueUrl"]
    sender = live.client()
    with ThreadPoolExecutor(1) as pool:
        started = time.monotonic()
        receiving = pool.submit(sqs.receive_message, QueueUrl=url, WaitTimeSeconds=20)
        assert live.waiting.wait(SAFETY_S), "the receive never started waiting"
        assert not receiving.done()
        sender.send_message(QueueUrl=url, MessageBody="wake up")
        got = receiving.result(timeout=SAFETY_S)
        took = time.monotonic() - started
    assert [m["Body"] for m in got["Messages"]] == ["wake up"]
    # A put on the same server wakes the waiter at once: far below the 20 s wait.
    assert took < 5, took


def test_long_poll_uses_the_queue_default_wait(live: LiveSqs, sqs: Any) -> None:
    url = sqs.create_queue(QueueName="waits", Attributes={"ReceiveMessageWaitTimeSeconds": "20"})[
        "QueueUrl"
    ]
    done = threading.Event()
    with ThreadPoolExecutor(1) as pool:

        def receive() -> Any:
            got = sqs.receive_message(QueueUrl=url)
            done.set()
            return got

        receiving = pool.submit(receive)
        assert live.waiting.wait(SAFETY_S), "a receive naming no wait did not wait"
        assert not done.is_set()
        live.client().send_message(QueueUrl=url, MessageBody="m")
        assert [m["Body"] for m in receiving.result(timeout=SAFETY_S)["Messages"]] == ["m"]
