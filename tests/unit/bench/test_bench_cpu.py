"""Issue #38's CPU figures: a process's CPU time read from /proc (its children's too), and
the run's summary of CPU per 1,000 messages per API, from figures written by hand."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import pytest

from cassieq.tools.bench.cpu import CpuMeter, process_cpu_seconds
from cassieq.tools.bench.report import _api_cost
from cassieq.tools.bench.verdict import api_cost

needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="no /proc")


def _burn(seconds: float) -> None:
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass


@needs_proc
def test_a_process_cpu_time_grows_with_its_work() -> None:
    before = process_cpu_seconds(os.getpid())
    _burn(0.3)
    after = process_cpu_seconds(os.getpid())
    assert before is not None and after is not None
    assert after - before >= 0.25


@needs_proc
def test_a_busy_child_counts_toward_its_parent() -> None:
    # A supervisor with a busy worker (cassieq serve --workers): the worker's CPU is the
    # server's too.
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys; subprocess.run([sys.executable, '-c', "
            "'import time\\nt = time.process_time() + 0.6\\nwhile time.process_time() < t: pass'])",
        ]
    )
    try:
        meter = CpuMeter(parent.pid)
        meter.start()
        time.sleep(0.2)  # the child is spawned and busy by now, its parent idle
        spent = 0.0
        for _ in range(50):
            spent = meter.spent().get("server", 0.0)
            if spent >= 0.2 or parent.poll() is not None:
                break
            time.sleep(0.05)
        assert spent >= 0.2
    finally:
        parent.wait(30)


def test_no_pid_reads_as_no_server_figure() -> None:
    meter = CpuMeter(None)
    meter.start()
    figures = meter.per_1000(100)
    assert "server_cpu_s_per_1000" not in figures
    assert figures["client_cpu_s_per_1000"] >= 0


def test_a_gone_process_reads_as_none() -> None:
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    assert process_cpu_seconds(finished.pid) is None


def _row(e2e: float, server: float, client: float) -> dict[str, Any]:
    return {"e2e_per_s": e2e, "server_cpu_s_per_1000": server, "client_cpu_s_per_1000": client}


def test_the_summary_takes_each_api_at_the_most_clients_and_the_turns() -> None:
    result = {
        "http": {"8": _row(50, 9, 9), "32": _row(300, 2.0, 0.7)},
        "v2": {
            "clients": 32,
            "http": {"1": _row(400, 9, 9), "10": _row(2000, 0.5, 0.1)},
            "sqs": {"10": _row(1700, 0.8, 0.5)},
            "paired_http_e2e": {
                "batch": 10,
                "sqs_batch": 10,
                "v1_e2e_per_s": 310.0,
                "v2_e2e_per_s": 2100.0,
                "sqs_e2e_per_s": 1800.0,
                "sqs_over_v2": 0.86,
                "cpu_s_per_1000": {
                    api: {"server_cpu_s_per_1000": s, "client_cpu_s_per_1000": c}
                    for api, s, c in (("v1", 1.9, 0.6), ("v2", 0.45, 0.1), ("sqs", 0.7, 0.5))
                },
            },
        },
    }
    cost = api_cost(result)
    assert cost["sqs_over_v2_http_e2e"] == 0.85
    assert cost["v1"] == _row(300, 2.0, 0.7)
    assert cost["v2_b10"] == _row(2000, 0.5, 0.1)
    assert cost["sqs_b10"] == _row(1700, 0.8, 0.5)
    turns = cost["in_turns"]
    assert turns["sqs_over_v2_e2e"] == 0.86
    assert turns["sqs_b10"] == _row(1800.0, 0.7, 0.5)
    assert turns["v1"] == _row(310.0, 1.9, 0.6)
    text = "\n".join(_api_cost(cost))
    assert "sqs_b10: 1700 e2e/s; CPU s per 1,000 messages e2e: server 0.8, client 0.5" in text
    assert "in turns on one server: SQS e2e ÷ v2 e2e 0.86" in text
