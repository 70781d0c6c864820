"""The scale-out measurement's bookkeeping (cassieq/tools/bench/scaleout.py), without Cassandra."""

from __future__ import annotations

import os
import time

from cassieq.tools.bench.measure import Latencies
from cassieq.tools.bench.scaleout import _cpu_seconds, _merged_latencies, _ratio, _summary, parser


def test_defaults_measure_one_against_eight_partitions_with_contending_servers() -> None:
    args = parser().parse_args([])
    assert (args.partitions, args.layout, args.batch) == ("1,8", "auto", 10)
    assert (args.clients, args.engines, args.lwt_clients) == (16, 8, 16)
    assert args.phases == "lwt,e2e" and not args.recreate
    given = parser().parse_args(["--partitions", "1,4,16", "--layout", "queues", "--engines", "1"])
    assert (given.partitions, given.layout, given.engines) == ("1,4,16", "queues", 1)


def test_ratio_and_summary() -> None:
    section = {"1": {"e2e_per_s": 12.5}, "8": {"e2e_per_s": 50.0}, "0": {"e2e_per_s": 0.0}}
    assert _ratio(section, "8", "1", "e2e_per_s") == 4.0
    assert _ratio(section, "8", "0", "e2e_per_s") == 50000.0  # no division by zero
    assert _summary([4.0, 1.0, 3.0, 2.0]) == {"mean": 2.5, "p50": 3.0, "p90": 4.0, "p99": 4.0}
    assert _summary([]) == {"mean": 0.0, "p50": 0.0, "p90": 0.0, "p99": 0.0}


def test_cpu_seconds_count_live_processes_and_skip_gone_ones() -> None:
    before = _cpu_seconds([os.getpid()])
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:  # burn a little CPU of our own
        pass
    assert _cpu_seconds([os.getpid()]) > before
    assert _cpu_seconds([2**22 + 12345]) == 0.0  # above any pid: gone, not an error


def test_latencies_of_all_engines_are_merged() -> None:
    class Target:
        def __init__(self, values: list[float]) -> None:
            self.latencies = Latencies({"send": values})

    merged = _merged_latencies([Target([1.0, 2.0]), Target([3.0, 4.0])])  # type: ignore[list-item]
    assert merged == {"send": {"p50": 3.0, "p99": 4.0}}
