"""Requests signed by botocore's own SigV4 signers, turned into what the verifier sees."""

from __future__ import annotations

import datetime as dt
from unittest import mock
from urllib.parse import urlsplit

from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from cassieq.api.sqs.sigv4 import SignedRequest

NOW = dt.datetime(2026, 11, 23, 12, 0, 0, tzinfo=dt.UTC)


def signed(
    method: str,
    url: str,
    *,
    key_id: str,
    secret: str,
    body: bytes | dict[str, str] = b"",
    headers: dict[str, str] | None = None,
    at: dt.datetime = NOW,
    region: str = "us-east-1",
    service: str = "sqs",
    presign_expires: int | None = None,
) -> SignedRequest:
    request = AWSRequest(method=method, url=url, data=body, headers=headers or {})
    creds = Credentials(key_id, secret)
    signer = (
        SigV4Auth(creds, service, region)
        if presign_expires is None
        else SigV4QueryAuth(creds, service, region, expires=presign_expires)
    )
    # botocore reads the time through this function: the request is signed "at" that time.
    with mock.patch("botocore.auth.get_current_datetime", return_value=at.replace(tzinfo=None)):
        signer.add_auth(request)
    prepared = request.prepare()
    parts = urlsplit(prepared.url)
    host = parts.netloc
    hdrs = [(k.lower(), v) for k, v in prepared.headers.items()]
    if not any(k == "host" for k, _ in hdrs):
        hdrs.append(("host", host))  # what the HTTP client adds on the wire
    raw_body = prepared.body or b""
    return SignedRequest(
        method=prepared.method,
        raw_path=parts.path or "/",
        raw_query=parts.query,
        headers=hdrs,
        body=raw_body.encode() if isinstance(raw_body, str) else raw_body,
    )
