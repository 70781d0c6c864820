"""The SQS route end to end: boto3 (and raw signed HTTP for the query protocol) against a
running app on both stores, with trivial actions registered for the test."""

from __future__ import annotations

import datetime
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import botocore.auth
import httpx
import pytest
from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from cassieq.api.sqs.actions import messages, queues
from cassieq.api.sqs.context import SqsCall
from cassieq.api.sqs.dispatch import is_sqs
from cassieq.api.sqs.model import XML_NAMESPACE
from cassieq.api.sqs.route import MAX_BODY_BYTES
from cassieq.engine.errors import Contention
from tests.sqs.conftest import SqsServer

NS = {"q": XML_NAMESPACE}


async def list_queues(call: SqsCall) -> dict[str, Any]:
    prefix = call.params.get("QueueNamePrefix", "")
    return {"QueueUrls": [f"{call.base_url}/{call.account}/{prefix}echo-{call.key_name}"]}


async def get_queue_attributes(call: SqsCall) -> dict[str, Any]:
    # Echoes what the endpoint decoded, so the test sees the call as the handler does.
    return {
        "Attributes": {
            "QueueUrl": call.params["QueueUrl"],
            "Names": ",".join(call.params.get("AttributeNames", [])),
            "Region": call.region,
            "Protocol": call.protocol,
        }
    }


async def broken(call: SqsCall) -> dict[str, Any]:
    raise RuntimeError("a bug in an action")


async def contended(call: SqsCall) -> dict[str, Any]:
    raise Contention("the store did not settle")


@pytest.fixture(autouse=True)
def trivial_actions(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(queues.ACTIONS, "ListQueues", list_queues)
    monkeypatch.setitem(queues.ACTIONS, "GetQueueAttributes", get_queue_attributes)
    monkeypatch.setitem(messages.ACTIONS, "PurgeQueue", broken)
    monkeypatch.setitem(queues.ACTIONS, "DeleteQueue", contended)
    # An action of SQS's model nobody registered here answers UnsupportedOperation.
    monkeypatch.delitem(queues.ACTIONS, "AddPermission", raising=False)
    monkeypatch.delitem(messages.ACTIONS, "AddPermission", raising=False)
    yield


def test_boto3_json_protocol(sqs_server: SqsServer) -> None:
    client = sqs_server.client()
    answer = client.list_queues(QueueNamePrefix="p-")
    assert answer["QueueUrls"] == [f"{sqs_server.base}/{sqs_server.account}/p-echo-primary"]
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert answer["ResponseMetadata"]["RequestId"]
    attrs = client.get_queue_attributes(
        QueueUrl=f"{sqs_server.base}/{sqs_server.account}/q", AttributeNames=["All"]
    )["Attributes"]
    assert attrs == {
        "QueueUrl": f"{sqs_server.base}/{sqs_server.account}/q",
        "Names": "All",
        "Region": "eu-west-1",
        "Protocol": "json",
    }


def test_another_key_by_account_dot_key_name(sqs_server: SqsServer) -> None:
    client = sqs_server.client(f"{sqs_server.account}.secondary", sqs_server.keys["secondary"])
    assert client.list_queues()["QueueUrls"][0].endswith("echo-secondary")
    # The primary key's secret does not sign for the secondary key.
    wrong = sqs_server.client(f"{sqs_server.account}.secondary", sqs_server.keys["primary"])
    assert _code(lambda: wrong.list_queues()) == ("SignatureDoesNotMatch", 403)


def test_boto3_sees_sqs_error_codes(sqs_server: SqsServer) -> None:
    assert _code(lambda: sqs_server.client(secret="wrong").list_queues()) == (
        "SignatureDoesNotMatch",
        403,
    )
    # An access key id that names no key is answered as a wrong signature: keys and
    # accounts cannot be probed (#40).
    assert _code(lambda: sqs_server.client(key_id="nobody-here").list_queues()) == (
        "SignatureDoesNotMatch",
        403,
    )
    client = sqs_server.client()
    queue_url = f"{sqs_server.base}/{sqs_server.account}/q"
    assert _code(
        lambda: client.add_permission(
            QueueUrl=queue_url, Label="l", AWSAccountIds=["1"], Actions=["SendMessage"]
        )
    ) == ("AWS.SimpleQueueService.UnsupportedOperation", 400)
    # A bug in an action is an SQS-shaped 500, never a framework page.
    assert _code(lambda: client.purge_queue(QueueUrl=queue_url)) == ("InternalError", 500)
    assert _code(lambda: client.delete_queue(QueueUrl=queue_url)) == ("ServiceUnavailable", 503)


def test_query_protocol_form_post_and_queue_url_path(sqs_server: SqsServer) -> None:
    form = {"Action": "ListQueues", "Version": "2012-11-05", "QueueNamePrefix": "x"}
    answer = _signed(sqs_server, "POST", "/", body=form)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/xml")
    root = ET.fromstring(answer.content)
    urls = [e.text for e in root.findall("q:ListQueuesResult/q:QueueUrl", NS)]
    assert urls == [f"{sqs_server.base}/{sqs_server.account}/xecho-primary"]
    assert root.findtext("q:ResponseMetadata/q:RequestId", namespaces=NS)
    # Posted to the queue URL: that is the QueueUrl parameter.
    path = f"/{sqs_server.account}/my-queue"
    form = {"Action": "GetQueueAttributes", "AttributeName.1": "All", "AttributeName.2": "x"}
    answer = _signed(sqs_server, "POST", path, body=form)
    assert answer.status_code == 200, answer.text
    attrs = {
        a.findtext("q:Name", namespaces=NS): a.findtext("q:Value", namespaces=NS)
        for a in ET.fromstring(answer.content).findall("q:GetQueueAttributesResult/q:Attribute", NS)
    }
    assert attrs["QueueUrl"] == sqs_server.base + path
    assert attrs["Names"] == "All,x"
    assert attrs["Protocol"] == "query"


def test_query_protocol_presigned_get(sqs_server: SqsServer) -> None:
    url = f"{sqs_server.base}/?" + urlencode({"Action": "ListQueues", "Version": "2012-11-05"})
    request = AWSRequest(method="GET", url=url)
    SigV4QueryAuth(
        Credentials(sqs_server.account, sqs_server.keys["primary"]), "sqs", "eu-west-1", 60
    ).add_auth(request)
    answer = httpx.get(request.url, timeout=10)
    assert answer.status_code == 200, answer.text
    assert b"echo-primary" in answer.content
    tampered = httpx.get(request.url.replace("ListQueues", "PurgeQueue"), timeout=10)
    assert tampered.status_code == 403
    assert _xml_code(tampered) == "SignatureDoesNotMatch"


def test_an_expired_presigned_url_is_refused(
    sqs_server: SqsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Signed ten minutes ago for 60 s (botocore takes its signing time from this function).
    signed_at = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    signed_at -= datetime.timedelta(minutes=10)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: signed_at)
    url = f"{sqs_server.base}/?" + urlencode({"Action": "ListQueues", "Version": "2012-11-05"})
    request = AWSRequest(method="GET", url=url)
    SigV4QueryAuth(
        Credentials(sqs_server.account, sqs_server.keys["primary"]), "sqs", "eu-west-1", 60
    ).add_auth(request)
    answer = httpx.get(request.url, timeout=10)
    assert answer.status_code == 400, answer.text
    assert _xml_code(answer) == "RequestExpired"


def test_query_errors_are_xml(sqs_server: SqsServer) -> None:
    unsigned = httpx.post(
        sqs_server.base + "/",
        content=b"Action=ListQueues",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        timeout=10,
    )
    assert (unsigned.status_code, _xml_code(unsigned)) == (403, "MissingAuthenticationToken")
    unknown = _signed(sqs_server, "POST", "/", body={"Action": "FlyToTheMoon"})
    assert (unknown.status_code, _xml_code(unknown)) == (400, "InvalidAction")
    missing = _signed(sqs_server, "POST", "/", body={"Version": "2012-11-05"})
    assert (missing.status_code, _xml_code(missing)) == (400, "MissingAction")
    bad_int = _signed(sqs_server, "POST", "/", body={"Action": "ListQueues", "MaxResults": "many"})
    assert (bad_int.status_code, _xml_code(bad_int)) == (400, "InvalidParameterValue")
    get_unsigned = httpx.get(sqs_server.base + "/?Action=ListQueues", timeout=10)
    assert (get_unsigned.status_code, _xml_code(get_unsigned)) == (
        403,
        "MissingAuthenticationToken",
    )


@pytest.mark.parametrize(
    ("body", "target", "status", "code"),
    [
        (b"{not json", "AmazonSQS.ListQueues", 400, "SerializationException"),
        (b'{"QueueNamePrefix": 5}', "AmazonSQS.ListQueues", 400, "SerializationException"),
        (b"{}", "AmazonSQS.NoSuchThing", 400, "InvalidAction"),
        (b"{}", "Other.ListQueues", 400, "UnknownOperationException"),
        (b"[" * 100_000, "AmazonSQS.ListQueues", 400, "SerializationException"),
    ],
)
def test_bad_json_requests_are_sqs_errors(
    sqs_server: SqsServer, body: bytes, target: str, status: int, code: str
) -> None:
    answer = _signed(
        sqs_server,
        "POST",
        "/",
        raw=body,
        headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": target},
    )
    assert answer.status_code == status, answer.text
    assert answer.json()["__type"].endswith("#" + code)
    assert answer.headers["x-amzn-query-error"].endswith(";Sender")


def test_body_limit_is_an_sqs_error(sqs_server: SqsServer) -> None:
    # 5 MiB: a 1 MiB message escaped by JSON or percent-encoded is up to 4 MiB (#39 item 12).
    assert MAX_BODY_BYTES == 5 * 1024 * 1024
    answer = httpx.post(
        sqs_server.base + "/",
        content=b"{" + b" " * MAX_BODY_BYTES + b"}",
        headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "AmazonSQS.ListQueues",
        },
        timeout=30,
    )
    assert answer.status_code == 413
    assert answer.json()["__type"].endswith("#RequestEntityTooLarge")


def test_other_routes_are_not_shadowed(sqs_server: SqsServer) -> None:
    root = httpx.get(sqs_server.base + "/", timeout=10)
    assert root.status_code == 200
    assert "text/html" in root.headers["content-type"]
    assert httpx.get(sqs_server.base + "/health", timeout=10).json()["status"] == "ok"
    # A two-segment path that is no route stays a 404 (CassieQ's shape), and the v1 API
    # answers under its own paths.
    missing = httpx.post(sqs_server.base + "/nothing/here", json={}, timeout=10)
    assert missing.status_code in (404, 405)
    assert "__type" not in missing.text
    v1 = httpx.get(
        f"{sqs_server.base}/api/v1/accounts/{sqs_server.account}/queues",
        headers={"Authorization": f"Key {sqs_server.keys['primary']}"},
        timeout=10,
    )
    assert v1.status_code == 200, v1.text
    schema = httpx.get(sqs_server.base + "/schema/openapi.json", timeout=10).json()
    assert "/_sqs" not in schema["paths"]


def _signed(
    server: SqsServer,
    method: str,
    path: str,
    *,
    body: dict[str, str] | None = None,
    raw: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    all_headers = dict(headers or {})
    data = raw
    if body is not None:
        data = urlencode(body).encode()
        all_headers["Content-Type"] = "application/x-www-form-urlencoded; charset=utf-8"
    request = AWSRequest(method=method, url=server.base + path, data=data, headers=all_headers)
    SigV4Auth(Credentials(server.account, server.keys["primary"]), "sqs", "eu-west-1").add_auth(
        request
    )
    prepared = request.prepare()
    return httpx.request(
        method, prepared.url, content=prepared.body, headers=dict(prepared.headers), timeout=30
    )


def _code(call: Any) -> tuple[str, int]:
    with pytest.raises(ClientError) as caught:
        call()
    error = caught.value.response
    return error["Error"]["Code"], error["ResponseMetadata"]["HTTPStatusCode"]


def _xml_code(answer: httpx.Response) -> str | None:
    return ET.fromstring(answer.content).findtext("q:Error/q:Code", namespaces=NS)


@pytest.mark.parametrize(
    ("method", "path", "query", "headers", "expected"),
    [
        ("POST", b"/", b"", [(b"x-amz-target", b"AmazonSQS.ListQueues")], True),
        ("POST", b"/", b"", [(b"content-type", b"application/x-www-form-urlencoded")], True),
        ("GET", b"/", b"Action=ListQueues", [], True),
        ("GET", b"/", b"", [], False),
        ("GET", b"/a/q", b"X-Amz-Credential=x", [], True),
        ("POST", b"/a/q", b"", [(b"authorization", b"AWS4-HMAC-SHA256 Credential=x")], True),
        ("POST", b"/a/q", b"", [(b"content-type", b"application/x-www-form-urlencoded")], False),
        ("POST", b"/admin/accounts", b"", [(b"authorization", b"Bearer t")], False),
        ("POST", b"/api/v1/x", b"", [(b"x-amz-target", b"AmazonSQS.ListQueues")], False),
        ("PUT", b"/", b"", [(b"x-amz-target", b"AmazonSQS.ListQueues")], False),
    ],
)
def test_which_requests_are_sqs(
    method: str, path: bytes, query: bytes, headers: list[tuple[bytes, bytes]], expected: bool
) -> None:
    scope: Any = {
        "type": "http",
        "method": method,
        "path": path.decode(),
        "raw_path": path,
        "query_string": query,
        "headers": headers,
    }
    assert is_sqs(scope) is expected
