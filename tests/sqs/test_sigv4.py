"""The SigV4 verifier against requests signed by botocore itself, and tampered ones."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections.abc import Sequence
from typing import Any

import pytest

from cassieq.api.sqs.errors import SqsError
from cassieq.api.sqs.sigv4 import Secret, SignedRequest, Verified, verify
from tests.sqs.signing import NOW, signed

SECRET = "s3cr3t-key_value"
URL = "http://127.0.0.1:9324/"
BODY = b'{"QueueNamePrefix": "a"}'
JSON_HEADERS = {
    "Content-Type": "application/x-amz-json-1.0",
    "X-Amz-Target": "AmazonSQS.ListQueues",
}


async def lookup(access_key_id: str) -> Sequence[Secret]:
    if access_key_id == "acme":
        return [Secret("acme", "primary", SECRET)]
    return []


async def check(req: SignedRequest, now: dt.datetime = NOW, region: str = "us-east-1") -> Verified:
    return await verify(req, lookup, now, region=region)


async def refused(
    req: SignedRequest, now: dt.datetime = NOW, region: str = "us-east-1"
) -> SqsError:
    with pytest.raises(SqsError) as caught:
        await check(req, now, region)
    return caught.value


def header_signed(**kw: Any) -> SignedRequest:
    args: dict[str, Any] = {
        "key_id": "acme",
        "secret": SECRET,
        "body": BODY,
        "headers": dict(JSON_HEADERS),
    }
    args.update(kw)
    return signed("POST", str(args.pop("url", URL)), **args)


async def test_botocore_header_signature_is_accepted() -> None:
    verified = await check(header_signed(region="eu-west-3"), region="eu-west-3")
    assert verified == Verified("acme", "primary", "eu-west-3", "acme")
    # Signed for another region than the server's: refused (#40), naming both.
    error = await refused(header_signed(region="eu-west-3"), region="us-east-1")
    assert (error.code, error.status) == ("SignatureDoesNotMatch", 403)
    assert "'eu-west-3'" in error.message and "'us-east-1'" in error.message


async def test_query_protocol_form_post_with_queue_path_is_accepted() -> None:
    req = header_signed(
        url="http://localhost:9324/acme/my%2Dqueue/./x/../",
        body=b"Action=SendMessage&MessageBody=hello+world%21&Version=2012-11-05",
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
    )
    assert (await check(req)).account == "acme"


async def test_get_with_query_parameters_is_accepted() -> None:
    req = signed(
        "GET",
        URL + "?Action=ListQueues&QueueNamePrefix=a%20b~c&Version=2012-11-05&Empty=",
        key_id="acme",
        secret=SECRET,
    )
    assert (await check(req)).key_name == "primary"


@pytest.mark.parametrize(
    "change",
    [
        "body",
        "method",
        "path",
        "query",
        "signed_header",
        "signature_case",
    ],
)
async def test_tampered_requests_are_refused(change: str) -> None:
    req = header_signed(url=URL + "?Version=2012-11-05")
    if change == "body":
        req = dataclasses.replace(req, body=BODY.replace(b'"a"', b'"b"'))
    elif change == "method":
        req = dataclasses.replace(req, method="PUT")
    elif change == "path":
        req = dataclasses.replace(req, raw_path="/acme/q")
    elif change == "query":
        req = dataclasses.replace(req, raw_query="Version=2012-11-06")
    elif change == "signed_header":
        req = dataclasses.replace(
            req,
            headers=[
                (k, "AmazonSQS.DeleteQueue" if k == "x-amz-target" else v) for k, v in req.headers
            ],
        )
    else:
        auth = req.header("authorization") or ""
        head, _, sig = auth.rpartition("Signature=")
        req = _with_header(req, "authorization", head + "Signature=" + sig.upper())
    error = await refused(req)
    assert (error.code, error.status) == ("SignatureDoesNotMatch", 403)


async def test_wrong_secret_and_unknown_key_get_the_same_answer() -> None:
    wrong = await refused(header_signed(secret="not-the-secret"))
    unknown = await refused(header_signed(key_id="nobody"))
    # The same code, words and status: which access key ids exist cannot be probed (#40).
    assert (wrong.code, wrong.message, wrong.status) == (
        unknown.code,
        unknown.message,
        unknown.status,
    )
    assert (wrong.code, wrong.status) == ("SignatureDoesNotMatch", 403)


async def test_no_credentials_is_missing_authentication_token() -> None:
    req = SignedRequest("POST", "/", "", [("host", "h")], b"")
    error = await refused(req)
    assert (error.code, error.status) == ("MissingAuthenticationToken", 403)


@pytest.mark.parametrize(
    ("authorization", "problem"),
    [
        ("AWS4-HMAC-SHA1 Credential=a/b/c/d/e", "Unsupported authorization type"),
        ("AWS4-HMAC-SHA256 SignedHeaders=host, Signature=00", "'Credential'"),
        ("AWS4-HMAC-SHA256 Credential=acme/x, SignedHeaders=host, Signature=00", "Credential must"),
        (
            "AWS4-HMAC-SHA256 Credential=acme/20261123/r/sqs/aws4_request, "
            "SignedHeaders=x-amz-date, Signature=00",
            "'Host'",
        ),
        ("Bearer abc", "Unsupported authorization type"),
    ],
)
async def test_malformed_authorization_is_incomplete_signature(
    authorization: str, problem: str
) -> None:
    req = _with_header(header_signed(), "authorization", authorization)
    error = await refused(req)
    assert (error.code, error.status) == ("IncompleteSignature", 400)
    assert problem in error.message


@pytest.mark.parametrize(
    ("scope_change", "problem"),
    [
        ("/sqs/aws4_request", "/s3/aws4_request"),
        ("/sqs/aws4_request", "/sqs/aws5_request"),
        ("20261123/", "20261122/"),
    ],
)
async def test_wrong_scope_is_refused_with_the_reason(scope_change: str, problem: str) -> None:
    req = header_signed()
    auth = (req.header("authorization") or "").replace(scope_change, problem)
    error = await refused(_with_header(req, "authorization", auth))
    assert error.code == "SignatureDoesNotMatch"
    assert "Credential" in error.message


async def test_clock_skew_of_fifteen_minutes_either_way() -> None:
    req = header_signed()
    assert await check(req, NOW + dt.timedelta(minutes=15))
    assert await check(req, NOW - dt.timedelta(minutes=15))
    late = await refused(req, NOW + dt.timedelta(minutes=15, seconds=1))
    assert late.code == "SignatureDoesNotMatch"
    assert late.message.startswith("Signature expired: 20261123T120000Z is now earlier than")
    early = await refused(req, NOW - dt.timedelta(minutes=15, seconds=1))
    assert early.message.startswith("Signature not yet current")


async def test_date_header_instead_of_x_amz_date() -> None:
    req = header_signed(headers={**JSON_HEADERS, "Date": "Mon, 23 Nov 2026 12:00:00 GMT"})
    assert req.header("x-amz-date") is None
    assert await check(req)
    assert (await refused(req, NOW + dt.timedelta(hours=1))).code == "SignatureDoesNotMatch"


async def test_content_sha256_header_must_match_the_body() -> None:
    req = header_signed(headers={**JSON_HEADERS, "X-Amz-Content-SHA256": "UNSIGNED-PAYLOAD"})
    # Unsigned payload: refused (#40), else a capture would work with any body.
    unsigned = await refused(dataclasses.replace(req, body=b"{}"))
    assert (unsigned.code, unsigned.status) == ("SignatureDoesNotMatch", 403)
    assert "UNSIGNED-PAYLOAD" in unsigned.message
    hashed = header_signed(
        headers={**JSON_HEADERS, "X-Amz-Content-SHA256": hashlib.sha256(BODY).hexdigest()}
    )
    assert await check(hashed)
    wrong = header_signed(headers={**JSON_HEADERS, "X-Amz-Content-SHA256": "ab" * 32})
    error = await refused(wrong)
    assert "x-amz-content-sha256" in error.message


async def test_presigned_url_within_and_past_its_expiry() -> None:
    req = signed(
        "GET",
        URL + "?Action=ListQueues&Version=2012-11-05",
        key_id="acme",
        secret=SECRET,
        presign_expires=300,
    )
    assert req.header("authorization") is None
    assert "X-Amz-Signature=" in req.raw_query
    assert (await check(req, NOW + dt.timedelta(seconds=300))).account == "acme"
    error = await refused(req, NOW + dt.timedelta(seconds=301))
    assert (error.code, error.status) == ("RequestExpired", 400)
    assert "Request has expired" in error.message
    tampered = dataclasses.replace(req, raw_query=req.raw_query.replace("ListQueues", "PurgeQueue"))
    assert (await refused(tampered)).code == "SignatureDoesNotMatch"


async def test_presigned_post_form_body_moves_into_the_query() -> None:
    req = signed(
        "POST",
        URL,
        key_id="acme",
        secret=SECRET,
        body={"Action": "ListQueues", "Version": "2012-11-05"},
        presign_expires=60,
    )
    assert "Action=ListQueues" in req.raw_query
    assert await check(req)


@pytest.mark.parametrize(
    ("expires", "accepted"), [(604800, True), (604801, False), ("-1", False), ("1e3", False)]
)
async def test_presigned_expiry_is_at_most_seven_days(expires: object, accepted: bool) -> None:
    if isinstance(expires, int):
        req = signed("GET", URL, key_id="acme", secret=SECRET, presign_expires=expires)
    else:
        req = signed("GET", URL, key_id="acme", secret=SECRET, presign_expires=60)
        req = dataclasses.replace(
            req, raw_query=req.raw_query.replace("X-Amz-Expires=60", f"X-Amz-Expires={expires}")
        )
    if accepted:
        assert await check(req, NOW + dt.timedelta(days=7))
    else:
        error = await refused(req)
        assert (error.code, error.status) == ("IncompleteSignature", 400)
        assert "X-Amz-Expires" in error.message


async def test_header_and_query_auth_together_are_refused() -> None:
    req = signed("GET", URL, key_id="acme", secret=SECRET, presign_expires=60)
    req = _with_header(req, "authorization", "AWS4-HMAC-SHA256 Credential=x")
    assert (await refused(req)).code == "InvalidParameterCombination"


def _with_header(req: SignedRequest, name: str, value: str) -> SignedRequest:
    others = [(k, v) for k, v in req.headers if k != name]
    return dataclasses.replace(req, headers=[*others, (name, value)])
