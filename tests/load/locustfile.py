"""Load a cassieq server with producers and consumers using signed requests.

    CASSIEQ_ACCOUNT=dev CASSIEQ_KEY=<key> .venv/bin/locust -f tests/load/locustfile.py \\
        --headless -u 16 -r 4 -t 60s --host http://127.0.0.1:8080

CASSIEQ_QUEUE (default "load") is created if missing. Not part of the test suite.
"""

from __future__ import annotations

import os
import secrets
from datetime import UTC, datetime

from cassieq_client_auth import sign_request
from locust import HttpUser, between, task

ACCOUNT = os.environ.get("CASSIEQ_ACCOUNT", "dev")
KEY = os.environ.get("CASSIEQ_KEY", "")
QUEUE = os.environ.get("CASSIEQ_QUEUE", "load")
BASE = f"/api/v1/accounts/{ACCOUNT}/queues"


def signed(method: str, path: str) -> dict[str, str]:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "Authorization": f"Signed {sign_request(ACCOUNT, KEY, method, path, now)}",
        "x-cassieq-request-time": now,
    }


class _Client(HttpUser):
    abstract = True
    wait_time = between(0, 0.01)

    def on_start(self) -> None:
        self.client.post(BASE, json={"queueName": QUEUE}, headers=signed("POST", BASE))


class Producer(_Client):
    weight = 1

    @task
    def put(self) -> None:
        path = f"{BASE}/{QUEUE}/messages"
        self.client.post(path, data=secrets.token_hex(32), headers=signed("POST", path), name="put")


class Consumer(_Client):
    weight = 1

    @task
    def get_and_ack(self) -> None:
        path = f"{BASE}/{QUEUE}/messages"
        got = self.client.get(f"{path}/next", headers=signed("GET", f"{path}/next"), name="get")
        if got.status_code == 200:
            receipt = got.json()["popReceipt"]
            self.client.delete(
                path, params={"popReceipt": receipt}, headers=signed("DELETE", path), name="ack"
            )
