"""The three credential schemes, checked with signatures computed here, independently of
cassieq's own signing code, straight from the wire contract's text."""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import UTC, datetime, timedelta

import httpx

from tests.api.conftest import AccountCtx, Server


def b64url_decode(key: str) -> bytes:
    return base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))


def hmac_b64(key: str, text: str) -> str:
    mac = hmac.new(b64url_decode(key), text.encode("utf-8"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode().rstrip("=")


def when(offset_s: float = 0) -> str:
    return (datetime.now(UTC) + timedelta(seconds=offset_s)).strftime("%Y-%m-%dT%H:%M:%SZ")


def signed_headers(account: str, key: str, method: str, path: str, at: str) -> dict[str, str]:
    to_sign = f"{account}\n{method}\n/{path.strip('/')}\n{at}"
    return {"Authorization": f"Signed {hmac_b64(key, to_sign)}", "x-cassieq-request-time": at}


def grant(
    account: str,
    key: str,
    levels: str,
    st: str | None = None,
    et: str | None = None,
    q: str | None = None,
) -> dict[str, str]:
    lines = [account, levels]
    params = {"auth": levels}
    if st:
        lines.append(f"startTime:{st}")
        params["st"] = st
    if et:
        lines.append(f"endTime:{et}")
        params["et"] = et
    if q:
        lines.append(f"q:{q}")
        params["q"] = q
    params["sig"] = hmac_b64(key, "\n".join(lines))
    return params


def plain(server_url: str) -> httpx.Client:
    return httpx.Client(base_url=server_url, timeout=30)


def queue_path(account: AccountCtx, queue: str, suffix: str = "") -> str:
    return f"/api/v1/accounts/{account.name}/queues/{queue}{suffix}"


def setup_queues(account: AccountCtx) -> None:
    with account.client() as c:
        for name in ("a", "b"):
            assert c.post("/queues", json={"queueName": name}).status_code == 201


def test_key_scheme(account: AccountCtx) -> None:
    setup_queues(account)
    with account.client("primary") as c:
        assert c.get("/queues/a/statistics").status_code == 200
    with account.client("secondary") as c:
        assert c.get("/queues/a/statistics").status_code == 200
    with plain(account.url) as c:
        path = queue_path(account, "a", "/statistics")
        assert c.get(path).status_code == 401
        assert c.get(path, headers={"Authorization": "Key not-a-key"}).status_code == 401
        assert c.get(path, headers={"Authorization": "Bearer x"}).status_code == 401
        other = "api-nonexistent-account"
        assert (
            c.get(
                f"/api/v1/accounts/{other}/queues",
                headers={"Authorization": f"Key {account.keys['primary']}"},
            ).status_code
            == 401
        )


def test_signed_scheme_with_any_key_and_within_the_skew(account: AccountCtx) -> None:
    setup_queues(account)
    path = queue_path(account, "a", "/messages")
    with plain(account.url) as c:
        for key in ("primary", "secondary"):
            headers = signed_headers(account.name, account.keys[key], "POST", path, when())
            assert c.post(path, content=b"m", headers=headers).status_code == 201
        # Trailing slashes are trimmed before signing; an ISO offset time is accepted too.
        at = (datetime.now(UTC)).astimezone().replace(microsecond=0).isoformat()
        canonical = datetime.fromisoformat(at).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        to_sign = f"{account.name}\nGET\n/{path.strip('/')}/next\n{canonical}"
        headers = {
            "Authorization": f"Signed {hmac_b64(account.keys['primary'], to_sign)}",
            "x-cassieq-request-time": at,
        }
        assert c.get(path + "/next", headers=headers).status_code == 200

        wrong_key = base64.urlsafe_b64encode(b"w" * 64).decode().rstrip("=")
        assert (
            c.post(
                path,
                content=b"m",
                headers=signed_headers(account.name, wrong_key, "POST", path, when()),
            ).status_code
            == 401
        )
        # Signed for another method or path: invalid.
        assert (
            c.post(
                path,
                content=b"m",
                headers=signed_headers(account.name, account.keys["primary"], "GET", path, when()),
            ).status_code
            == 401
        )
        late = signed_headers(account.name, account.keys["primary"], "POST", path, when(-120))
        assert c.post(path, content=b"m", headers=late).status_code == 401
        early = signed_headers(account.name, account.keys["primary"], "POST", path, when(+120))
        assert c.post(path, content=b"m", headers=early).status_code == 401
        no_time = {
            "Authorization": signed_headers(
                account.name, account.keys["primary"], "POST", path, when()
            )["Authorization"]
        }
        assert c.post(path, content=b"m", headers=no_time).status_code == 401
        bad_time = {**no_time, "x-cassieq-request-time": "yesterday"}
        assert c.post(path, content=b"m", headers=bad_time).status_code == 401


def test_signed_query_strings(account: AccountCtx) -> None:
    setup_queues(account)
    key = account.keys["primary"]
    with plain(account.url) as c:
        put_a = queue_path(account, "a", "/messages")
        put_b = queue_path(account, "b", "/messages")
        rpa_a = grant(account.name, key, "rpa", q="a")
        assert c.post(put_a, content=b"m", params=rpa_a).status_code == 201
        got = c.get(put_a + "/next", params=rpa_a)
        assert got.status_code == 200
        receipt = got.json()["popReceipt"]
        assert c.delete(put_a, params={**rpa_a, "popReceipt": receipt}).status_code == 204

        read_only = grant(account.name, key, "r")
        assert c.post(put_a, content=b"m", params=read_only).status_code == 403
        assert (
            c.post(put_b, content=b"m", params=rpa_a).status_code == 401
        )  # scoped to a: unverifiable for b
        assert (
            c.get(queue_path(account, "a", "/statistics"), params=rpa_a).status_code == 403
        )  # no g

        not_yet = grant(account.name, key, "p", st=when(+3600))
        assert c.post(put_a, content=b"m", params=not_yet).status_code == 401
        expired = grant(account.name, key, "p", et=when(-3600))
        assert c.post(put_a, content=b"m", params=expired).status_code == 401
        window = grant(account.name, key, "p", st=when(-60), et=when(+3600), q="a")
        assert c.post(put_a, content=b"m", params=window).status_code == 201

        forged = {**rpa_a, "auth": "rpad"}  # widened levels: the signature no longer matches
        assert c.post(put_a, content=b"m", params=forged).status_code == 401
        assert c.post(put_a, content=b"m", params={"auth": "p"}).status_code == 401
        assert c.post(put_a, content=b"m", params={**rpa_a, "auth": "rpz"}).status_code == 401


def test_issued_grant_matches_the_contract(account: AccountCtx, server: Server) -> None:
    setup_queues(account)
    st, et = when(-10), when(+600)
    body = {
        "accountName": account.name,
        "keyName": "secondary",
        "levels": ["PutMessage", "r"],
        "startTime": st,
        "endTime": et,
        "queueName": "a",
    }
    with server.admin() as admin:
        issued = admin.post("/api/v1/permissions", json=body)
    assert issued.status_code == 201
    params = grant(account.name, account.keys["secondary"], "rp", st=st, et=et, q="a")
    # CassieQ's order (auth, q, st, et, sig), the values not percent-encoded.
    order = ("auth", "q", "st", "et", "sig")
    assert issued.json()["queryParam"] == "&".join(f"{k}={params[k]}" for k in order)
    with plain(account.url) as c:
        path = queue_path(account, "a", "/messages") + "?" + issued.json()["queryParam"]
        assert c.post(path, content=b"m").status_code == 201


def test_deleted_key_stops_working_while_the_other_keeps_working(
    account: AccountCtx, server: Server
) -> None:
    setup_queues(account)
    path = queue_path(account, "a", "/statistics")
    primary, secondary = account.keys["primary"], account.keys["secondary"]
    with server.admin() as admin:
        assert admin.delete(f"/api/v1/accounts/{account.name}/keys/secondary").status_code == 204
    with plain(account.url) as c:
        assert c.get(path, headers={"Authorization": f"Key {secondary}"}).status_code == 401
        assert (
            c.get(
                path, headers=signed_headers(account.name, secondary, "GET", path, when())
            ).status_code
            == 401
        )
        assert c.get(path, params=grant(account.name, secondary, "g")).status_code == 401
        assert c.get(path, headers={"Authorization": f"Key {primary}"}).status_code == 200
        assert (
            c.get(
                path, headers=signed_headers(account.name, primary, "GET", path, when())
            ).status_code
            == 200
        )
        assert c.get(path, params=grant(account.name, primary, "g")).status_code == 200
