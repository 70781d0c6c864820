"""An app served by uvicorn in a thread (as `cassieq serve` serves it) on either store, an
account on it, and boto3 clients for its SQS endpoint (checksum validation left on)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import httpx
from botocore.config import Config
from litestar import Litestar

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.store.base import Store
from tests.api.live import served, tell_when_a_receive_waits

TOKEN = "sqs-message-actions-operator-token"
REGION = "us-east-1"


@dataclass
class LiveSqs:
    app: Litestar
    url: str
    account: str
    key: str
    waiting: threading.Event  # set when a receive starts waiting (long polling)

    def client(self, **config: Any) -> Any:
        return boto3.client(
            "sqs",
            endpoint_url=self.url,
            region_name=REGION,
            aws_access_key_id=self.account,
            aws_secret_access_key=self.key,
            config=Config(retries={"max_attempts": 1}, **config),
        )


@contextmanager
def live_sqs(store: Store, monkeypatch: Any) -> Iterator[LiveSqs]:
    waiting = tell_when_a_receive_waits(monkeypatch)
    app = create_app(Settings(admin_token=TOKEN), store, background=False)
    with served(app) as port:
        url = f"http://127.0.0.1:{port}"
        name, keys = new_account(url, TOKEN)
        yield LiveSqs(app, url, name, keys["primary"], waiting)


def new_account(base: str, token: str) -> tuple[str, dict[str, str]]:
    """A fresh account on the served app (the Cassandra keyspace is shared): name, keys."""
    name = f"sqs-{uuid.uuid4().hex[:10]}"
    created = httpx.post(
        f"{base}/api/v1/accounts",
        json=name,
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    return name, created.json()["keys"]
