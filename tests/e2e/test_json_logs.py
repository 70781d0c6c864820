"""CASSIEQ_LOG_FORMAT=json end to end: every line `cassieq serve` writes, from start to
shutdown (uvicorn's own lines, the access log, cassieq's events), is one JSON object.
A log shipper that parses lines must never meet a plain one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.api.conftest import ADMIN_TOKEN, start_server, stop_server
from tests.conftest import CassandraNode


def test_every_line_of_serve_is_json(
    cassandra_node: CassandraNode, cassandra_store: object, tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    server = start_server(cassandra_node, log, CASSIEQ_LOG_FORMAT="json", CASSIEQ_ACCESS_LOG="true")
    try:
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        # A scrape waits for its pass at most 5 s (CASSIEQ_METRICS_SCRAPE_WAIT_SECONDS).
        assert httpx.get(f"{server.url}/metrics", headers=admin, timeout=30).status_code == 200
        assert httpx.get(f"{server.url}/no/such/path").status_code == 404
        # A v1 signed query string carries a signature: the access log leaves it out.
        signed = httpx.get(f"{server.url}/api/v1/accounts/nobody/queues?sig=s3cr3t-signature")
        assert signed.status_code == 401
    finally:
        stop_server(server)
    lines = log.read_text().splitlines()
    assert lines, "serve wrote nothing"
    events: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        try:
            parsed = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"line {number} is not JSON: {line!r}") from exc
        assert isinstance(parsed, dict) and "event" in parsed and "level" in parsed, line
        events.append(parsed)
    uvicorn = [e["event"] for e in events if e.get("logger") == "uvicorn.error"]
    assert any(e.startswith("Uvicorn running on") for e in uvicorn), uvicorn
    assert "Application shutdown complete." in uvicorn
    access = {(e["path"], e["route"], e["status"]) for e in events if e["event"] == "http_request"}
    assert ("/metrics", "/metrics", 200) in access
    assert ("/no/such/path", "unmatched", 404) in access
    assert ("/api/v1/accounts/nobody/queues", "/api/v1/accounts/{account}/queues", 401) in access
    assert "s3cr3t-signature" not in log.read_text()
