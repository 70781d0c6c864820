"""`cassieq peek`, `purge` and `redrive`, run for real against a live server on each store.

The routes come from the v2 queue work (peek) and the purge/redrive work; these tests are
written against api-v2.md and need both merged."""

from __future__ import annotations

import time

from tests.e2e.cli_v2 import Live, live, size

__all__ = ["live"]  # the fixture


def _put(live: Live, queue: str, *bodies: str) -> None:
    for body in bodies:
        assert live.ok("put", queue, body)["put"] == 1


def test_peek_pages_with_a_cursor_and_changes_nothing(live: Live) -> None:
    _put(live, "jobs", "a", "b", "c")
    first = live.ok("peek", "jobs", "--limit", "2")
    assert [m["body"] for m in first["messages"]] == ["a", "b"] and first["next"]
    assert all(m["visible"] and m["deliveryCount"] == 0 for m in first["messages"])
    rest = live.ok("peek", "jobs", "--limit", "2", "--after", first["next"])
    assert [m["body"] for m in rest["messages"]] == ["c"] and rest["next"] is None
    table = live.run("peek", "jobs", "--limit", "2")
    assert table.returncode == 0 and f"next: {first['next']}" in table.stdout
    # Nothing was leased: every message is still there to receive, first delivery.
    got = live.ok("receive", "jobs", "--max", "10")["messages"]
    assert sorted(m["body"] for m in got) == ["a", "b", "c"]
    assert all(m["deliveryCount"] == 1 for m in got)


def test_purge_drops_what_was_put_before(live: Live) -> None:
    _put(live, "jobs", "old-1", "old-2")
    assert live.ok("purge", "jobs") == {"queueName": "jobs", "purged": 2}
    assert size(live) == 0
    _put(live, "jobs", "new")
    assert [m["body"] for m in live.ok("receive", "jobs", "--max", "10")["messages"]] == ["new"]


def test_redrive_moves_dead_letters_back_and_shows_the_task(live: Live) -> None:
    assert live.ok("queue", "create", "dead")["queueName"] == "dead"
    work = live.ok("queue", "create", "work", "--max-delivery-count", "1", "--dlq", "dead")
    assert work["deadLetterQueue"] == "dead"
    _put(live, "work", "poison")
    assert [m["body"] for m in live.ok("receive", "work", "--visibility", "0")["messages"]] == [
        "poison"
    ]
    # Delivered maxDeliveryCount times: the next receive moves it to the dead-letter queue.
    assert live.ok("receive", "work")["messages"] == []
    assert size(live, "dead") == 1
    started = live.ok("redrive", "dead", "--max-per-second", "100")
    task = started["taskId"]
    deadline = time.monotonic() + 30
    status = live.ok("redrive", "dead", "--status", task)
    while status["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.1)  # polls the task's state (what the test waits for), bounded above
        status = live.ok("redrive", "dead", "--status", task)
    assert status["status"] == "completed" and status["moved"] == status["total"] == 1
    assert [m["body"] for m in live.ok("receive", "work")["messages"]] == ["poison"]
    bad = live.run("redrive", "dead", "--status", task, "--to", "work")
    assert bad.returncode == 2 and "--status" in bad.stderr
    unknown = live.run("redrive", "dead", "--status", "no-such-task")
    assert unknown.returncode == 1 and "404" in unknown.stderr
