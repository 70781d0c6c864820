"""`cassieq bench` in miniature: it runs end to end and reports what the issue asks for.

Nothing here is timed: the figures are only checked for what must hold whatever the
machine (counts of LWTs a message cannot do without, every phase having moved messages).
"""

from __future__ import annotations

from typing import Any

import pytest

from cassieq.engine.life.monotons import MonotonStrategy
from cassieq.tools.bench.partitions import PartitionBench, partitions_table, run_partitions
from cassieq.tools.bench.report import table
from cassieq.tools.bench.run import run_bench
from cassieq.tools.bench.v2 import V2Settings
from tests.conftest import CassandraNode

TINY_V2 = V2Settings(batches=(1, 3), wake_samples=2, idle_waiters=5, idle_seconds=0.5)


async def test_a_short_bench_reports_every_figure(cassandra_node: CassandraNode) -> None:
    said: list[str] = []
    result = await run_bench(
        cassandra_node.settings,
        keyspace=f"{cassandra_node.settings.keyspace}_bench",
        clients=[1, 4],
        seconds=0.3,
        backlog=200,
        http=True,
        say=said.append,
        v2=TINY_V2,
    )
    for where in ("engine", "http"):
        for clients in ("1", "4"):
            figures = result[where][clients]
            for rate in ("put_per_s", "get_ack_per_s", "e2e_per_s"):
                assert figures[rate] > 0, (where, clients, rate)
            assert set(figures["latency_ms"]) == {"put", "get", "ack"}
    assert result["raw_lwt_per_s"]["4"] > 0 and result["raw_lwt_one_partition_per_s"] > 0
    # A delivery and an ack are each an LWT on the message's bucket partition.
    assert result["lwts_per_message"] >= result["message_partition_lwts_per_message"] >= 2
    assert result["min_lwts_per_message"] == 2
    assert result["put_per_s_per_put_strategy"] > 0
    assert result["backlog_ratio"] > 0
    assert "http_over_engine_e2e" in result and "e2e_over_lwt_bound" in result
    _check_v2(result["v2"])
    assert [row["passed"] in (True, False) for row in result["acceptance"]] == [True] * 5
    report = table(result)
    assert "LWT/s with all clients on one partition" in report
    assert "| acceptance (#15) |" in report and "v2, 4 clients" in report
    assert any("HTTP API" in line for line in said)
    assert any("v2 HTTP API" in line for line in said)
    assert any("in turns on one server" in line for line in said)
    assert "HTTP e2e in turns on one server (12 turns of 0.3 s)" in report
    assert "the two sections minutes apart" in report
    apart = result["v2"]["http"]["3"]["e2e_per_s"] / result["http"]["4"]["e2e_per_s"]
    assert result["v2"]["http_e2e_ratio_minutes_apart"] == pytest.approx(apart, abs=0.01)
    # The turns' queues (v1, v2, SQS), in a keyspace of their own, finalize (and repair)
    # nothing meanwhile.
    paired = f"{cassandra_node.settings.keyspace}_bench_paired"
    rows = cassandra_node.session.execute(f"SELECT finalize_seconds FROM {paired}.queues")
    assert sorted(row.finalize_seconds for row in rows) == [3600, 3600, 3600]
    assert "| sqs (boto3) | 3 |" in report


def _check_v2(v2: dict[str, Any]) -> None:
    assert v2["clients"] == 4
    for where in ("engine", "http"):
        assert set(v2[where]) == {"1", "3"}, where
        for batch, figures in v2[where].items():
            for rate in ("put_per_s", "receive_ack_per_s", "e2e_per_s"):
                assert figures[rate] > 0, (where, batch, rate)
            assert set(figures["latency_ms"]) == {"send", "receive", "ack"}
    # boto3 through the SQS endpoint, the largest batch (3 here), next to the v2 HTTP figures.
    assert set(v2["sqs"]) == {"3"}
    sqs = v2["sqs"]["3"]
    for rate in ("put_per_s", "receive_ack_per_s", "e2e_per_s"):
        assert sqs[rate] > 0, ("sqs", rate)
    assert set(sqs["latency_ms"]) == {"send", "receive", "ack"}
    # v1, v2 and SQS over HTTP in turns on one server (two rounds of v1 v2 sqs sqs v2 v1 by
    # default: the SQS turns were added for #38's CPU figures).
    paired = v2["paired_http_e2e"]
    assert [t["api"] for t in paired["turns"]] == ["v1", "v2", "sqs", "sqs", "v2", "v1"] * 2
    assert all(t["e2e_per_s"] > 0 and t["client_cores"] > 0 for t in paired["turns"])
    assert paired["batch"] == 3
    # From the unrounded rates; the JSON's are rounded to 0.1.
    quotient = paired["v2_e2e_per_s"] / paired["v1_e2e_per_s"]
    assert paired["ratio"] == pytest.approx(quotient, rel=0.01)
    # Some LWT is spent per message whatever the batching (at least the deliveries' batch).
    assert all(v2["lwts_per_message"][b] > 0 for b in ("1", "3"))
    for case in ("same_server", "other_server"):
        wake = v2["wake_up_ms"][case]
        assert wake["samples"] + wake["missed"] == 2, case
        assert wake["samples"] > 0 and wake["p95"] >= wake["p50"] > 0, (case, wake)
    idle = v2["idle_waiters"]
    assert idle["waiters_per_server"] == 5 and idle["returned_early"] == 0
    assert set(idle["reads_per_s"]) == {"A", "B"}
    assert all(n >= 0 for n in idle["reads_per_s"].values())


@pytest.mark.parametrize("strategy", ["grouped", "per_put"])
async def test_the_partitions_bench_counts_every_lwt_of_either_put_strategy(
    cassandra_node: CassandraNode, strategy: MonotonStrategy
) -> None:
    """`cassieq bench partitions --put-strategy`: per_put takes a monoton for every put (the
    original design, whose contention partitions divide), grouped one per group."""
    bench = PartitionBench(
        counts=(1, 2), servers=2, producers=6, consumers=1, seconds=1.0, put_strategy=strategy
    )
    keyspace = f"{cassandra_node.settings.keyspace}_bench_parts"
    result = await run_partitions(cassandra_node.settings, keyspace=keyspace, bench=bench,
                                  say=lambda _: None)  # fmt: skip
    assert result["put_strategy"] == strategy
    assert [r["partitions"] for r in result["partitions"]] == [1, 2]
    for row in result["partitions"]:
        assert row["messages_put"] > 0 and row["messages_acked"] > 0, row
        monoton = row["lwt_per_message_by_primitive"]["cas_monoton"]
        applied = monoton.get("applied", 0) + monoton.get("timeout_applied", 0)
        if strategy == "per_put":
            assert applied >= 1.0, row  # one monoton of its own for every put
        # Every attempt counted: applied, not applied, timed out.
        assert sum(monoton.values()) >= applied > 0, row
        assert row["lwt_attempts_per_message"] >= sum(monoton.values()), row
    assert f"puts {strategy}" in partitions_table(result)
