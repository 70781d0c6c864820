"""The FIFO tools around the checker: `cassieq fifo-check --check-events` (its exit code and
JSON), chaos --fifo's mapping of chaos options onto the workload, and `cassieq bench fifo`'s
turns and ratio, from figures written by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cassieq.cli.main import cli
from cassieq.config import Settings
from cassieq.tools.bench.fifo import FifoBench, fifo_table, summarise, turn_order
from cassieq.tools.chaos.fifo import fifo_shape
from cassieq.tools.chaos.options import ChaosOptions
from cassieq.tools.fifo.events import Delivery, EventLog, Send, write_jsonl


def _log(out_of_order: bool) -> EventLog:
    """Two messages of one group, delivered in send order or the other way round."""
    log = EventLog()
    for i in range(2):
        log.sends.append(
            Send(
                group="g",
                index=i,
                dedup_id=f"d{i}",
                sent_at=i * 0.1,
                answered_at=i * 0.1 + 0.05,
                message_id=f"m{i}",
                sequence_number=str(10 + i),
            )
        )
    order = [1, 0] if out_of_order else [0, 1]
    for call, i in enumerate(order):
        at = 1.0 + call
        log.deliveries.append(
            Delivery(
                consumer=0,
                call=call,
                position=0,
                message_id=f"m{i}",
                group="g",
                sequence_number=str(10 + i),
                body_group="g",
                index=i,
                dedup_id=f"d{i}",
                received_at=at,
                answered_at=at + 0.05,
                lease_end=at + 5,
                outcome="acked",
                ack_sent_at=at + 0.1,
                ack_answered_at=at + 0.15,
            )
        )
    return log


@pytest.mark.parametrize(
    ("out_of_order", "code", "order_violations"), [(False, 0, 0), (True, 1, 1)]
)
def test_check_events_exits_1_on_a_violation(
    tmp_path: Path, out_of_order: bool, code: int, order_violations: int
) -> None:
    path = tmp_path / "events.jsonl"
    write_jsonl(_log(out_of_order), path)
    result = CliRunner().invoke(cli, ["fifo-check", "--check-events", str(path), "--json"])
    assert result.exit_code == code, result.output
    summary = json.loads(result.output)
    assert summary["order_violations"] == order_violations
    assert summary["messages"] == 2
    text = CliRunner().invoke(cli, ["fifo-check", "--check-events", str(path)])
    assert ("ORDER violations      1" in text.output) is out_of_order
    assert text.output.rstrip().endswith("PASS") is not out_of_order


def test_endpoint_without_credentials_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    result = CliRunner().invoke(cli, ["fifo-check", "--endpoint", "http://127.0.0.1:1"])
    assert result.exit_code == 2
    assert "--endpoint needs --account and --key" in result.output


def test_chaos_options_map_onto_the_fifo_workload() -> None:
    opts = ChaosOptions(messages=4000, consumers=8, lease=5, unacked_every=20, rate=40.0)
    shape = fifo_shape(opts, groups=20)
    assert (shape.groups, shape.per_group, shape.consumers) == (20, 200, 8)
    assert shape.visibility == 5
    assert shape.expire_fraction == pytest.approx(0.05)
    assert shape.rate == 40.0
    assert shape.timeout == opts.deadline
    assert fifo_shape(ChaosOptions(unacked_every=0), groups=3).expire_fraction == 0.0


def test_bench_turns_alternate_and_the_ratio_is_fifo_over_standard() -> None:
    assert turn_order(2) == ["standard", "fifo", "fifo", "standard"] * 2
    turns = [
        {"kind": k, "e2e_per_s": v, "sent_per_s": v, "e2e_p50_ms": 1.0, "e2e_p99_ms": 2.0}
        for k, v in [("standard", 100.0), ("fifo", 40.0), ("fifo", 60.0), ("standard", 100.0)]
    ]
    result = summarise(turns, FifoBench(), Settings())
    assert (result["standard_e2e_per_s"], result["fifo_e2e_per_s"]) == (100.0, 50.0)
    assert result["ratio"] == 0.5
    assert result["meets_target"] is True
    assert "ratio 0.5 (meets the target 0.5)" in fifo_table(result)
    turns[1]["e2e_per_s"] = 39.0
    below = summarise(turns, FifoBench(), Settings())
    assert below["ratio"] == 0.495
    assert below["meets_target"] is False
    assert "below the target" in fifo_table(below)
