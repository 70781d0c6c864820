"""What the client commands print and how they exit, as a user of the API expects: the API's
own objects and names, the depth and size of each queue, times people can read, exit
statuses as documented, and no operator token demanded where none is needed."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from cassieq.model import StatsSnapshot
from cassieq.store.base import Store
from cassieq.store.memory import MemoryStore
from cassieq.tools.bench.servers import free_port
from tests.e2e.cli_v2 import Live, live

__all__ = ["live"]

DOCS = Path(__file__).resolve().parents[2] / "docs" / "guides" / "cli.md"


def test_receive_json_prints_the_api_object(live: Live) -> None:
    assert live.run("put", "jobs", "one").returncode == 0
    got = live.ok("receive", "jobs", "--max", "10")
    assert isinstance(got, dict) and set(got) == {"messages"}, got
    assert [m["body"] for m in got["messages"]] == ["one"]
    assert live.ok("receive", "jobs") == {"messages": []}


def test_queue_show_prints_the_options_by_v2_names(live: Live) -> None:
    live.ok("queue", "create", "dead")
    created = live.ok("queue", "create", "work", "--dlq", "dead", "--max-delivery-count", "2")
    shown = live.ok("queue", "show", "work")
    assert created == shown
    with live.v2() as v2:
        assert shown == v2.get("/work").json()  # v2's names and values, every option
    assert shown["deadLetterQueue"] == "dead" and "dlqName" not in shown
    assert shown["maxDeliveryCount"] == 2 and shown["visibilityTimeoutSeconds"] == 30
    table = live.run("queue", "show", "work")
    assert table.returncode == 0 and re.search(r"^deadLetterQueue\s+dead$", table.stdout, re.M)


def test_queue_list_has_depth_and_size(live: Live) -> None:
    for body in ("a", "b", "c"):
        assert live.run("put", "jobs", body).returncode == 0
    leased = live.ok("receive", "jobs", "--visibility", "600")["messages"]
    assert len(leased) == 1
    [row] = live.ok("queue", "list")
    # depth: visible now (2), size: every message still in the queue (3, one in flight).
    assert (row["queueName"], row["depth"], row["size"]) == ("jobs", 2, 3)
    header, line = live.run("queue", "list", "--plain").stdout.splitlines()
    assert header.split("\t")[-2:] == ["depth", "size"] and line.split("\t")[-2:] == ["2", "3"]
    helped = " ".join(live.run("queue", "list", "--help").stdout.split())
    assert "depth: messages visible now" in helped and "size: every message" in helped


def _on(store: Store, request: pytest.FixtureRequest, work: Any) -> Any:
    """Run ``work(store)`` on the live server's store from the test's thread."""
    if isinstance(store, MemoryStore):
        return asyncio.run(work(store))
    from cassieq.pipeline.store_access import StoreAccess

    node = request.getfixturevalue("cassandra_node")
    with StoreAccess(node.settings) as access:
        return access.run(work(access.store))


def test_stats_detail_shows_computed_at_in_iso_utc(
    live: Live, store: Store, request: pytest.FixtureRequest
) -> None:
    async def write(s: Store) -> None:
        queue = await s.read_queue(live.account, "jobs")
        assert queue is not None
        snapshot = StatsSnapshot(
            queue=queue.id, computed_at=1_800_000_000_123, published=1, acked=0,
            dead_lettered=0, in_flight=0, backlog=1, delivered=0,
            delivery_count_histogram={0: 1}, oldest_unacked_age_s=1.0,
            ack_latency_p50_ms=None, ack_latency_p95_ms=None, ack_latency_p99_ms=None,
            rows_scanned=1,
        )  # fmt: skip
        await s.write_stats_snapshot(snapshot)

    _on(store, request, write)
    shown = live.run("stats", "jobs", "--detail")
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"^\s+computedAt\s+2027-01-15T08:00:00\.123Z$", shown.stdout, re.M), (
        shown.stdout
    )
    # Scripts get the API's object unchanged.
    assert live.ok("stats", "jobs", "--detail")["detail"]["computedAt"] == 1_800_000_000_123


def test_usage_errors_exit_as_the_docs_say(live: Live) -> None:
    for args in (("queue", "show"), ("queue", "list", "--no-such-option"), ("receive", "jobs",
                 "--wait", "99")):  # fmt: skip
        done = live.run(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert "Usage:" in done.stderr and "Traceback" not in done.stderr
    refused = live.run("queue", "show", "nope")
    assert refused.returncode == 1 and refused.stderr.startswith("Error: 404"), refused.stderr
    docs = " ".join(DOCS.read_text().split())
    assert "1 a failure" in docs and "2 a usage error" in docs, "docs/guides/cli.md"


def test_operator_commands_need_no_token_where_the_server_needs_none(tmp_path: Path) -> None:
    port, admin_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSIEQ_")}
    command = [sys.executable, "-m", "cassieq", "dev", "--port", str(port),
               "--admin-port", str(admin_port)]  # fmt: skip
    with (tmp_path / "dev.log").open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, (tmp_path / "dev.log").read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)  # polls the process start, bounded by the deadline

        def cassieq(url: str, *args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "cassieq", *args, "--url", url], env=env,
                capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip

        # The dev admin port, from this machine: no token needed, none asked for.
        open_port = cassieq(f"http://127.0.0.1:{admin_port}", "account", "create", "acme", "--json")
        assert open_port.returncode == 0, open_port.stderr
        assert json.loads(open_port.stdout)["accountName"] == "acme"
        listed = cassieq(f"http://127.0.0.1:{admin_port}", "account", "list", "--json")
        assert {"acme", "dev"} <= {a["accountName"] for a in json.loads(listed.stdout)}
        # The API port wants the token: the server's 401, and the option that gives it.
        api_port = cassieq(f"http://127.0.0.1:{port}", "account", "list")
        assert api_port.returncode == 1, api_port.stderr
        [line] = api_port.stderr.splitlines()
        assert line.startswith("Error: 401") and "--admin-token" in line, line
    finally:
        process.terminate()
        process.wait(timeout=30)
