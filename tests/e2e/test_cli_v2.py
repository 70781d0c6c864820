"""The v2 client commands (put in batches, receive, drain) against a live server on each
store, through the CLI's `main()` in the test's process (tests/cli_process.py); the batch
round trip in subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli_v2 import Live, lines_file, live, size

__all__ = ["live"]  # the fixture


def test_put_file_in_batches_then_drain_in_batches(live: Live, tmp_path: Path) -> None:
    live = live.spawned()  # v2's batch commands as a shell starts them, a process each
    bodies = [f"bulk-{i}" for i in range(25)] + ["", "with spaces and ünïcode"]
    file = lines_file(tmp_path, bodies)
    assert live.ok("put", "jobs", "--file", file, "--batch", "10") == {
        "queueName": "jobs",
        "put": 27,
    }
    assert size(live) == 27
    out = tmp_path / "drained.txt"
    drained = live.ok("drain", "jobs", "--output", str(out), "--batch", "7")
    assert drained == {"queueName": "jobs", "drained": 27, "ackFailed": 0}
    assert sorted(out.read_text().split("\n")[:-1]) == sorted(bodies)
    assert size(live) == 0


def test_batch_sizes_are_bounded(live: Live, tmp_path: Path) -> None:
    file = lines_file(tmp_path, ["a"])
    for bad in ("0", "101"):
        refused = live.run("put", "jobs", "--file", file, "--batch", bad)
        assert refused.returncode == 2 and "--batch" in refused.stderr
    assert live.ok("put", "jobs", "--file", file, "--batch", "100")["put"] == 1


def test_put_jsonl_with_attributes_and_delay(live: Live, tmp_path: Path) -> None:
    entries = [
        {"body": "one", "attributes": {"kind": "a", "trace.id": "t-1"}},
        {"body": "two"},
        {"body": "later", "delaySeconds": 900},
    ]
    file = lines_file(tmp_path, [json.dumps(e) for e in entries[:2]] + ["", json.dumps(entries[2])])
    assert live.ok("put", "jobs", "--file", file, "--jsonl")["put"] == 3
    got = live.ok("receive", "jobs", "--max", "10", "--visibility", "60")["messages"]
    assert sorted(m["body"] for m in got) == ["one", "two"]  # "later" is delayed
    by_body = {m["body"]: m for m in got}
    assert by_body["one"]["attributes"] == {"kind": "a", "trace.id": "t-1"}
    assert by_body["two"]["attributes"] == {}
    assert all(m["deliveryCount"] == 1 for m in got)
    # --delay gives every line without its own delaySeconds one.
    plain = lines_file(tmp_path, ["x", "y"], "plain.txt")
    assert live.ok("put", "jobs", "--file", plain, "--delay", "900")["put"] == 2
    assert live.ok("receive", "jobs", "--max", "10")["messages"] == []


def test_a_bad_line_stops_put_after_the_lines_before_it(live: Live, tmp_path: Path) -> None:
    lines = [json.dumps({"body": f"m{i}"}) for i in range(12)]
    lines[11] = "{not json"
    file = lines_file(tmp_path, lines)
    failed = live.run("put", "jobs", "--file", file, "--jsonl", "--batch", "5")
    assert failed.returncode == 1
    assert failed.stderr.strip().count("\n") == 0 and "Traceback" not in failed.stderr
    assert "sent 11 messages (up to line 11); line 12: not JSON" in failed.stderr
    assert size(live) == 11  # the lines before the bad one, every one of them
    as_json = live.run("put", "jobs", "--file", file, "--jsonl", "--batch", "5", "--json")
    assert as_json.returncode == 1
    report = json.loads(as_json.stdout)
    assert report["put"] == 11 and report["error"].startswith("line 12: not JSON")
    for bad, why in (('{"text": "x"}', 'a string "body"'), ('{"body": "x", "extra": 1}', "extra")):
        one = live.run("put", "jobs", "--file", lines_file(tmp_path, [bad], "bad.txt"), "--jsonl")
        assert one.returncode == 1 and "sent 0 messages; line 1" in one.stderr and why in one.stderr


def test_a_refused_batch_names_its_line(live: Live, tmp_path: Path) -> None:
    lines = [json.dumps({"body": f"m{i}"}) for i in range(7)]
    lines[5] = json.dumps({"body": "x", "attributes": {"bad name": "v"}})
    failed = live.run(
        "put", "jobs", "--file", lines_file(tmp_path, lines), "--jsonl", "--batch", "3"
    )
    assert failed.returncode == 1, failed.stderr
    assert "sent 3 messages (up to line 3); " in failed.stderr
    assert "line 6 refused: 422" in failed.stderr or "lines 4-6 refused: 422" in failed.stderr
    assert size(live) == 3
    # A body over the queue's size limit: the server names the entry, the CLI its line.
    big = [json.dumps({"body": "ok"}), json.dumps({"body": "x" * 1_100_000})]  # over 1 MiB
    too_big = live.run("put", "jobs", "--file", lines_file(tmp_path, big, "big.txt"), "--jsonl")
    assert too_big.returncode == 1 and "sent 0 messages; line 2 refused" in too_big.stderr
    not_utf8 = tmp_path / "latin1.txt"
    not_utf8.write_bytes(b"fine\ncaf\xe9\n")
    bad = live.run("put", "jobs", "--file", str(not_utf8))
    assert bad.returncode == 1 and "sent 1 messages (up to line 1); line 2: not UTF-8" in bad.stderr


def test_receive_prints_whole_receipts(live: Live) -> None:
    for body in ("a", "b", "c"):
        assert live.ok("put", "jobs", body) == {"queueName": "jobs", "put": 1}
    shown = live.run("receive", "jobs", "--max", "3", "--visibility", "60")
    assert shown.returncode == 0, shown.stderr
    receipts = [
        line.split("popReceipt: ", 1)[1]
        for line in shown.stdout.splitlines()
        if "popReceipt: " in line
    ]
    assert len(receipts) == 3 and all(len(r) > 40 for r in receipts)
    assert {"  body: a", "  body: b", "  body: c"} <= set(shown.stdout.splitlines())
    # Whole: every printed receipt acks.
    with live.v2() as c:
        acked = c.post("/jobs/messages/ack", json={"popReceipts": receipts}).json()
    assert sorted(acked["acked"]) == sorted(receipts) and acked["failed"] == []
    empty = live.run("receive", "jobs", "--wait", "1")
    assert empty.returncode == 0 and empty.stdout.strip() == "(no visible message)"


def test_receive_with_a_wait_returns_what_is_there(live: Live) -> None:
    # Waking by a put is the API's (tests/api); here: --wait reaches the server, and the
    # client's own timeout outlasts it.
    assert live.ok("put", "jobs", "ready") == {"queueName": "jobs", "put": 1}
    got = live.ok("receive", "jobs", "--max", "5", "--wait", "20")["messages"]
    assert [m["body"] for m in got] == ["ready"]
    assert set(got[0]) >= {"id", "body", "attributes", "popReceipt", "deliveryCount", "sentAt"}
    too_long = live.run("receive", "jobs", "--wait", "21")
    assert too_long.returncode == 2 and "--wait" in too_long.stderr


def test_the_cli_signs_v2_requests_with_the_v2_signature_given_the_key_name(
    live: Live, tmp_path: Path
) -> None:
    before = live.replay_entries
    named = {"CASSIEQ_KEY_NAME": "primary"}
    assert live.ok("put", "jobs", "--file", lines_file(tmp_path, ["s1", "s2"]), **named)["put"] == 2
    got = live.ok("receive", "jobs", "--max", "2", "--visibility", "60", **named)["messages"]
    assert sorted(m["body"] for m in got) == ["s1", "s2"]
    # Each v2 request carried a CQ2 signature the server remembered (put, receive).
    assert live.replay_entries == before + 2
    # Without the name the CLI signs with CQ2 as the primary key (v2 refuses v1's Signed).
    assert live.ok("put", "jobs", "s3")["put"] == 1
    assert live.replay_entries == before + 3
    wrong = live.run("put", "jobs", "s4", CASSIEQ_KEY_NAME="secondary")
    assert wrong.returncode == 1 and "401" in wrong.stderr and "invalid signature" in wrong.stderr
    assert size(live) == 3
