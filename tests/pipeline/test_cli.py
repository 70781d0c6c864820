"""`cassieq pipeline ...` as people run it: a subprocess, its own Spark, JSON out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from cassieq.engine import FakeClock
from cassieq.model import QueueOptions
from tests.conftest import CassandraNode
from tests.pipeline.conftest import World, engine_on

CASSIEQ = str(Path(sys.executable).with_name("cassieq"))


def _run(
    node: CassandraNode, *args: str, keyspace: str | None = None
) -> subprocess.CompletedProcess[str]:
    s = node.settings
    env = {
        **os.environ,
        "CASSIEQ_KEYSPACE": keyspace or s.keyspace,
        "CASSIEQ_CASSANDRA_HOSTS": ",".join(s.cassandra_hosts),
        "CASSIEQ_CASSANDRA_PORT": str(s.cassandra_port),
    }
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, check=False)


def test_ingest_jsonl_then_stats_then_export_json(
    cassandra_node: CassandraNode, world: World, tmp_path: Path
) -> None:
    """On a partitioned queue: each job a JVM of its own, so the export's direct join is
    the first plan of its JVM (it failed there, "Couldn't find none#0")."""
    access, engine, account = world.access, world.engine, world.account
    access.run(engine.create_queue(account, "bulk", QueueOptions(bucket_size=10, partitions=2)))
    source = tmp_path / "in.jsonl"
    lines = [json.dumps({"message": f"m{i}"}) for i in range(250)]
    lines += ["", json.dumps({"message": {"nested": [1, 2]}})]  # blank lines are skipped
    source.write_text("\n".join(lines) + "\n")

    done = _run(cassandra_node, CASSIEQ, "pipeline", "ingest", "--account", account,
                "--queue", "bulk", "--input", str(source), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["job"] == "ingest" and summary["rows"] == 251
    assert summary["rows_per_s"] > 0 and summary["seconds"] > 0
    assert "[ingest]" in done.stderr  # progress went to stderr

    stats = _run(cassandra_node, CASSIEQ, "pipeline", "stats", "--account", account,
                 "--queue", "bulk", "--json")  # fmt: skip
    assert stats.returncode == 0, stats.stderr
    [line] = stats.stdout.splitlines()
    body = json.loads(line)
    assert (body["account"], body["queue"]) == (account, "bulk")
    assert body["published"] == 251 and body["backlog"] == 251
    assert body["acked"] == body["dead_lettered"] == body["in_flight"] == 0
    assert body["delivery_count_histogram"] == {"0": 251}
    assert body["ack_latency_ms"] == {"p50": None, "p95": None, "p99": None}
    assert body["oldest_unacked_age_s"] >= 0

    archive = tmp_path / "archive"
    exported = _run(cassandra_node, CASSIEQ, "pipeline", "export", "--account", account,
                    "--queue", "bulk", "--out", str(archive), "--json", "--quiet")  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout)["rows"] == 251
    assert list(archive.glob("*.parquet"))
    # The nested JSON value arrived as its JSON text.
    delivered = set()
    live = engine_on(access, FakeClock(start_ms=body["computed_at_ms"] + 1000))
    while (d := access.run(live.get_next(account, "bulk", 60))) is not None:
        delivered.add(d.message)
    assert '{"nested":[1,2]}' in delivered and len(delivered) == 251


def test_pipeline_errors_are_one_line(
    cassandra_node: CassandraNode, world: World, tmp_path: Path
) -> None:
    access, engine, account = world.access, world.engine, world.account
    access.run(engine.create_queue(account, "q", QueueOptions()))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"message": "ok"}\n{"message": \n')

    cases = [
        (("stats", "--account", account, "--queue", "nope"), "queue 'nope' does not exist"),
        (("stats", "--queue", "q"), "--queue needs --account"),
        (("ingest", "--account", account, "--queue", "q", "--input", str(bad)), "line 2"),
    ]
    for args, words in cases:
        done = _run(cassandra_node, CASSIEQ, "pipeline", *args, "--quiet")
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        errors = [ln for ln in done.stderr.splitlines() if ln.startswith("Error")]
        assert len(errors) == 1 and words in errors[0], done.stderr
        assert "Traceback" not in done.stderr
    # The refused file wrote nothing: line 2 failed its task before any reservation.
    assert access.run(access.store.read_monoton(access.queue(account, "q").id)) == 0


def test_job_runs_as_a_module_for_spark_submit_quiet_and_without_writing(
    cassandra_node: CassandraNode, world: World
) -> None:
    """The module form spark-submit runs; --quiet prints nothing on stderr, not Spark's log
    lines either (its JVM starts with a log4j configuration of ours); --no-write leaves the
    snapshot unwritten. One Spark start (each takes 25-50 s here) for the three."""
    access, engine, account = world.access, world.engine, world.account
    access.run(engine.create_queue(account, "m", QueueOptions()))
    access.run(engine.put(account, "m", "x"))
    done = _run(cassandra_node, sys.executable, "-m", "cassieq.pipeline.stats", "--account",
                account, "--queue", "m", "--no-write", "--json", "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["published"] == 1
    assert done.stderr == ""
    assert access.run(access.store.read_stats_snapshot(account, "m")) is None


def test_stats_of_a_queue_whose_finished_buckets_were_emptied(
    cassandra_node: CassandraNode, world: World
) -> None:
    """Finalized buckets are emptied (deleteBucketsAfterFinalize): each partition keeps only
    its static markers, which the connector reads as one row of nulls. The job used to die on
    it (int(None) in the histogram); it skips such rows and its counts equal the engine's."""
    access, account = world.access, world.account
    # Near the wall clock the job reads its "now" from, an hour behind it.
    clock = FakeClock(start_ms=int(time.time() * 1000) - 3_600_000)
    engine = engine_on(access, clock)
    options = QueueOptions(bucket_size=3, finalize_seconds=1, repair_poll_seconds=1)
    queue, _ = access.run(engine.create_queue(account, "emptied", options))
    for i in range(12):
        access.run(engine.put(account, "emptied", f"m{i}"))
    for _ in range(10):
        delivery = access.run(engine.get_next(account, "emptied", 30))
        assert delivery is not None
        access.run(engine.ack(account, "emptied", delivery.receipt))
    access.run(engine.settle())
    for _ in range(5):  # repair finalizes (and empties) each sealed bucket after its wait
        clock.advance(2)
        access.run(engine.repair(account, "emptied"))
    snaps = [access.run(access.store.read_bucket(queue.id, b)) for b in range(4)]
    emptied = [s for s in snaps if s.finalized_at is not None and not s.messages]
    assert emptied, "no bucket was finalized and emptied: the case under test did not arise"

    done = _run(cassandra_node, CASSIEQ, "pipeline", "stats", "--account", account,
                "--queue", "emptied", "--json", "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # --quiet through `cassieq pipeline` too
    body = json.loads(done.stdout)
    engine_stats = access.run(engine.statistics(account, "emptied"))
    assert (body["published"], body["acked"], body["dead_lettered"]) == (12, 10, 0)
    assert body["published"] == engine_stats.published
    assert body["acked"] == engine_stats.acked
    assert body["dead_lettered"] == engine_stats.dead_lettered
    assert body["in_flight"] == engine_stats.in_flight == 0
    assert body["backlog"] == engine_stats.size == 2
    assert body["delivered"] == engine_stats.delivered
    # The histogram and the row count describe the rows still stored, not the markers.
    stored = sum(len(s.messages) for s in snaps)
    assert body["rows_scanned"] == stored == 12 - 3 * len(emptied)
    assert sum(body["delivery_count_histogram"].values()) == stored


def test_what_a_job_names_is_looked_up_before_spark_starts(
    cassandra_node: CassandraNode, world: World, tmp_path: Path
) -> None:
    """A mistyped queue, an existing export folder: refused before Spark starts (it takes
    20 s and more here), each in one line naming what to do."""
    access, engine, account = world.access, world.engine, world.account
    access.run(engine.create_queue(account, "orders", QueueOptions()))
    taken = tmp_path / "archive"
    taken.mkdir()
    cases = [
        (("stats", "--account", account, "--queue", "ordrs"), "queue 'ordrs' does not exist"),
        (("export", "--account", account, "--queue", "ordrs", "--out", str(tmp_path / "new")),
         "queue 'ordrs' does not exist"),
        (("ingest", "--account", account, "--queue", "ordrs", "--input", str(taken)),
         "queue 'ordrs' does not exist"),
        (("stats", "--account", "no-such-account"), "account 'no-such-account' does not exist"),
        (("export", "--account", account, "--queue", "orders", "--out", str(taken)),
         "--overwrite"),
        (("export", "--account", account, "--queue", "orders", "--out", f"file://{taken}"),
         "--overwrite"),
    ]  # fmt: skip
    for args, words in cases:
        done = _run(cassandra_node, CASSIEQ, "pipeline", *args)  # not --quiet: progress shows
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert "starting Spark" not in done.stderr, (args, done.stderr)
        [error] = [ln for ln in done.stderr.splitlines() if ln.startswith("Error")]
        assert words in error, (args, done.stderr)
    assert "Set mode" not in error  # Spark's advice names its API, not the flag
    assert list(taken.iterdir()) == []


def test_keyspace_flag_wins_over_the_environment(
    cassandra_node: CassandraNode, world: World
) -> None:
    access, engine, account = world.access, world.engine, world.account
    access.run(engine.create_queue(account, "orders", QueueOptions()))
    args = ("pipeline", "stats", "--account", account, "--queue", "ordrs")
    elsewhere = "cassieq_no_such_keyspace"
    # The account is found (the keyspace is the flag's): the queue's name is what is wrong.
    done = _run(cassandra_node, CASSIEQ, *args, "--keyspace", cassandra_node.settings.keyspace,
                keyspace=elsewhere)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Error: queue 'ordrs' does not exist" in done.stderr
    done = _run(cassandra_node, CASSIEQ, *args, "--keyspace", elsewhere)
    assert done.returncode == 1, done.stderr
    [error] = [ln for ln in done.stderr.splitlines() if ln.startswith("Error")]
    assert f"keyspace '{elsewhere}' has no cassieq schema" in error, done.stderr
    assert f"cassieq schema apply --keyspace {elsewhere}" in error
