"""`cassieq secrets rotate-receipt` on the real keyspace under a running `cassieq serve`, and
`cassieq dev` with a short operator token."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import httpx

from cassieq.engine.tenancy.keyspace_secrets import RECEIPT_SECRET
from cassieq.store.cassandra import CassandraStore
from cassieq.tools.bench.servers import free_port
from tests.api.conftest import AccountCtx
from tests.cli_process import run_cassieq
from tests.conftest import CassandraNode


async def test_rotating_the_receipt_secret_keeps_receipts_in_flight_valid(
    cassandra_node: CassandraNode, cassandra_store: CassandraStore, account: AccountCtx
) -> None:
    before = await cassandra_store.read_secret(RECEIPT_SECRET)
    assert before is not None  # made by the running server at its start
    with account.client() as c:
        assert c.post("/queues", json={"queueName": "rot"}).status_code == 201
        assert c.post("/queues/rot/messages", content=b"m").status_code == 201
        receipt = c.get("/queues/rot/messages/next").json()["popReceipt"]

        s = cassandra_node.settings
        done = run_cassieq(
            "secrets",
            "rotate-receipt",
            "--grace-seconds",
            "600",
            CASSIEQ_KEYSPACE=s.keyspace,
            CASSIEQ_CASSANDRA_HOSTS=",".join(s.cassandra_hosts),
            CASSIEQ_CASSANDRA_PORT=str(s.cassandra_port),
        )
        assert done.returncode == 0, done.stderr
        assert f"version {before.version + 1}" in done.stdout
        assert before.value not in done.stdout + done.stderr  # no secret printed

        after = await cassandra_store.read_secret(RECEIPT_SECRET)
        assert after is not None and after.version == before.version + 1
        assert after.previous == before.value and after.value != before.value
        left_ms = (after.previous_until or 0) - time.time() * 1000
        assert 590_000 < left_ms <= 600_000
        # Signed before the rotation: still acks (within the grace period).
        ack = c.delete("/queues/rot/messages", params={"popReceipt": receipt})
        assert ack.status_code == 204, ack.text


def test_rotate_refuses_a_negative_grace_period() -> None:
    done = run_cassieq("secrets", "rotate-receipt", "--grace-seconds", "-1")
    assert done.returncode != 0 and "Traceback" not in done.stderr


def test_dev_accepts_a_short_operator_token_with_a_warning() -> None:
    port, admin_port = free_port(), free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CASSIEQ_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "cassieq", "dev", "--port", str(port), "--admin-port",
         str(admin_port), "--admin-token", "short"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    try:
        banner: list[str] = []
        deadline = time.monotonic() + 60
        assert process.stdout is not None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            banner.append(line)
            if line.startswith("Swagger UI") or not line:
                break
        text = "".join(banner)
        # A log line (console format by default): a warning naming the variable.
        assert re.search(
            r"\[warning\s*\] short_secret .*CASSIEQ_ADMIN_TOKEN is 5 characters long", text
        ), text
        assert re.search(r"^operator token: short$", text, re.M), text
        base = f"http://127.0.0.1:{port}"
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{base}/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)  # polling the process start, bounded by the deadline
        shown = httpx.get(f"{base}/api/v1/accounts/dev", headers={"Authorization": "bearer short"})
        assert shown.status_code == 200, shown.text
    finally:
        process.terminate()
        process.wait(timeout=20)
