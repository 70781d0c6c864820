"""`cassieq pipeline export` from a subscription's position or a time (issue 36): what the
export holds is what an ordered read from the committed position reads, a late write at
its original place and never its repair copy. The command runs in this process (click's
runner) on the suite's one Spark session: no Spark start of its own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from cassieq.model import OutgoingMessage, QueueOptions
from cassieq.pipeline import export
from cassieq.pipeline.commands import _time_ms
from cassieq.pipeline.commands import export as export_command
from cassieq.pipeline.store_access import StoreAccess
from tests.conftest import CassandraNode
from tests.engine.test_holes_and_repair import sealed_bucket_with_late_write
from tests.pipeline.conftest import World


def _export(node: CassandraNode, *args: str) -> Result:
    s = node.settings
    env = {
        "CASSIEQ_CASSANDRA_HOSTS": ",".join(s.cassandra_hosts),
        "CASSIEQ_CASSANDRA_PORT": str(s.cassandra_port),
    }
    return CliRunner().invoke(
        export_command, [*args, "--keyspace", s.keyspace, "--quiet", "--json"], env=env
    )


def _rows(spark: Any, out: Path) -> list[tuple[int, int, str]]:
    frame = spark.read.parquet(str(out))
    return sorted((r["partition"], r["monoton"], r["message"]) for r in frame.collect())


def test_from_a_subscription_skips_what_it_read_and_repair_copies(
    spark: Any, access: StoreAccess, world: World, tmp_path: Path, cassandra_node: CassandraNode
) -> None:
    clock, engine, account, run = world.parts()
    # q: a (monoton 0), a slow writer's "late" landing at 1 after the reader passed it, b (2)
    queue = run(sealed_bucket_with_late_write(engine, account, clock))
    subs = engine.subscriptions
    # Created before repair runs: a queue with subscriptions keeps its finished buckets.
    run(subs.create(account, "q", "s", "ordered", "earliest"))
    clock.advance(15)
    assert run(engine.repair(account, "q")) == 1  # "late" copied to monoton 3
    run(engine.put(account, "q", "c"))  # 4
    copies = [m for b in range(3) for m in run(access.store.read_bucket(queue.id, b)).messages]
    assert [(m.monoton, m.republished_from) for m in copies if m.message == "late"] == [
        (1, None),
        (3, 1),
    ]

    # From the start: every message once, the late one at its original monoton (a plain
    # export has it at its copy's).
    out = tmp_path / "all"
    done = _export(cassandra_node, "--account", account, "--queue", "q", "--out", str(out),
                   "--from-subscription", "s")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert _rows(spark, out) == [(0, 0, "a"), (0, 1, "late"), (0, 2, "b"), (0, 4, "c")]
    plain = export.select(spark, access.settings.keyspace, queue, 0, 3, export.ExportFilter())
    assert sorted(r["monoton"] for r in plain.collect()) == [0, 2, 3, 4]

    # The subscription reads a and late and commits: its copy at 3 is not exported again.
    read = run(subs.read(account, "q", "s", 2))
    assert [m.body for m in read.messages] == ["a", "late"]
    run(subs.commit(account, "q", "s", read.messages[-1].position, None))
    assert access.subscription_start(queue, "s") == (2,)
    out = tmp_path / "rest"
    done = _export(cassandra_node, "--account", account, "--queue", "q", "--out", str(out),
                   "--from-subscription", "s")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert '"rows":2' in done.output
    rest = run(subs.read(account, "q", "s", 100))
    assert _rows(spark, out) == [(0, 2, "b"), (0, 4, "c")]
    assert [(m.partition, m.monoton, m.body) for m in rest.messages] == _rows(spark, out)


def test_from_a_subscription_of_a_partitioned_queue(
    spark: Any, access: StoreAccess, world: World
) -> None:
    """Each partition from its own monoton: the export equals what a read from the
    committed position reads, in every partition."""
    _, engine, account, run = world.parts()
    queue, _ = run(engine.create_queue(account, "wide", QueueOptions(bucket_size=2, partitions=3)))
    run(engine.subscriptions.create(account, "wide", "s", "ordered", "earliest"))
    for i in range(9):  # single sends rotate: 3 per partition
        run(engine.send(account, "wide", [OutgoingMessage(body=f"m{i}")]))
    read = run(engine.subscriptions.read(account, "wide", "s", 4))
    assert len({m.partition for m in read.messages}) == 2  # partitions at 2, 2 and 0 read
    run(engine.subscriptions.commit(account, "wide", "s", read.messages[-1].position, None))

    start = access.subscription_start(queue, "s")
    assert sorted(start) == [0, 2, 2]
    flt = export.ExportFilter(from_position=start)
    frame = export.select(spark, access.settings.keyspace, queue, 0, 3, flt)
    got = sorted((r["partition"], r["monoton"], r["message"]) for r in frame.collect())
    rest = run(engine.subscriptions.read(account, "wide", "s", 100)).messages
    assert len(got) == 5
    assert got == sorted((m.partition, m.monoton, m.body) for m in rest)


def test_a_shared_subscription_starts_at_its_first_message_not_acked(
    access: StoreAccess, world: World
) -> None:
    _, engine, account, run = world.parts()
    queue, _ = run(engine.create_queue(account, "work", QueueOptions(bucket_size=2)))
    subs = engine.subscriptions
    run(subs.create(account, "work", "s", "shared", "earliest"))
    for i in range(6):
        run(engine.send(account, "work", [OutgoingMessage(body=f"m{i}")]))
    got = run(subs.receive(account, "work", "s", 5, 60))
    acked = [d.receipt for d in got if d.message in ("m0", "m1", "m3")]
    assert run(subs.ack_batch(account, "work", "s", acked)) == [None] * 3
    run(subs.receive(account, "work", "s", 1, 60))  # its scan moves the done position
    # Bucket 0 (m0, m1) is finished; m2 is delivered, not acked: the export starts there.
    assert access.subscription_start(queue, "s") == (2,)


def test_since_takes_v2_times_and_rounds_up_to_the_millisecond(
    spark: Any, world: World, tmp_path: Path, cassandra_node: CassandraNode
) -> None:
    clock, engine, account, run = world.parts()
    run(engine.create_queue(account, "t", QueueOptions()))
    run(engine.put(account, "t", "before"))
    clock.advance(1)
    at = clock.now()
    run(engine.put(account, "t", "at"))
    clock.advance(1)
    run(engine.put(account, "t", "after"))
    second, ms = divmod(at, 1000)
    local = datetime.fromtimestamp(second, UTC).astimezone(timezone(timedelta(hours=2)))
    exact = f"{local:%Y-%m-%dT%H:%M:%S}.{ms:03d}+02:00"
    assert _time_ms(exact, "--since") == at  # the form v2 takes, with its offset
    # Half a millisecond later: "at" was stamped within this millisecond, before the time
    # for all one knows, so it is not "at or after" it (as v2's seek rounds).
    out = tmp_path / "since"
    done = _export(cassandra_node, "--account", account, "--queue", "t", "--out", str(out),
                   "--since", exact.replace("+02:00", "5+02:00"))  # fmt: skip
    assert done.exit_code == 0, done.output
    assert [m for _, _, m in _rows(spark, out)] == ["after"]


def test_refusals_are_one_line_before_spark(
    world: World, tmp_path: Path, cassandra_node: CassandraNode
) -> None:
    _, engine, account, run = world.parts()
    run(engine.create_queue(account, "q", QueueOptions()))
    run(engine.subscriptions.create(account, "q", "s", "ordered", "earliest"))
    out = str(tmp_path / "out")
    base = ("--account", account, "--out", out)
    cases = [
        ((*base, "--queue", "q", "--from-subscription", "s", "--since", "2026-11-27T09:00:00Z"),
         2, "give --since or --from-subscription, not both"),
        ((*base, "--queue", "q", "--since", "yesterday"), 2, "not an RFC 3339 time"),
        ((*base, "--queue", "q", "--from-subscription", "nope"),
         1, "subscription 'nope' of queue 'q' does not exist"),
        ((*base, "--queue", "nope", "--from-subscription", "s"),
         1, "queue 'nope' does not exist"),
    ]  # fmt: skip
    for args, code, words in cases:
        done = _export(cassandra_node, *args)
        assert done.exit_code == code, (args, done.output)
        assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
        [error] = [ln for ln in done.output.splitlines() if ln.startswith("Error")]
        assert words in error, (args, done.output)
    assert not Path(out).exists()
