"""A real app on a socket (uvicorn in a thread) on both stores, with an account, for
boto3 / raw HTTP clients of the SQS endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from botocore.config import Config

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.store.base import Store
from tests.api.live import served
from tests.conftest import STORES, open_store
from tests.sqs.live_sqs import LiveSqs, live_sqs, new_account

TOKEN = "sqs-test-operator-token"


@dataclass(frozen=True)
class SqsServer:
    base: str
    account: str
    keys: dict[str, str]

    def client(self, key_id: str | None = None, secret: str | None = None) -> Any:
        return boto3.client(
            "sqs",
            endpoint_url=self.base,
            region_name="eu-west-1",
            aws_access_key_id=key_id or self.account,
            aws_secret_access_key=secret or self.keys["primary"],
            config=Config(retries={"max_attempts": 1, "mode": "standard"}),
        )


@pytest.fixture(scope="module", params=STORES)
def sqs_store(request: pytest.FixtureRequest) -> Store:
    """The two stores, once per module (the `store` fixture is once per test)."""
    return open_store(request.param, request)


@pytest.fixture(scope="module")
def sqs_server(sqs_store: Store) -> Iterator[SqsServer]:
    # One server per store for the module: each test uses its own names or only reads.
    # The region its clients sign for (CASSIEQ_SQS_REGION: another region is refused).
    settings = Settings(admin_token=TOKEN, sqs_region="eu-west-1")
    app = create_app(settings, sqs_store, background=False)
    with served(app) as port:
        base = f"http://127.0.0.1:{port}"
        name, keys = new_account(base, TOKEN)
        yield SqsServer(base, name, keys)


@pytest.fixture
def live(store: Store, monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveSqs]:
    with live_sqs(store, monkeypatch) as running:
        yield running
