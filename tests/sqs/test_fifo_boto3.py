"""boto3, unchanged, on SQS FIFO queues (issue 37 item 1) of a served app, on both stores:
sequence numbers on send, a duplicate answered with the first message's id, a group in
send order with one message in flight, MessageGroupId and SequenceNumber on receive,
ReceiveRequestAttemptId, the query protocol's SequenceNumber, and a standard queue's
MessageGroupId kept and shown."""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Any
from urllib.parse import urlencode

import httpx
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from cassieq.api.sqs.model import XML_NAMESPACE
from tests.sqs.live_sqs import REGION, LiveSqs

FIFO = {"FifoQueue": "true"}
LEASE_S = 60  # longer than any test: a lease never runs out under one


def _receive(sqs: Any, url: str, **params: Any) -> list[dict[str, Any]]:
    got = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=LEASE_S, **params
    )
    return list(got.get("Messages", []))


def _delete(sqs: Any, url: str, messages: list[dict[str, Any]]) -> None:
    entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)]
    deleted = sqs.delete_message_batch(QueueUrl=url, Entries=entries)
    assert deleted.get("Failed", []) == [] and len(deleted["Successful"]) == len(messages)


def test_sends_are_numbered_and_a_duplicate_answers_the_first_id(live: LiveSqs) -> None:
    sqs = live.client()
    url = sqs.create_queue(QueueName="orders.fifo", Attributes=FIFO)["QueueUrl"]
    groups = ("alice", "bob", "carol")
    sent: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # body, id, sequence
    for n in range(4):
        for group in groups:
            body = f"{group}-{n}"
            answer = sqs.send_message(
                QueueUrl=url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=body
            )
            assert answer["MD5OfMessageBody"] == hashlib.md5(body.encode()).hexdigest()
            sent[group].append((body, answer["MessageId"], answer["SequenceNumber"]))
    # A retried send (same deduplication id, even another body) within 5 minutes: success,
    # the first message's id, nothing stored.
    retried = sqs.send_message(
        QueueUrl=url, MessageBody="again", MessageGroupId="alice", MessageDeduplicationId="alice-1"
    )
    assert retried["MessageId"] == sent["alice"][1][1]
    assert retried["MD5OfMessageBody"] == hashlib.md5(b"again").hexdigest()
    # A batch: each entry numbered; its duplicate entry answered with the first's id.
    batch = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "a", "MessageBody": "bob-4", "MessageGroupId": "bob",
             "MessageDeduplicationId": "bob-4"},
            {"Id": "b", "MessageBody": "bob-4", "MessageGroupId": "bob",
             "MessageDeduplicationId": "bob-4"},
            {"Id": "c", "MessageBody": "carol-0 again", "MessageGroupId": "carol",
             "MessageDeduplicationId": "carol-0"},
        ],
    )  # fmt: skip
    assert batch.get("Failed", []) == []
    by_id = {e["Id"]: e for e in batch["Successful"]}
    assert by_id["b"]["MessageId"] == by_id["a"]["MessageId"]
    assert by_id["c"]["MessageId"] == sent["carol"][0][1]
    sent["bob"].append(("bob-4", by_id["a"]["MessageId"], by_id["a"]["SequenceNumber"]))
    for group in groups:  # increasing within a group
        numbers = [int(s) for _, _, s in sent[group]]
        assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)

    # Every message once, each group in send order, with its group and number. Long polls
    # (a second at most): a short poll may answer empty while messages are there, as SQS's
    # may (CI once saw this loop's first short poll answer empty; see the session notes).
    received: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    while got := _receive(sqs, url, AttributeNames=["All"], WaitTimeSeconds=1):
        for m in got:
            attributes = m["Attributes"]
            received[attributes["MessageGroupId"]].append(
                (m["Body"], m["MessageId"], attributes["SequenceNumber"])
            )
            assert "MessageDeduplicationId" not in attributes  # not kept on the message
        _delete(sqs, url, got)
    assert received == sent
    counts = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert counts["ApproximateNumberOfMessages"] == "0"
    assert counts["ApproximateNumberOfMessagesNotVisible"] == "0"


def test_a_group_waits_for_its_message_in_flight(live: LiveSqs) -> None:
    sqs = live.client()
    url = sqs.create_queue(
        QueueName="ledger.fifo", Attributes={**FIFO, "ContentBasedDeduplication": "true"}
    )["QueueUrl"]
    for body in ("a1", "a2"):
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="a")
    [a1] = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=1, VisibilityTimeout=LEASE_S,
        MessageSystemAttributeNames=["MessageGroupId"],
    )["Messages"]  # fmt: skip
    assert (a1["Body"], a1["Attributes"]["MessageGroupId"]) == ("a1", "a")
    assert _receive(sqs, url) == []  # a2 waits for a1, in flight
    for body, group in (("b1", "b"), ("a3", "a")):
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId=group)
    first = _receive(sqs, url, MessageSystemAttributeNames=["MessageGroupId"])
    assert [(m["Body"], m["Attributes"]["MessageGroupId"]) for m in first] == [("b1", "b")]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=a1["ReceiptHandle"])
    # As many of the group as the answer holds, in order (SQS's FIFO delivery logic).
    assert [m["Body"] for m in _receive(sqs, url)] == ["a2", "a3"]
    # Content-based deduplication: the same body is the same message for 5 minutes.
    again = sqs.send_message(QueueUrl=url, MessageBody="b1", MessageGroupId="b")
    assert again["MessageId"] == first[0]["MessageId"]


def test_a_retried_receive_gets_the_same_messages(live: LiveSqs) -> None:
    sqs = live.client()
    url = sqs.create_queue(
        QueueName="retry.fifo", Attributes={**FIFO, "ContentBasedDeduplication": "true"}
    )["QueueUrl"]
    for body in ("one", "two"):
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId=body)
    first = _receive(sqs, url, ReceiveRequestAttemptId="attempt-1")
    assert sorted(m["Body"] for m in first) == ["one", "two"]
    # The answer was lost: the retry with the same attempt id gets the same deliveries,
    # whose handles delete them.
    again = _receive(sqs, url, ReceiveRequestAttemptId="attempt-1")
    assert [(m["MessageId"], m["Body"], m["ReceiptHandle"]) for m in again] == [
        (m["MessageId"], m["Body"], m["ReceiptHandle"]) for m in first
    ]
    assert _receive(sqs, url, ReceiveRequestAttemptId="attempt-2") == []
    _delete(sqs, url, again)
    counts = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    assert counts == {"ApproximateNumberOfMessagesNotVisible": "0"}


def test_a_standard_queue_keeps_and_shows_a_message_group(live: LiveSqs) -> None:
    sqs = live.client()
    url = sqs.create_queue(QueueName="tenants")["QueueUrl"]
    answer = sqs.send_message(QueueUrl=url, MessageBody="t", MessageGroupId="tenant-7")
    assert "SequenceNumber" not in answer
    sqs.send_message(QueueUrl=url, MessageBody="u")
    got = {m["Body"]: m for m in _receive(sqs, url, MessageSystemAttributeNames=["All"])}
    assert got["t"]["Attributes"]["MessageGroupId"] == "tenant-7"
    assert "MessageGroupId" not in got["u"]["Attributes"]
    assert "SequenceNumber" not in got["t"]["Attributes"]


def test_the_query_protocol_answers_sequence_numbers(live: LiveSqs) -> None:
    ns = {"q": XML_NAMESPACE}
    made = _post(
        live,
        "/",
        {
            "Action": "CreateQueue",
            "QueueName": "query.fifo",
            "Attribute.1.Name": "FifoQueue",
            "Attribute.1.Value": "true",
            "Attribute.2.Name": "ContentBasedDeduplication",
            "Attribute.2.Value": "false",
        },
    )
    path = f"/{live.account}/query.fifo"
    assert made.findtext("q:CreateQueueResult/q:QueueUrl", namespaces=ns) == live.url + path
    sent = _post(
        live,
        path,
        {
            "Action": "SendMessage",
            "MessageBody": "over query",
            "MessageGroupId": "g",
            "MessageDeduplicationId": "d",
        },
    )
    number = sent.findtext("q:SendMessageResult/q:SequenceNumber", namespaces=ns)
    assert number is not None and number.isdigit()
    got = _post(
        live,
        path,
        {"Action": "ReceiveMessage", "AttributeName.1": "All", "VisibilityTimeout": "30"},
    )
    attributes = {
        a.findtext("q:Name", namespaces=ns): a.findtext("q:Value", namespaces=ns)
        for a in got.findall("q:ReceiveMessageResult/q:Message/q:Attribute", ns)
    }
    assert attributes["MessageGroupId"] == "g"
    assert attributes["SequenceNumber"] == number
    shown = _post(
        live, path, {"Action": "GetQueueAttributes", "AttributeName.1": "FifoQueue"}
    ).findtext("q:GetQueueAttributesResult/q:Attribute/q:Value", namespaces=ns)
    assert shown == "true"


def _post(live: LiveSqs, path: str, form: dict[str, str]) -> ET.Element:
    request = AWSRequest(
        method="POST",
        url=live.url + path,
        data=urlencode(form).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
    )
    SigV4Auth(Credentials(live.account, live.key), "sqs", REGION).add_auth(request)
    prepared = request.prepare()
    answer = httpx.post(
        prepared.url, content=prepared.body, headers=dict(prepared.headers), timeout=30
    )
    assert answer.status_code == 200, answer.text
    return ET.fromstring(answer.content)
