"""The production first run, as docs/operations/serving.md ("First run") tells it: `serve` on
a keyspace without the schema names the missing step, then schema, serve, the first account,
a message — each a real command against the real node."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx

from cassieq.store.cassandra import drop_keyspace
from cassieq.tools.bench.servers import free_port
from tests.api.conftest import ADMIN_TOKEN, start_server, stop_server
from tests.cli_process import run_cassieq
from tests.conftest import CassandraNode

PAGE = Path(__file__).resolve().parents[2] / "docs" / "operations" / "serving.md"


def test_the_first_run_goes_as_the_serving_page_says(
    cassandra_node: CassandraNode, tmp_path: Path
) -> None:
    s = cassandra_node.settings
    keyspace = f"first_run_{uuid.uuid4().hex[:10]}"
    hosts, port = ",".join(s.cassandra_hosts), str(s.cassandra_port)
    page = PAGE.read_text()
    try:
        # Before the schema: one line naming the step, not the driver's code=2200.
        refused = run_cassieq(
            "serve",
            CASSIEQ_ADMIN_TOKEN=ADMIN_TOKEN,
            CASSIEQ_PORT=str(free_port()),
            CASSIEQ_CASSANDRA_HOSTS=hosts,
            CASSIEQ_CASSANDRA_PORT=port,
            CASSIEQ_KEYSPACE=keyspace,
        )
        assert refused.returncode == 1
        assert f"`cassieq schema apply --keyspace {keyspace}`" in refused.stderr
        assert "code=2200" not in refused.stderr and "Traceback" not in refused.stderr

        assert "cassieq schema apply --keyspace" in page
        applied = run_cassieq(
            "schema",
            "apply",
            "--keyspace",
            keyspace,
            CASSIEQ_CASSANDRA_HOSTS=hosts,
            CASSIEQ_CASSANDRA_PORT=port,
        )
        assert applied.returncode == 0, applied.stderr

        server = start_server(cassandra_node, tmp_path / "serve.log", CASSIEQ_KEYSPACE=keyspace)
        try:
            assert "cassieq account create" in page
            created = run_cassieq(
                "account",
                "create",
                "first",
                "--json",
                CASSIEQ_URL=server.url,
                CASSIEQ_ADMIN_TOKEN=ADMIN_TOKEN,
            )
            assert created.returncode == 0, created.stderr
            key = json.loads(created.stdout)["keys"]["primary"]
            base = f"{server.url}/api/v1/accounts/first"
            with httpx.Client(base_url=base, headers={"Authorization": f"Key {key}"}) as c:
                assert c.post("/queues", json={"queueName": "orders"}).status_code == 201
                assert c.post("/queues/orders/messages", content=b"hello").status_code == 201
                got = c.get("/queues/orders/messages/next")
                assert got.status_code == 200 and got.json()["message"] == "hello"
            assert httpx.get(f"{server.url}/ready").status_code == 200
        finally:
            stop_server(server)
    finally:
        drop_keyspace(cassandra_node.session, keyspace)
