"""Issue #15's acceptance rows, from figures written by hand: each check passes and fails
where its limit says, and the text report shows them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from cassieq.config import Settings
from cassieq.store.cassandra import SchemaError
from cassieq.tools.bench.report import _acceptance, _v2_table
from cassieq.tools.bench.run import run_bench
from cassieq.tools.bench.v2 import V2Settings
from cassieq.tools.bench.verdict import acceptance

RATES = {"put_per_s": 1.0, "receive_ack_per_s": 1.0, "e2e_per_s": 1.0, "latency_ms": {}}


def run(**change: Any) -> dict[str, Any]:
    result: dict[str, Any] = {
        "http": {"32": {"e2e_per_s": 100.0}},
        "v2": {
            "clients": 32,
            "engine": {"1": RATES, "10": RATES},
            "http": {"1": RATES, "10": {**RATES, "e2e_per_s": 600.0}},
            "lwts_per_message": {"1": 2.0, "10": 0.4},
            "wake_up_ms": {
                "same_server": {"p50": 12.0, "p95": 30.0, "samples": 30, "missed": 0},
                "other_server": {"p50": 900.0, "p95": 1400.0, "samples": 30, "missed": 0},
            },
            "idle_waiters": {
                "waiters_per_server": 100,
                "seconds": 10.0,
                "reads_per_s": {"A": 1.0, "B": 2.5},
                "lwts_per_s": {"A": 0.0, "B": 0.0},
                "returned_early": 0,
            },
        },
    }
    for path, value in change.items():
        *keys, last = path.split("__")
        node = result
        for key in keys:
            node = node[key]
        node[last] = value
    return copy.deepcopy(result)


def verdicts(result: dict[str, Any]) -> list[tuple[float, bool]]:
    return [(row["figure"], row["passed"]) for row in acceptance(result)]


def test_figures_within_every_limit_pass() -> None:
    assert verdicts(run()) == [(0.4, True), (6.0, True), (12.0, True), (900.0, True), (2.5, True)]


def test_each_check_fails_past_its_limit() -> None:
    assert verdicts(run(v2__lwts_per_message={"1": 2.0, "10": 0.51}))[0] == (0.51, False)
    assert verdicts(run(http={"32": {"e2e_per_s": 150.0}}))[1] == (4.0, False)
    slow = {"p50": 51.0, "p95": 60.0, "samples": 30, "missed": 0}
    assert verdicts(run(v2__wake_up_ms__same_server=slow))[2] == (51.0, False)
    idle = run()["v2"]["idle_waiters"] | {"reads_per_s": {"A": 3.1, "B": 0.0}}
    assert verdicts(run(v2__idle_waiters=idle))[4] == (3.1, False)


def test_unwoken_waiters_and_early_returns_fail_whatever_the_figure() -> None:
    unwoken = {"p50": 0.0, "p95": 0.0, "samples": 0, "missed": 30}
    assert verdicts(run(v2__wake_up_ms__other_server=unwoken))[3] == (0.0, False)
    idle = run()["v2"]["idle_waiters"] | {"returned_early": 3}
    assert verdicts(run(v2__idle_waiters=idle))[4] == (2.5, False)


def test_without_http_only_the_in_process_checks_are_made() -> None:
    result = run()
    del result["http"], result["v2"]["http"], result["v2"]["wake_up_ms"]
    assert [row["check"].split(",")[0] for row in acceptance(result)] == [
        "v2 LWTs per message put->receive->ack",
        "store reads/s per server",
    ]
    assert acceptance({"engine": {}}) == []


def test_the_report_shows_the_v2_table_and_the_verdicts() -> None:
    result = run(v2__lwts_per_message={"1": 2.0, "10": 0.6})
    table = "\n".join(_v2_table(result["v2"]))
    assert "| engine | 10 | 1.0 | 1.0 | 1.0 | 0.6 |" in table
    assert "p50 900.0 ms" in table and "store reads/s A 1.0, B 2.5" in table
    rows = _acceptance(acceptance(result))
    assert rows[2].endswith("| 0.6 | <= 0.5 | FAIL |")
    assert rows[3].endswith("| 6.0 | >= 5 | pass |")


def test_turns_on_one_server_give_the_ratio_where_the_run_has_them() -> None:
    turns = [{"api": api, "e2e_per_s": 1.0} for api in ("v1", "v2", "v2", "v1")]
    paired = {
        "batch": 10,
        "seconds_per_turn": 5.0,
        "turns": turns,
        "v1_e2e_per_s": 100.0,
        "v2_e2e_per_s": 480.0,
        "ratio": 4.8,
    }
    result = run(v2__paired_http_e2e=paired)
    row = acceptance(result)[1]
    # The sections' own figures (600 over 100, minutes apart) would have passed.
    assert (row["figure"], row["passed"]) == (4.8, False)
    assert row["check"].endswith("in turns on one server")
    assert acceptance(run())[1]["check"].endswith("minutes apart")
    table = "\n".join(_v2_table(result["v2"]))
    assert "(4 turns of 5.0 s): v1 100.0/s, v2 batches of 10 480.0/s, ratio 4.8" in table


async def test_a_keyspace_too_long_for_the_turns_is_refused_before_the_run() -> None:
    # 42 characters pass as a keyspace; with "_paired" (49) the turns' would not.
    with pytest.raises(SchemaError, match="_paired"):
        await run_bench(
            Settings(),
            keyspace="k" * 42,
            clients=[1],
            seconds=0.1,
            backlog=1,
            http=True,
            say=print,
            v2=V2Settings(),
        )
