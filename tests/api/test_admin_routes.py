"""Operator routes: accounts, keys, permissions, levels, debug; and the operator token."""

from __future__ import annotations

import uuid

import httpx

from tests.api.conftest import AccountCtx, Server


def test_operator_token_is_required(server: Server) -> None:
    with httpx.Client(base_url=server.url) as c:
        assert c.get("/api/v1/accounts").status_code == 401
        assert (
            c.get("/api/v1/accounts", headers={"Authorization": "Bearer wrong"}).status_code == 401
        )
        assert c.post("/api/v1/permissions", json={}).status_code == 401
        assert c.get("/api/v1/debug/accounts/x/queues").status_code == 401


def test_account_lifecycle(server: Server) -> None:
    name = f"adm-{uuid.uuid4().hex[:10]}"
    with server.admin() as c:
        created = c.post("/api/v1/accounts", json={"accountName": name})
        assert created.status_code == 201
        keys = created.json()["keys"]
        assert set(keys) == {"primary", "secondary"}
        assert all(len(k) == 86 and "=" not in k for k in keys.values())  # 64 bytes, base64url
        assert c.post("/api/v1/accounts", json=name).status_code == 409
        assert c.get(f"/api/v1/accounts/{name}").json() == {"accountName": name, "keys": keys}
        assert name in [a["accountName"] for a in c.get("/api/v1/accounts").json()]
        assert c.post("/api/v1/accounts", json="bad name!").status_code == 422
        assert (
            c.post(
                "/api/v1/accounts", content=b"[1,2]", headers={"content-type": "application/json"}
            ).status_code
            == 422
        )
        assert c.delete(f"/api/v1/accounts/{name}").status_code == 204
        assert c.get(f"/api/v1/accounts/{name}").status_code == 404


def test_keys(server: Server, account: AccountCtx) -> None:
    with server.admin() as c:
        added = c.post(f"/api/v1/accounts/{account.name}/keys", json={"keyName": "ci"})
        assert added.status_code == 201
        key = added.json()
        assert isinstance(key, str) and len(key) == 86
        assert (
            c.post(f"/api/v1/accounts/{account.name}/keys", json={"keyName": "ci"}).status_code
            == 409
        )
        assert (
            c.post("/api/v1/accounts/nobody-here/keys", json={"keyName": "ci"}).status_code == 404
        )
        assert c.delete(f"/api/v1/accounts/{account.name}/keys/nope").status_code == 404
    with httpx.Client(base_url=server.url) as plain:
        path = f"/api/v1/accounts/{account.name}/queues"
        assert plain.get(path, headers={"Authorization": f"Key {key}"}).status_code == 200


def test_permissions_and_levels(server: Server, account: AccountCtx) -> None:
    with server.admin() as c:
        levels = c.get("/api/v1/permissions/supportedAuthorizationLevels").json()
        assert {"level": "ReadMessage", "shortForm": "r"} in levels
        assert [lv["shortForm"] for lv in levels] == list("nrpuagcd")
        unknown_key = {"accountName": account.name, "keyName": "nope", "levels": ["r"]}
        assert c.post("/api/v1/permissions", json=unknown_key).status_code == 404
        unknown_account = {"accountName": "nobody-here", "keyName": "primary", "levels": ["r"]}
        assert c.post("/api/v1/permissions", json=unknown_account).status_code == 404
        bad_level = {"accountName": account.name, "keyName": "primary", "levels": ["Fly"]}
        assert c.post("/api/v1/permissions", json=bad_level).status_code == 422


def test_debug_routes(server: Server, account: AccountCtx) -> None:
    with account.client() as q:
        q.post("/queues", json={"queueName": "dbg", "bucketSize": 2})
        for i in range(3):
            q.post("/queues/dbg/messages", content=f"m{i}".encode())
        q.get("/queues/dbg/messages/next")
    base = f"/api/v1/debug/accounts/{account.name}/queues"
    with server.admin() as c:
        assert [x["queueName"] for x in c.get(base).json()] == ["dbg"]
        current = c.get(f"{base}/dbg/buckets/current/messages").json()
        assert [m["monoton"] for m in current] == [0, 1]
        # One of the two was delivered (a queue picks at random within a bucket by default).
        assert sorted(m["deliveryCount"] for m in current) == [0, 1]
        assert [m["message"] for m in c.get(f"{base}/dbg/buckets/1/messages").json()] == ["m2"]
        assert c.get(f"{base}/dbg/messages/2").json()["message"] == "m2"
        assert c.get(f"{base}/dbg/messages/99").status_code == 404
        assert c.get(f"{base}/dbg/monotons/current").json() == {"value": 3}
        pointers = c.get(f"{base}/dbg/pointers").json()
        assert pointers == {
            "reader": 0,
            "repair": 0,
            "invisibility": 0,
            "stragglers": {},
            "invisibilityLag": 0,
            "repairLag": 0,
        }
        assert c.get(f"{base}/dbg/buckets/0/tombstone").status_code == 404  # not sealed yet
        assert c.get(f"{base}/nope/pointers").status_code == 404
