"""The CLI on FIFO queues (issue 37 item 6), run for real in a subprocess against a live
server on each store: `queue create --fifo`, `put --group --dedup-id` (the id, sequence
number and duplicate flag printed), `receive` and `peek` showing group and sequence."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli_v2 import Live, lines_file, live

__all__ = ["live"]  # the fixture


def test_fifo_queue_put_with_group_and_dedup_id_then_receive_and_peek(live: Live) -> None:
    created = live.ok("queue", "create", "orders", "--fifo")
    assert (created["queueName"], created["fifo"], created["contentBasedDeduplication"]) == (
        "orders",
        True,
        False,
    )
    first = live.ok("put", "orders", "pay 10", "--group", "customer-1", "--dedup-id", "pay-1")
    assert first["put"] == 1 and first["duplicate"] is False
    assert set(first) == {"queueName", "put", "id", "sequenceNumber", "duplicate"}
    again = live.ok("put", "orders", "pay 10", "--group", "customer-1", "--dedup-id", "pay-1")
    assert again["duplicate"] is True and again["id"] == first["id"]
    second = live.ok("put", "orders", "pay 20", "--group", "customer-1", "--dedup-id", "pay-2")
    assert int(second["sequenceNumber"]) > int(first["sequenceNumber"])

    peeked = live.run("peek", "orders", "--plain")
    assert peeked.returncode == 0, peeked.stderr
    header, *rows = peeked.stdout.splitlines()
    assert header.split("\t")[-2:] == ["groupId", "sequenceNumber"]
    assert [r.split("\t")[-2:] for r in rows] == [
        ["customer-1", first["sequenceNumber"]],
        ["customer-1", second["sequenceNumber"]],
    ]

    # The group's messages in order, as many as the answer holds (as SQS answers); then
    # none while they are in flight.
    received = live.run("receive", "orders", "--max", "10")
    assert received.returncode == 0, received.stderr
    assert f"groupId customer-1  sequenceNumber {first['sequenceNumber']}" in received.stdout
    out = received.stdout
    assert "body: pay 10" in out and out.index("pay 10") < out.index("pay 20")
    assert "pay" not in live.run("receive", "orders", "--max", "10").stdout

    # A FIFO send without a group is refused, the reason named.
    refused = live.run("put", "orders", "no group")
    assert refused.returncode == 1 and "groupId" in refused.stderr, refused.stderr


def test_put_file_gives_lines_a_group_and_counts_duplicates(live: Live, tmp_path: Path) -> None:
    assert live.ok("queue", "create", "orders", "--fifo", "--content-based-dedup")["fifo"]
    entries = [
        {"body": "a", "groupId": "g1", "deduplicationId": "a-1"},
        {"body": "a again", "groupId": "g1", "deduplicationId": "a-1"},  # a duplicate
        {"body": "b"},  # takes --group
        {"body": "b"},  # content-based: a duplicate of the line before
    ]
    file = lines_file(tmp_path, [json.dumps(e) for e in entries])
    done = live.ok("put", "orders", "--file", file, "--jsonl", "--group", "g2")
    assert done == {"queueName": "orders", "put": 4, "duplicates": 2}
    got = live.ok("receive", "orders", "--max", "10")["messages"]
    assert sorted((m["body"], m["groupId"]) for m in got) == [("a", "g1"), ("b", "g2")]
    # --dedup-id names one message: with --file it is a usage error.
    usage = live.run("put", "orders", "--file", file, "--dedup-id", "x")
    assert usage.returncode == 2 and "--dedup-id" in usage.stderr


def test_a_standard_queue_shows_the_group_and_no_fifo_fields(live: Live) -> None:
    plain = live.ok("put", "jobs", "hello", "--group", "tenant-1")
    assert plain == {"queueName": "jobs", "put": 1}  # a standard queue's answer, as before
    received = live.run("receive", "jobs")
    assert received.returncode == 0, received.stderr
    first_line = received.stdout.splitlines()[0]
    assert first_line.endswith("groupId tenant-1") and "sequenceNumber" not in first_line
