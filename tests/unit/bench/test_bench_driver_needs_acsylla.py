"""`cassieq bench driver` without acsylla says what to install, before it connects."""

from __future__ import annotations

import sys

import pytest

from cassieq.config import Settings
from cassieq.tools.bench.drivers import DriverBenchError, _acsylla


async def test_without_acsylla_the_run_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "acsylla", None)  # what an absent package gives
    # A port nothing listens on: the error must come before any connection is tried.
    settings = Settings.from_env(cassandra_port=1)
    with pytest.raises(DriverBenchError, match="acsylla is not installed"):
        await _acsylla(settings, "cassieq_bench_driver", 1, 0.1)
