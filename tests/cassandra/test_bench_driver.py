"""`cassieq bench driver` in miniature: both drivers send every kind of request, each one
counted is applied (the run reads the rows back and fails otherwise), and the report has
every figure. Nothing is timed: which driver is cheaper is the command's to print."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cassieq.cli.main import cli
from cassieq.tools.bench.drivers import (
    DRIVERS,
    REQUESTS,
    DriverBenchError,
    _held_as_counted,
    drivers_table,
    run_drivers,
)
from tests.conftest import CassandraNode


async def test_both_drivers_send_each_request_and_every_update_counted_is_held(
    cassandra_node: CassandraNode,
) -> None:
    said: list[str] = []
    result = await run_drivers(
        cassandra_node.settings,
        keyspace=f"{cassandra_node.settings.keyspace}_driver",
        clients=3,
        seconds=0.3,
        say=said.append,
    )
    for driver in DRIVERS:
        for request in REQUESTS:
            figures = result["drivers"][driver][request]
            assert figures["requests"] > 0, (driver, request)
            assert figures["per_s"] > 0 and figures["cpu_ms_per_request"] > 0, figures
    assert set(result["cpu_ratio"]) == set(REQUESTS)
    assert len(said) == 2
    text = drivers_table(result)
    assert all(r in text for r in REQUESTS) and "acsylla ÷ python" in text


def test_rows_holding_fewer_updates_than_counted_fail_the_run() -> None:
    held = {0: 4, **{c: 2 for c in range(1, 11)}}
    _held_as_counted(held, 4, 2, "x")  # as counted
    with pytest.raises(DriverBenchError, match="the run counted"):
        _held_as_counted({**held, 7: 1}, 4, 2, "x")


def test_the_command_prints_json(cassandra_node: CassandraNode) -> None:
    keyspace = f"{cassandra_node.settings.keyspace}_driver_cli"
    out = CliRunner().invoke(
        cli,
        ["bench", "driver", "--json", "--clients", "2", "--seconds", "0.2", "--keyspace", keyspace],
    )
    assert out.exit_code == 0, out.output
    assert '"cpu_ratio"' in out.output and '"acsylla"' in out.output
