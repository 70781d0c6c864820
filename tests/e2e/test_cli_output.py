"""The CLI as issue 17 found it wanting: receipts and keys cut short in an 80-column
terminal, `update --message` resetting the lease, `put --file` with no way to resume, and
no way to put into a server without /api/v2. The commands run against a live server on
each store, through the CLI's `main()` in the test's process (tests/cli_process.py), the
80-column one in subprocesses."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from litestar.enums import ScopeType
from litestar.types import (
    HTTPResponseBodyEvent,
    HTTPResponseStartEvent,
    Receive,
    Scope,
    Send,
)

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.store.memory import MemoryStore
from tests.api.live import served
from tests.e2e.cli_v2 import TOKEN, Live, lines_file, live, size

__all__ = ["live"]

NARROW = {"COLUMNS": "80"}


def _field(text: str, name: str) -> str:
    found = re.search(rf"^{name}\s+(\S+)$", text, re.M)
    assert found, text
    return found.group(1)


def test_a_receipt_printed_in_80_columns_is_whole_and_acks(live: Live) -> None:
    live = live.spawned()  # v1's commands as a shell starts them, in a real 80-column run
    assert live.run("put", "jobs", "hello").returncode == 0
    shown = live.run("get", "jobs", **NARROW)
    assert shown.returncode == 0, shown.stderr
    assert "…" not in shown.stdout
    receipt = _field(shown.stdout, "popReceipt")
    assert len(receipt) > 80  # longer than the terminal: a table would have cut it
    acked = live.run("ack", "jobs", receipt, **NARROW)
    assert acked.returncode == 0, acked.stderr
    assert size(live) == 0


def test_a_key_printed_in_80_columns_is_whole_and_works(live: Live) -> None:
    admin = {"CASSIEQ_ADMIN_TOKEN": TOKEN, **NARROW}
    added = live.run("key", "add", live.account, "ci", **admin)
    assert added.returncode == 0 and "…" not in added.stdout, added.stdout
    key = _field(added.stdout, "key")
    assert live.ok("queue", "list", CASSIEQ_KEY=key)[0]["queueName"] == "jobs"
    shown = live.run("account", "show", live.account, **admin)
    assert shown.returncode == 0 and "…" not in shown.stdout
    # The keys one per line, each whole.
    assert _field(shown.stdout, "  primary") == live.keys["primary"]


def test_tables_fold_long_values_and_plain_prints_them_on_one_line(live: Live) -> None:
    body = "z" * 150
    assert live.run("put", "jobs", body).returncode == 0
    table = live.run("peek", "jobs", **NARROW)
    assert table.returncode == 0 and "…" not in table.stdout, table.stdout
    assert "".join(re.findall(r"z+", table.stdout)) == body  # folded over lines, all there
    plain = live.run("peek", "jobs", "--plain", **NARROW)
    header, row = plain.stdout.splitlines()[:2]
    assert header.split("\t")[:2] == ["id", "body"] and row.split("\t")[1] == body
    queues = live.run("queue", "list", "--plain").stdout.splitlines()
    assert queues[0].split("\t")[0] == "queueName" and queues[1].split("\t")[:2] == ["jobs", "20"]


def test_update_with_a_new_message_keeps_the_lease(live: Live) -> None:
    assert live.run("put", "jobs", "first").returncode == 0
    got = live.ok("get", "jobs", "--invisibility", "60")
    updated = live.ok("update", "jobs", got["popReceipt"], "--message", "second")
    assert updated["messageTag"] == got["messageTag"]
    assert live.ok("get", "jobs") is None  # still leased (v1's update would have freed it)
    stale = live.run("update", "jobs", got["popReceipt"], "--message", "third")
    assert stale.returncode == 1 and "409" in stale.stderr
    again = live.ok("update", "jobs", updated["popReceipt"], "--invisibility", "0")
    assert set(again) == {"popReceipt", "messageTag"}
    now = live.ok("get", "jobs")
    assert now["message"] == "second" and now["deliveryCount"] == 1
    neither = live.run("update", "jobs", now["popReceipt"])
    assert neither.returncode == 2 and "--message, --invisibility or both" in neither.stderr


def test_a_failed_put_says_where_to_resume_and_skip_resumes(live: Live, tmp_path: Path) -> None:
    with live.v2() as v2:
        assert v2.put("/small", json={"maxMessageBytes": 100}).status_code == 201
    lines = [f"l{i:02d}" for i in range(25)]
    lines[12] = "x" * 200  # line 13: over the queue's maxMessageBytes
    file = lines_file(tmp_path, lines)
    failed = live.run("put", "small", "--file", file, "--batch", "5", "--json")
    assert failed.returncode == 1
    assert "sent 10 messages (up to line 10); line 13 refused: 422" in failed.stderr
    assert failed.stderr.rstrip().endswith("resume with --skip 10"), failed.stderr
    report = json.loads(failed.stdout)
    assert report["put"] == 10 and report["lastLineSent"] == 10
    lines[12] = "l12"
    file = lines_file(tmp_path, lines)
    resumed = live.ok("put", "small", "--file", file, "--batch", "5", "--skip", "10")
    assert resumed["put"] == 15
    with live.v2() as v2:
        peeked = v2.get("/small/messages/peek", params={"limit": 100}).json()["messages"]
    assert [m["body"] for m in peeked] == [f"l{i:02d}" for i in range(25)]  # once each, in order
    past_the_end = live.ok("put", "small", "--file", file, "--skip", "99")
    assert past_the_end["put"] == 0
    assert live.run("put", "small", "m", "--skip", "1").returncode == 2  # --skip reads --file


def test_put_jsonl_keeps_multi_line_bodies_whole(live: Live, tmp_path: Path) -> None:
    entries = ['"one\\ntwo"', json.dumps({"body": "three\nfour", "attributes": {"k": "v"}})]
    file = lines_file(tmp_path, entries)
    put = live.run("put", "jobs", "--file", file, "--jsonl", "--json")
    # A bare JSON string is a body too.
    assert put.returncode == 0, put.stderr
    assert json.loads(put.stdout)["put"] == 2
    got = live.ok("receive", "jobs", "--max", "10")["messages"]
    assert [(m["body"], m["attributes"]) for m in got] == [
        ("one\ntwo", {}),
        ("three\nfour", {"k": "v"}),
    ]


# --------------------------------------------------------------------------- a v1-only server


@pytest.fixture
def v1_only() -> Iterator[Live]:
    """A server without /api/v2 (as CassieQ itself): its v2 paths answer CassieQ's 404."""
    app = create_app(Settings(admin_token=TOKEN), MemoryStore(), background=False)
    inner = app.asgi_handler

    async def without_v2(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP and scope["path"].startswith("/api/v2/"):
            body = b'{"code":404,"message":"HTTP 404 Not Found"}'
            headers = [(b"content-type", b"application/json")]
            start: HTTPResponseStartEvent = {
                "type": "http.response.start", "status": 404, "headers": headers,
            }  # fmt: skip
            end: HTTPResponseBodyEvent = {
                "type": "http.response.body", "body": body, "more_body": False,
            }  # fmt: skip
            await send(start)
            await send(end)
            return
        await inner(scope, receive, send)

    app.asgi_handler = without_v2
    with served(app) as port:
        url = f"http://127.0.0.1:{port}"
        admin = {"Authorization": f"Bearer {TOKEN}"}
        created = httpx.post(f"{url}/api/v1/accounts", json="old", headers=admin, timeout=30)
        assert created.status_code == 201, created.text
        running = Live(app, url, "old", created.json()["keys"])
        assert running.ok("queue", "create", "jobs")["queueName"] == "jobs"
        yield running


def test_put_file_goes_over_v1_when_the_server_has_no_v2(v1_only: Live, tmp_path: Path) -> None:
    file = lines_file(tmp_path, [f"m{i}" for i in range(7)])
    assert v1_only.ok("put", "jobs", "--file", file, "--batch", "3")["put"] == 7
    bodies = [v1_only.ok("get", "jobs", "--invisibility", "600")["message"] for _ in range(7)]
    assert bodies == [f"m{i}" for i in range(7)]
    # A missing queue is still a 404, not a reason to try v1.
    missing = v1_only.run("put", "nope", "--file", file)
    assert missing.returncode == 1 and "404" in missing.stderr
    with_attributes = lines_file(tmp_path, ['"a"', '{"body": "b", "attributes": {"k": "v"}}'])
    refused = v1_only.run("put", "jobs", "--file", with_attributes, "--jsonl")
    assert refused.returncode == 1
    assert "sent 1 messages (up to line 1); line 2 has attributes" in refused.stderr
