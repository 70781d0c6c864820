"""The `cassieq` client commands, run for real in a subprocess against a live server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from tests.api.conftest import ADMIN_TOKEN, Server


def cassieq(server: Server, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CASSIEQ_")}
    environment.update({"CASSIEQ_URL": server.url, "CASSIEQ_ADMIN_TOKEN": ADMIN_TOKEN, **env})
    return subprocess.run(
        [sys.executable, "-m", "cassieq", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )


def ok_json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_cli_round_trip(server: Server, tmp_path: Path) -> None:
    name = f"cli-{uuid.uuid4().hex[:10]}"
    account = ok_json(cassieq(server, "account", "create", name, "--json"))
    assert account["accountName"] == name and set(account["keys"]) == {"primary", "secondary"}
    env = {"CASSIEQ_ACCOUNT": name, "CASSIEQ_KEY": account["keys"]["primary"]}

    shown = ok_json(cassieq(server, "account", "show", name, "--json"))
    assert shown == account
    assert name in [a["accountName"] for a in ok_json(cassieq(server, "account", "list", "--json"))]

    added = ok_json(cassieq(server, "key", "add", name, "ci", "--json"))
    ci_env = {"CASSIEQ_ACCOUNT": name, "CASSIEQ_KEY": added["key"]}
    assert ok_json(cassieq(server, "queue", "list", "--json", **ci_env)) == []
    assert cassieq(server, "key", "delete", name, "ci").returncode == 0
    refused = cassieq(server, "queue", "list", **ci_env)
    assert refused.returncode != 0

    created = ok_json(
        cassieq(server, "queue", "create", "jobs", "--bucket-size", "5", "--json", **env)
    )
    assert created["queueName"] == "jobs" and created["bucketSize"] == 5
    assert [q["queueName"] for q in ok_json(cassieq(server, "queue", "list", "--json", **env))] == [
        "jobs"
    ]
    table = cassieq(server, "queue", "list", **env)
    assert table.returncode == 0 and "jobs" in table.stdout

    assert ok_json(cassieq(server, "put", "jobs", "hello", "--json", **env)) == {
        "queueName": "jobs",
        "put": 1,
    }
    got = ok_json(cassieq(server, "get", "jobs", "--invisibility", "60", "--json", **env))
    assert got["message"] == "hello" and set(got) == {
        "popReceipt",
        "message",
        "deliveryCount",
        "messageTag",
    }
    updated = ok_json(
        cassieq(
            server, "update", "jobs", got["popReceipt"], "--message", "hello again", "--json", **env
        )
    )
    stale = cassieq(server, "ack", "jobs", got["popReceipt"], **env)
    assert stale.returncode == 1 and "409" in stale.stderr
    assert ok_json(cassieq(server, "ack", "jobs", updated["popReceipt"], "--json", **env)) == {
        "acked": True
    }
    assert ok_json(cassieq(server, "get", "jobs", "--json", **env)) is None

    lines = tmp_path / "bulk.txt"
    lines.write_text("".join(f"bulk-{i}\n" for i in range(25)))
    assert (
        ok_json(cassieq(server, "put", "jobs", "--file", str(lines), "--json", **env))["put"] == 25
    )
    assert ok_json(cassieq(server, "stats", "jobs", "--json", **env))["size"] == 25
    out = tmp_path / "drained.txt"
    assert (
        ok_json(cassieq(server, "drain", "jobs", "--output", str(out), "--json", **env))["drained"]
        == 25
    )
    assert sorted(out.read_text().split()) == sorted(f"bulk-{i}" for i in range(25))

    grant = ok_json(cassieq(server, "grant", "--levels", "rpa", "--queue", "jobs", "--json", **env))
    # Without --end the grant still ends: 7 days after its issue (#40 finding 10).
    assert grant["queryParam"].startswith("auth=rpa&q=jobs&et=")
    assert "&sig=" in grant["queryParam"]
    assert ok_json(cassieq(server, "queue", "delete", "jobs", "--json", **env)) == {
        "deleted": "jobs"
    }
    assert ok_json(cassieq(server, "queue", "list", "--json", **env)) == []
    assert cassieq(server, "account", "delete", name).returncode == 0


def test_cli_errors_are_one_line_without_traceback(server: Server) -> None:
    name = f"cli-{uuid.uuid4().hex[:10]}"
    ok_json(cassieq(server, "account", "create", name, "--json"))
    wrong = cassieq(server, "queue", "list", CASSIEQ_ACCOUNT=name, CASSIEQ_KEY="wrong-key")
    assert wrong.returncode == 1
    assert wrong.stderr.strip().count("\n") == 0, wrong.stderr
    assert "401" in wrong.stderr and "Traceback" not in wrong.stderr
    unreachable = cassieq(
        server,
        "queue",
        "list",
        CASSIEQ_URL="http://127.0.0.1:9",
        CASSIEQ_ACCOUNT=name,
        CASSIEQ_KEY="k",
    )
    assert unreachable.returncode == 1 and "cannot reach" in unreachable.stderr
    assert "Traceback" not in unreachable.stderr
    missing = cassieq(server, "put", "q", "m")
    assert missing.returncode == 2 and "--account" in missing.stderr
    key = {"CASSIEQ_ACCOUNT": name, "CASSIEQ_KEY": "k"}
    for args, env in (
        (("queue", "list", "--url", "http://[::1"), key),
        (("drain", "q", "--output", "/nonexistent/dir/out.txt"), key),
        (("serve",), {"CASSIEQ_PORT": "eighty"}),
        (("dev",), {"CASSIEQ_LOG_LEVEL": "verbose"}),
    ):
        failed = cassieq(server, *args, **env)
        assert failed.returncode == 1, (args, failed.stderr)
        assert failed.stderr.strip().count("\n") == 0 and "Traceback" not in failed.stderr, (
            failed.stderr
        )
    # A name is one path segment: 'acme/keys' cannot address another resource.
    odd = cassieq(server, "account", "show", "acme/keys")
    assert odd.returncode == 2 and "invalid name" in odd.stderr


def test_cli_names_with_dots(server: Server) -> None:
    # CassieQ's names allow dots (and a leading '_', '-' or '.'): `orders.v1` end to end.
    name = f"acme.eu-{uuid.uuid4().hex[:8]}"
    account = ok_json(cassieq(server, "account", "create", name, "--json"))
    env = {"CASSIEQ_ACCOUNT": name, "CASSIEQ_KEY": account["keys"]["primary"]}
    created = ok_json(cassieq(server, "queue", "create", "orders.v1", "--json", **env))
    # Shown as /api/v2 answers it (queue show/create print v2's names, #39 item 10).
    assert created["queueName"] == "orders.v1" and created["deadLetterQueue"] is None
    assert ok_json(cassieq(server, "put", "orders.v1", "hello", "--json", **env))["put"] == 1
    got = ok_json(cassieq(server, "get", "orders.v1", "--json", **env))
    assert got["message"] == "hello" and got["deliveryCount"] == 0
    acked = ok_json(cassieq(server, "ack", "orders.v1", got["popReceipt"], "--json", **env))
    assert acked == {"acked": True}
    assert ok_json(cassieq(server, "stats", "orders.v1", "--json", **env))["size"] == 0
    # "." and ".." alone would be resolved away as URL dot segments: refused by the CLI.
    dots = cassieq(server, "put", "..", "m", **env)
    assert dots.returncode == 2 and "invalid name" in dots.stderr
    assert cassieq(server, "account", "delete", name).returncode == 0
