"""`cassieq chaos --scenario both` against the three-node cluster: nothing lost, nothing
delivered twice within its lease, no 5xx, no 409 on a valid receipt, pointers together.

Needs the cluster started by `cassieq cassandra start --nodes 3`; fails (never skips) when
it does not answer. About 3 minutes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from cassieq.store.cassandra import CassandraUnavailable, connect

pytestmark = pytest.mark.cluster

# 500 messages at 8/s: a put phase of about a minute, the node killed at 1/3 of it and
# restarted at 2/3, server B killed and restarted in between; then the drain (lease 30 s).
ARGS = ["--scenario", "both", "--messages", "500", "--rate", "8", "--json"]
BOUND_S = 480


def _cluster_answers() -> None:
    from cassieq.devtools.cluster import ClusterConfig

    cfg = ClusterConfig.from_env()
    try:
        cluster, _ = connect(list(cfg.hosts), cfg.native_port, connect_timeout=5.0)
    except CassandraUnavailable as exc:
        pytest.fail(
            f"this test needs the three-node cluster (cassieq cassandra start --nodes 3): {exc}",
            pytrace=False,
        )
    cluster.shutdown()


def test_both_faults_lose_nothing_and_deliver_nothing_twice() -> None:
    _cluster_answers()
    done = subprocess.run(
        [sys.executable, "-m", "cassieq", "chaos", *ARGS],
        capture_output=True,
        text=True,
        timeout=BOUND_S,
    )
    try:
        result: dict[str, Any] = json.loads(done.stdout)["both"]
    except (json.JSONDecodeError, KeyError):
        pytest.fail(f"no result (exit {done.returncode}):\n{done.stdout}\n{done.stderr[-4000:]}")
    shown = json.dumps({k: v for k, v in result.items() if k != "samples"}, indent=1)
    assert "error" not in result, shown
    assert not result["timed_out"], shown
    assert result["puts_201"] >= 450, shown
    assert result["lost"] == 0, f"{shown}\n{result['samples'].get('lost')}"
    assert result["double_within_lease"] == 0, shown
    assert result["delivered_after_ack"] == 0, shown
    assert result["http_5xx"] == 0, shown
    assert result["acks_409_valid"] == 0, shown
    assert result["pointers_within_one_bucket"], shown
    # Some deliveries were left unacked on purpose and came back after their lease: without
    # them the soak would not look at redelivery at all.
    assert result["left_unacked"] > 0, shown
    assert result["redeliveries"] >= result["left_unacked"], shown
    assert result["fault_errors"] == [], shown
    assert [r["event"] for r in result["recoveries"]] == [
        "kill node 2",
        "kill server B",
        "restart server B",
        "restart node 2",
    ], shown
    assert done.returncode == 0, shown
