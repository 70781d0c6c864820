"""#40 finding 10 and its Low list on the SQS endpoint, end to end on both stores: a captured
SigV4 request cannot be turned into another (unsigned payload, unsigned action or content
type), a signature is for this server's region, the answer to a bad signature does not tell
which accounts and keys exist, and bytes that are not UTF-8 are refused, never stored as
U+FFFD. Requests are signed by botocore's own signer, then sent as raw HTTP."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
import xml.etree.ElementTree as ET
from typing import Any
from unittest import mock
from urllib.parse import quote

import httpx
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from tests.sqs.conftest import SqsServer

REGION = "eu-west-1"  # the sqs_server fixture's (its boto3 clients sign for it)
JSON_TYPE = "application/x-amz-json-1.0"
FORM_TYPE = "application/x-www-form-urlencoded"


def sign(
    server: SqsServer,
    body: bytes,
    headers: dict[str, str],
    *,
    query: str = "",
    region: str = REGION,
    service: str = "sqs",
    key_id: str | None = None,
    secret: str | None = None,
) -> dict[str, str]:
    """The headers botocore's SigV4 signer gives this request: it signs every header it is
    given (less a few such as user-agent), so a header added after signing is unsigned."""
    url = server.base + "/" + (f"?{query}" if query else "")
    request = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
    creds = Credentials(key_id or server.account, secret or server.keys["primary"])
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    with mock.patch("botocore.auth.get_current_datetime", return_value=now):
        SigV4Auth(creds, service, region).add_auth(request)
    return {k: v for k, v in request.headers.items()}


def send(
    server: SqsServer, body: bytes, headers: dict[str, str], query: str = ""
) -> httpx.Response:
    url = server.base + "/" + (f"?{query}" if query else "")
    return httpx.post(url, content=body, headers=headers, timeout=30)


def sqs_error(response: httpx.Response) -> tuple[int, str, str]:
    """(status, code, message) of an SQS error in either protocol."""
    assert response.status_code >= 400, f"accepted: {response.status_code} {response.text}"
    if response.headers.get("content-type", "").startswith(JSON_TYPE):
        body = response.json()
        return response.status_code, body["__type"].rpartition("#")[2], body["message"]
    ns = {"q": "http://queue.amazonaws.com/doc/2012-11-05/"}
    root = ET.fromstring(response.content)
    code = root.findtext("q:Error/q:Code", namespaces=ns) or ""
    message = root.findtext("q:Error/q:Message", namespaces=ns) or ""
    return response.status_code, code, message


def json_call(action: str, params: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    return json.dumps(params).encode(), {
        "Content-Type": JSON_TYPE,
        "X-Amz-Target": f"AmazonSQS.{action}",
    }


def exists(server: SqsServer, name: str) -> bool:
    try:
        server.client().get_queue_url(QueueName=name)
    except ClientError as exc:
        assert exc.response["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"
        return False
    return True


def new_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# --------------------------------------------------------------------- what is signed


def test_an_unsigned_payload_is_refused_so_a_capture_cannot_carry_another_body(
    sqs_server: SqsServer,
) -> None:
    signed_for, swapped = new_name("meant"), new_name("swapped")
    body, headers = json_call("CreateQueue", {"QueueName": signed_for})
    headers = sign(sqs_server, body, {**headers, "X-Amz-Content-SHA256": "UNSIGNED-PAYLOAD"})
    other, _ = json_call("CreateQueue", {"QueueName": swapped})
    status, code, message = sqs_error(send(sqs_server, other, headers))
    assert (status, code) == (403, "SignatureDoesNotMatch")
    assert "UNSIGNED-PAYLOAD" in message
    assert not exists(sqs_server, swapped)
    # The payload's own hash in that header is accepted (the body is then covered).
    hashed = {**json_call("CreateQueue", {"QueueName": signed_for})[1]}
    hashed["X-Amz-Content-SHA256"] = hashlib.sha256(body).hexdigest()
    assert send(sqs_server, body, sign(sqs_server, body, hashed)).status_code == 200
    assert exists(sqs_server, signed_for)


def test_an_unsigned_x_amz_target_is_refused_so_the_action_cannot_be_swapped(
    sqs_server: SqsServer,
) -> None:
    name = new_name("kept")
    url = sqs_server.client().create_queue(QueueName=name)["QueueUrl"]
    body = json.dumps({"QueueUrl": url}).encode()
    # A client that signs the body but not the target: the capture is sent as DeleteQueue.
    headers = sign(sqs_server, body, {"Content-Type": JSON_TYPE})
    headers["X-Amz-Target"] = "AmazonSQS.DeleteQueue"
    status, code, message = sqs_error(send(sqs_server, body, headers))
    assert (status, code) == (400, "IncompleteSignature")
    assert "'x-amz-target'" in message
    assert exists(sqs_server, name)


def test_an_unsigned_content_type_is_refused_so_a_body_cannot_become_parameters(
    sqs_server: SqsServer,
) -> None:
    name = new_name("form")
    body = f"Action=CreateQueue&QueueName={name}&Version=2012-11-05".encode()
    headers = sign(sqs_server, body, {})  # no Content-Type signed: the body is not a form
    headers["Content-Type"] = FORM_TYPE
    status, code, message = sqs_error(send(sqs_server, body, headers))
    assert (status, code) == (400, "IncompleteSignature")
    assert "'content-type'" in message
    assert not exists(sqs_server, name)


def test_a_botocore_client_still_works(sqs_server: SqsServer) -> None:
    client = sqs_server.client()
    name = new_name("boto")
    url = client.create_queue(QueueName=name)["QueueUrl"]
    client.send_message(QueueUrl=url, MessageBody="café ☕")
    got = client.receive_message(QueueUrl=url)["Messages"]
    assert [m["Body"] for m in got] == ["café ☕"]


# --------------------------------------------------------------------- the scope


def test_a_signature_for_another_region_is_refused(sqs_server: SqsServer) -> None:
    body, headers = json_call("ListQueues", {})
    signed = sign(sqs_server, body, headers, region="ap-south-1")
    status, code, message = sqs_error(send(sqs_server, body, signed))
    assert (status, code) == (403, "SignatureDoesNotMatch")
    assert "'ap-south-1'" in message and f"'{REGION}'" in message
    # The same request signed for the server's region is accepted.
    assert send(sqs_server, body, sign(sqs_server, body, headers)).status_code == 200


def test_a_signature_for_another_service_is_refused(sqs_server: SqsServer) -> None:
    body, headers = json_call("ListQueues", {})
    signed = sign(sqs_server, body, headers, service="sns")
    status, code, message = sqs_error(send(sqs_server, body, signed))
    assert (status, code) == (403, "SignatureDoesNotMatch")
    assert "'sqs'" in message


# --------------------------------------------------------------------- enumeration


def test_a_bad_signature_does_not_tell_whether_the_key_exists(sqs_server: SqsServer) -> None:
    body, headers = json_call("ListQueues", {})
    answers = set()
    for key_id in (
        sqs_server.account,  # a real account and key, the wrong secret
        f"{sqs_server.account}.secondary",  # a real key by name
        f"{sqs_server.account}.no-such-key",  # a real account, no such key
        f"nobody-{uuid.uuid4().hex[:8]}",  # no such account
    ):
        signed = sign(sqs_server, body, headers, key_id=key_id, secret="not-the-secret")
        answers.add(sqs_error(send(sqs_server, body, signed)))
    assert len(answers) == 1, answers
    ((status, code, _),) = answers
    assert (status, code) == (403, "SignatureDoesNotMatch")


# --------------------------------------------------------------------- UTF-8


def _queue(server: SqsServer, prefix: str) -> str:
    url: str = server.client().create_queue(QueueName=new_name(prefix))["QueueUrl"]
    return url


def _empty(server: SqsServer, url: str) -> bool:
    return "Messages" not in server.client().receive_message(QueueUrl=url)


@pytest.mark.parametrize("in_query", [False, True])
def test_a_query_protocol_value_that_is_not_utf8_is_refused(
    sqs_server: SqsServer, in_query: bool
) -> None:
    url = _queue(sqs_server, "utf8")
    # Encoded as SDKs encode a query (botocore signs the query string as sent).
    params = (
        f"Action=SendMessage&QueueUrl={quote(url, safe='')}&MessageBody=caf%E9&Version=2012-11-05"
    )
    if in_query:
        body, query, headers = b"", params, {}
    else:
        body, query, headers = params.encode(), "", {"Content-Type": FORM_TYPE}
    response = send(sqs_server, body, sign(sqs_server, body, headers, query=query), query)
    status, code, message = sqs_error(response)
    assert (status, code) == (400, "InvalidParameterValue"), message
    assert "MessageBody" in message and "UTF-8" in message
    assert _empty(sqs_server, url)


def test_raw_bytes_that_are_not_utf8_in_a_form_body_are_refused(sqs_server: SqsServer) -> None:
    url = _queue(sqs_server, "raw")
    body = f"Action=SendMessage&QueueUrl={url}&MessageBody=caf".encode() + b"\xe9"
    headers = sign(sqs_server, body, {"Content-Type": FORM_TYPE})
    status, code, message = sqs_error(send(sqs_server, body, headers))
    assert (status, code) == (400, "InvalidParameterValue"), message
    assert "MessageBody" in message
    assert _empty(sqs_server, url)


def test_a_json_body_that_is_not_utf8_is_a_400_not_a_500(sqs_server: SqsServer) -> None:
    url = _queue(sqs_server, "json")
    body = b'{"QueueUrl": "' + url.encode() + b'", "MessageBody": "caf\xe9"}'
    _, headers = json_call("SendMessage", {})
    status, code, message = sqs_error(send(sqs_server, body, sign(sqs_server, body, headers)))
    assert (status, code) == (400, "SerializationException"), message
    assert "UTF-8" in message
    assert _empty(sqs_server, url)
