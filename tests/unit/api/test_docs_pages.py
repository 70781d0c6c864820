"""Swagger UI and ReDoc load nothing from another host, and the OpenAPI document says which
credentials each route takes (the browser test, tests/browser, renders them offline)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.store.memory import MemoryStore

# src= and href= of the page's own markup (the inlined OpenAPI document is JSON, not markup).
ASSET = re.compile(r"""<(?:script|link)[^>]*?(?:src|href)=["']([^"']+)["']""")


@pytest.fixture
def client() -> Iterator[TestClient[Litestar]]:
    with TestClient(create_app(Settings(), MemoryStore(), background=False)) as c:
        yield c


@pytest.mark.parametrize("page", ["/schema/swagger", "/schema/redoc"])
def test_docs_pages_load_only_local_assets(client: TestClient[Litestar], page: str) -> None:
    html = client.get(page)
    assert html.status_code == 200
    assets = ASSET.findall(html.text)
    assert assets, "the page loads no script at all"
    for asset in assets:
        assert asset.startswith("/schema/assets/"), asset
        served = client.get(asset)
        assert served.status_code == 200, asset
        assert len(served.content) > 1000, asset
    assert "fonts.googleapis" not in html.text


def test_asset_routes_do_not_leave_their_directory(client: TestClient[Litestar]) -> None:
    assert client.get("/schema/assets/redoc/..%2f..%2fdocs.py").status_code == 404
    assert client.get("/schema/assets/swagger/..%2f__init__.py").status_code == 404


def test_security_schemes_are_declared_and_attached(client: TestClient[Litestar]) -> None:
    doc = client.get("/schema/openapi.json").json()
    schemes = doc["components"]["securitySchemes"]
    assert schemes["Key"] == {
        "type": "apiKey", "name": "Authorization", "in": "header",
        "description": "An account key: enter `Key <key>`.",
    }  # fmt: skip
    assert schemes["Operator"]["scheme"] == "bearer"
    assert schemes["GrantSignature"]["in"] == "query"
    assert schemes["V2Date"]["name"] == "x-cassieq-date"
    ops = {(m, p): op for p, item in doc["paths"].items() for m, op in item.items()}
    v1_queue = ops[("get", "/api/v1/accounts/{account}/queues/{queue}")]["security"]
    assert {"Key": []} in v1_queue
    assert {"Signed": [], "SignedTime": []} in v1_queue
    assert {"GrantLevels": [], "GrantSignature": []} in v1_queue
    # The v2 signature is refused on v1 (frozen): it is offered on /api/v2 only.
    assert all("V2Signature" not in r for r in v1_queue)
    v2_send = ops[("post", "/api/v2/accounts/{account}/queues/{queue}/messages")]["security"]
    assert {"V2Signature": [], "V2Date": []} in v2_send
    assert ops[("post", "/api/v1/accounts")]["security"] == [{"Operator": []}]
    assert "security" not in ops[("get", "/health")]
    for (method, path), op in ops.items():
        if path.startswith("/api/"):
            assert op.get("security"), f"{method} {path} documents no credentials"
