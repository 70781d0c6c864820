"""`cassieq bench` in miniature: it runs end to end and reports what the issue asks for.

Nothing here is timed: the figures are only checked for what must hold whatever the
machine (counts of LWTs a message cannot do without, every phase having moved messages).
"""

from __future__ import annotations

from cassieq.bench.report import table
from cassieq.bench.run import run_bench
from tests.conftest import CassandraNode


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
    report = table(result)
    assert "LWT/s with all clients on one partition" in report
    assert any("HTTP API" in line for line in said)
