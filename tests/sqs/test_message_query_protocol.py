"""The message actions over the query protocol (what older SDKs speak): a signed form POST
to the queue URL, XML answers; a Binary attribute travels base64 in both directions."""

from __future__ import annotations

import base64
import hashlib
import xml.etree.ElementTree as ET
from typing import Any
from urllib.parse import urlencode

import httpx
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from cassieq.api.sqs.md5 import md5_of_attributes
from cassieq.api.sqs.model import XML_NAMESPACE
from tests.sqs.conftest import SqsServer

NS = {"q": XML_NAMESPACE}
ATTRS: dict[str, dict[str, Any]] = {
    "bin": {"DataType": "Binary", "BinaryValue": b"\x00\x01raw"},
    "num": {"DataType": "Number", "StringValue": "12.5"},
}


def _post(server: SqsServer, path: str, form: dict[str, str]) -> ET.Element:
    request = AWSRequest(
        method="POST",
        url=server.base + path,
        data=urlencode(form).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
    )
    creds = Credentials(server.account, server.keys["primary"])
    SigV4Auth(creds, "sqs", "eu-west-1").add_auth(request)
    prepared = request.prepare()
    answer = httpx.post(
        prepared.url, content=prepared.body, headers=dict(prepared.headers), timeout=30
    )
    assert answer.status_code == 200, answer.text
    return ET.fromstring(answer.content)


def test_send_receive_delete_over_the_query_protocol(sqs_server: SqsServer) -> None:
    sqs_server.client().create_queue(QueueName="query-messages")
    path = f"/{sqs_server.account}/query-messages"
    sent = _post(
        sqs_server,
        path,
        {
            "Action": "SendMessage",
            "MessageBody": "over query",
            "MessageAttribute.1.Name": "bin",
            "MessageAttribute.1.Value.DataType": "Binary",
            "MessageAttribute.1.Value.BinaryValue": base64.b64encode(b"\x00\x01raw").decode(),
            "MessageAttribute.2.Name": "num",
            "MessageAttribute.2.Value.DataType": "Number",
            "MessageAttribute.2.Value.StringValue": "12.5",
        },
    )
    result = sent.find("q:SendMessageResult", NS)
    assert result is not None
    assert result.findtext("q:MD5OfMessageBody", namespaces=NS) == (
        hashlib.md5(b"over query").hexdigest()
    )
    assert result.findtext("q:MD5OfMessageAttributes", namespaces=NS) == md5_of_attributes(ATTRS)
    got = _post(
        sqs_server,
        path,
        {"Action": "ReceiveMessage", "MessageAttributeName.1": "All", "VisibilityTimeout": "30"},
    )
    [message] = got.findall("q:ReceiveMessageResult/q:Message", NS)
    assert message.findtext("q:Body", namespaces=NS) == "over query"
    values = {
        a.findtext("q:Name", namespaces=NS): (
            a.findtext("q:Value/q:DataType", namespaces=NS),
            a.findtext("q:Value/q:BinaryValue", namespaces=NS)
            or a.findtext("q:Value/q:StringValue", namespaces=NS),
        )
        for a in message.findall("q:MessageAttribute", NS)
    }
    assert values == {
        "bin": ("Binary", base64.b64encode(b"\x00\x01raw").decode()),
        "num": ("Number", "12.5"),
    }
    handle = message.findtext("q:ReceiptHandle", namespaces=NS)
    assert handle
    _post(sqs_server, path, {"Action": "DeleteMessage", "ReceiptHandle": handle})
    empty = _post(sqs_server, path, {"Action": "ReceiveMessage", "VisibilityTimeout": "0"})
    assert empty.findall("q:ReceiveMessageResult/q:Message", NS) == []
