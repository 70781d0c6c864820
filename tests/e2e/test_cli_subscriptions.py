"""The subscription commands (issue 36): `subscription create|list|show|commit|delete`,
`read` (with and without --commit) and `seek`; a shared subscription's `receive`, `ack` and
`update --subscription`; against a live server on each store, through the CLI's `main()` in
the test's process (tests/cli_process.py), the refusals in subprocesses."""

from __future__ import annotations

from tests.e2e.cli_v2 import Live, live

__all__ = ["live"]  # the fixture


def _put(live: Live, *bodies: str) -> None:
    for body in bodies:
        assert live.ok("put", "jobs", body)["put"] == 1


def _bodies(live: Live, limit: int = 100) -> list[str]:
    page = live.ok("read", "jobs", "audit", "--limit", str(limit))
    return [m["body"] for m in page["messages"]]


def test_create_list_show_delete(live: Live) -> None:
    made = live.ok("subscription", "create", "jobs", "audit", "--start", "earliest")
    assert {k: made[k] for k in ("name", "mode", "start")} == {
        "name": "audit",
        "mode": "ordered",
        "start": "earliest",
    }
    assert made["createdAt"].endswith("Z") and made["position"]
    # The same options again: unchanged; others: refused (exit 1, the server's 409).
    assert live.ok("subscription", "create", "jobs", "audit", "--start", "earliest") == made
    other = live.run("subscription", "create", "jobs", "audit", "--start", "latest")
    assert other.returncode == 1 and "409" in other.stderr and "Traceback" not in other.stderr
    assert live.ok("subscription", "create", "jobs", "tail")["start"] == "latest"  # the default
    listed = live.ok("subscription", "list", "jobs")["subscriptions"]
    assert sorted(s["name"] for s in listed) == ["audit", "tail"]
    assert all(s["lag"] == 0 and s["oldestUnackedAgeSeconds"] is None for s in listed)
    table = live.run("subscription", "list", "jobs", "--plain")
    assert table.returncode == 0, table.stderr
    header, *rows = table.stdout.splitlines()
    assert header.split("\t")[:4] == ["name", "mode", "start", "lag"]
    assert sorted(row.split("\t")[0] for row in rows) == ["audit", "tail"]
    shown = live.ok("subscription", "show", "jobs", "audit")
    assert shown["position"] == made["position"] and shown["lag"] == 0
    deleted = live.ok("subscription", "delete", "jobs", "tail")
    assert deleted == {"queueName": "jobs", "deleted": "tail"}
    gone = live.run("subscription", "show", "jobs", "tail")
    assert gone.returncode == 1 and "404" in gone.stderr


def test_create_refusals(live: Live) -> None:
    live = live.spawned()  # the subscription commands' exit statuses from real processes
    bad_start = live.run("subscription", "create", "jobs", "s", "--start", "yesterday")
    assert bad_start.returncode == 1 and "422" in bad_start.stderr and "start" in bad_start.stderr
    bad_mode = live.run("subscription", "create", "jobs", "s", "--mode", "fanout")
    assert bad_mode.returncode == 2 and "--mode" in bad_mode.stderr
    bad_name = live.run("subscription", "create", "jobs", "a/b")
    assert bad_name.returncode == 2 and "invalid name" in bad_name.stderr
    missing = live.run("subscription", "create", "nope", "s")
    assert missing.returncode == 1 and "404" in missing.stderr
    assert live.ok("subscription", "list", "jobs") == {"subscriptions": []}


def test_read_then_commit(live: Live) -> None:
    live.ok("subscription", "create", "jobs", "audit", "--start", "earliest")
    _put(live, "a", "b", "c")
    assert live.ok("subscription", "show", "jobs", "audit")["lag"] == 3
    first = live.ok("read", "jobs", "audit", "--limit", "2")
    assert [m["body"] for m in first["messages"]] == ["a", "b"]
    assert first["next"] == first["messages"][-1]["position"]
    # Without --commit, the position stays: the same messages again.
    assert live.ok("read", "jobs", "audit", "--limit", "2") == first
    committed = live.ok("read", "jobs", "audit", "--limit", "2", "--commit")
    assert committed == {**first, "committed": True}
    assert live.ok("subscription", "show", "jobs", "audit")["position"] == first["next"]
    plain = live.run("read", "jobs", "audit")
    assert plain.returncode == 0, plain.stderr
    assert "body: c" in plain.stdout and "body: a" not in plain.stdout
    assert "position: " in plain.stdout and "next: " in plain.stdout
    assert live.ok("read", "jobs", "audit", "--commit")["committed"] is True
    # Nothing left: nothing to commit, and the plain output says so.
    assert live.ok("read", "jobs", "audit", "--commit")["committed"] is False
    assert "(no message after the position)" in live.run("read", "jobs", "audit").stdout
    assert live.ok("subscription", "show", "jobs", "audit")["lag"] == 0


def test_commit_with_expected(live: Live) -> None:
    start = live.ok("subscription", "create", "jobs", "audit", "--start", "earliest")["position"]
    _put(live, "a", "b")
    a, b = (m["position"] for m in live.ok("read", "jobs", "audit")["messages"])
    moved = live.ok("subscription", "commit", "jobs", "audit", a, "--expected", start)
    assert moved["position"] == a
    stale = live.run("subscription", "commit", "jobs", "audit", b, "--expected", start)
    assert stale.returncode == 1 and "409" in stale.stderr
    assert live.ok("subscription", "commit", "jobs", "audit", b)["position"] == b
    bad = live.run("subscription", "commit", "jobs", "audit", "not-a-position")
    assert bad.returncode == 1 and "422" in bad.stderr


def test_seek(live: Live) -> None:
    live.ok("subscription", "create", "jobs", "audit", "--start", "earliest")
    _put(live, "a", "b", "c")
    messages = live.ok("read", "jobs", "audit", "--commit")["messages"]
    assert _bodies(live) == []
    assert live.ok("seek", "jobs", "audit", "--to", "earliest")["name"] == "audit"
    assert _bodies(live) == ["a", "b", "c"]
    assert live.ok("seek", "jobs", "audit", "--to", "latest")["position"]
    assert _bodies(live) == []
    # A time: from the first message sent at or after it (b's own send time: b and what
    # follows; puts one by one may share a millisecond, so a, b and c are checked as sent).
    b_sent = messages[1]["sentAt"]
    live.ok("seek", "jobs", "audit", "--time", b_sent)
    assert _bodies(live) == [m["body"] for m in messages if m["sentAt"] >= b_sent]
    at_a = live.ok("seek", "jobs", "audit", "--position", messages[0]["position"])
    assert at_a["position"] == messages[0]["position"]
    assert _bodies(live) == ["b", "c"]
    for wrong in ([], ["--to", "earliest", "--time", b_sent]):
        refused = live.run("seek", "jobs", "audit", *wrong)
        assert refused.returncode == 2 and "exactly one" in refused.stderr
    bad_time = live.run("seek", "jobs", "audit", "--time", "noon")
    assert bad_time.returncode == 1 and "422" in bad_time.stderr and "time" in bad_time.stderr


def test_a_shared_subscription_received_acked_and_leased(live: Live) -> None:
    made = live.ok(
        "subscription", "create", "jobs", "work", "--mode", "shared", "--start", "earliest"
    )
    assert (made["name"], made["mode"]) == ("work", "shared")
    _put(live, "a", "b")
    listed = live.run("subscription", "list", "jobs", "--plain")
    assert listed.stdout.splitlines()[1].split("\t")[:2] == ["work", "shared"]
    got = live.ok("receive", "jobs", "--subscription", "work", "--max", "10", "--wait", "1")
    a, b = got["messages"]
    assert [(m["body"], m["deliveryCount"]) for m in (a, b)] == [("a", 1), ("b", 1)]
    assert live.ok("ack", "jobs", a["popReceipt"], "--subscription", "work") == {"acked": True}
    leased = live.ok(
        "update", "jobs", b["popReceipt"], "--subscription", "work", "--invisibility", "0"
    )
    assert set(leased) == {"popReceipt", "messageTag"} and leased["popReceipt"] != b["popReceipt"]
    # The lease was given back (0): b is delivered again, its old receipt stale.
    (again,) = live.ok("receive", "jobs", "--subscription", "work", "--max", "10")["messages"]
    assert (again["body"], again["deliveryCount"]) == ("b", 2)
    stale = live.run("ack", "jobs", b["popReceipt"], "--subscription", "work")
    assert stale.returncode == 1 and "409" in stale.stderr and "Traceback" not in stale.stderr
    # A receipt of the subscription is not the queue's, nor the other way round.
    on_queue = live.run("ack", "jobs", again["popReceipt"])
    assert on_queue.returncode == 1
    (mine,) = live.ok("receive", "jobs")["messages"]  # the queue's own consumers: a first
    foreign = live.run("ack", "jobs", mine["popReceipt"], "--subscription", "work")
    assert foreign.returncode == 1 and "400" in foreign.stderr and "another queue" in foreign.stderr
    assert live.ok("ack", "jobs", again["popReceipt"], "--subscription", "work")["acked"]
    assert live.ok("subscription", "show", "jobs", "work")["lag"] == 0
    plain = live.run("receive", "jobs", "--subscription", "work")
    assert plain.returncode == 0 and "(no visible message)" in plain.stdout
    # An ordered subscription is read, not received; and the options that do not apply.
    live.ok("subscription", "create", "jobs", "audit")
    ordered = live.run("receive", "jobs", "--subscription", "audit")
    assert ordered.returncode == 1 and "422" in ordered.stderr and "ordered" in ordered.stderr
    for wrong in (["--message", "x", "--invisibility", "5"], ["--message", "x"]):
        refused = live.run("update", "jobs", mine["popReceipt"], "--subscription", "work", *wrong)
        assert refused.returncode == 2 and "--subscription" in refused.stderr
