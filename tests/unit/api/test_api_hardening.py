"""Review findings on the API, kept fixed: no open operator routes, no 500 from odd input,
no secrets echoed back, whole-name validation."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from cassieq.api.app import create_app
from cassieq.auth.access import admin_token_matches
from cassieq.config import Settings
from cassieq.store.base import LwtUndecided
from cassieq.store.memory import MemoryStore

TOKEN = "operator-token"
KEY = base64.urlsafe_b64encode(b"k" * 64).rstrip(b"=").decode()


@pytest.fixture
def client() -> Iterator[TestClient[Litestar]]:
    app = create_app(Settings(admin_token=TOKEN), MemoryStore(), background=False)
    with TestClient(app=app) as c:
        created = c.post(
            "/api/v1/accounts", json="acme", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert created.status_code == 201
        c.headers["Authorization"] = f"Key {created.json()['keys']['primary']}"
        assert c.post("/api/v1/accounts/acme/queues", json={"queueName": "q"}).status_code == 201
        yield c


def test_an_empty_operator_token_never_opens_the_operator_routes() -> None:
    assert Settings.from_env({"CASSIEQ_ADMIN_TOKEN": ""}).admin_token is None
    assert Settings.from_env({"CASSIEQ_ADMIN_TOKEN": "  "}).admin_token is None
    assert not admin_token_matches("Bearer ", "")
    assert not admin_token_matches("Bearer", "")
    assert not admin_token_matches("Bearer ", TOKEN)
    app = create_app(
        Settings.from_env({"CASSIEQ_ADMIN_TOKEN": ""}), MemoryStore(), background=False
    )
    with TestClient(app=app) as c:
        for header in ("Bearer", "Bearer ", ""):
            response = c.get("/api/v1/accounts", headers={"Authorization": header})
            assert response.status_code == 403, (header, response.text)


def test_non_utf8_json_is_a_422(client: TestClient[Litestar]) -> None:
    # An invalid body: 422 {"errors": [...]} (wire contract), never a 500.
    bad = b'{"queueName":"\xff"}'
    headers = {"content-type": "application/json"}
    assert (
        client.post("/api/v1/accounts/acme/queues", content=bad, headers=headers).status_code == 422
    )
    admin = {**headers, "Authorization": f"Bearer {TOKEN}"}
    assert client.post("/api/v1/accounts", content=b'"\xff"', headers=admin).status_code == 422
    assert client.post("/api/v1/permissions", content=bad, headers=admin).status_code == 422


def test_out_of_range_times_are_refused_not_crashed(client: TestClient[Litestar]) -> None:
    for when in ("0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"):
        signed = {"Authorization": "Signed x", "x-cassieq-request-time": when}
        assert client.get("/api/v1/accounts/acme/queues", headers=signed).status_code == 401
        grant = {"auth": "g", "sig": "x", "st": when}
        assert (
            client.get(
                "/api/v1/accounts/acme/queues", params=grant, headers={"Authorization": ""}
            ).status_code
            == 401
        )
        body = {"accountName": "acme", "keyName": "primary", "levels": ["r"], "startTime": when}
        issued = client.post(
            "/api/v1/permissions", json=body, headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert issued.status_code == 422  # an invalid body


def test_names_with_a_trailing_newline_are_refused(client: TestClient[Litestar]) -> None:
    assert (
        client.post("/api/v1/accounts/acme/queues", json={"queueName": "nl\n"}).status_code == 422
    )
    admin = {"Authorization": f"Bearer {TOKEN}"}
    assert client.post("/api/v1/accounts", json="nl\n", headers=admin).status_code == 422


def test_validation_errors_do_not_echo_the_query_string(client: TestClient[Litestar]) -> None:
    secret = "WyJzZWNyZXQtcmVjZWlwdCJd.SECRETSIG"
    response = client.put(
        "/api/v1/accounts/acme/queues/q/messages",
        params={"popReceipt": secret},
        json={"newInvisibilitySeconds": -1},
    )
    assert response.status_code == 422
    assert "newInvisibilitySeconds" in response.json()["errors"][0]
    assert "SECRETSIG" not in response.text


class _UndecidedAcks(MemoryStore):
    """The memory store, with every ack undecided (what the Cassandra store raises when an
    ack's LWT kept timing out under contention, or could not be read back)."""

    async def ack_message(self, *args: object, **kwargs: object) -> bool:
        raise LwtUndecided("ack_message", "still contended after 10 tries")


def test_an_undecided_lwt_is_a_503_never_a_stale_receipt() -> None:
    app = create_app(Settings(admin_token=TOKEN), _UndecidedAcks(), background=False)
    with TestClient(app=app) as c:
        admin = {"Authorization": f"Bearer {TOKEN}"}
        key = c.post("/api/v1/accounts", json="acme", headers=admin).json()["keys"]["primary"]
        c.headers["Authorization"] = f"Key {key}"
        assert c.post("/api/v1/accounts/acme/queues", json={"queueName": "q"}).status_code == 201
        assert c.post("/api/v1/accounts/acme/queues/q/messages", json="hi").status_code == 201
        got = c.get("/api/v1/accounts/acme/queues/q/messages/next")
        assert got.status_code == 200
        receipt = got.json()["popReceipt"]
        response = c.delete(
            "/api/v1/accounts/acme/queues/q/messages", params={"popReceipt": receipt}
        )
        assert response.status_code == 503
        assert response.headers["retry-after"] == "1"
        assert "ack_message" in response.json()["detail"]
