"""`cassieq cassandra start|stop` on a second node of its own (ports 9142/7100)."""

from __future__ import annotations

import os
import subprocess
import sys

from cassieq.tools.devcluster.cassandra import NodeConfig, node_status

PORT, STORAGE_PORT = "9142", "7100"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "CASSIEQ_CASSANDRA_STORAGE_PORT": STORAGE_PORT,
        "CASSIEQ_CASSANDRA_HEAP": "512M",
    }
    return subprocess.run(
        [sys.executable, "-m", "cassieq", "cassandra", *args, "--port", PORT],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_start_twice_gives_one_node_and_stop_stops_it() -> None:
    cfg = NodeConfig.from_env(native_port=int(PORT), storage_port=int(STORAGE_PORT))
    try:
        first = _cli("start")
        assert first.returncode == 0, first.stderr
        assert "ready in" in first.stdout
        pid = node_status(cfg).pid
        assert pid is not None

        second = _cli("start")
        assert second.returncode == 0, second.stderr
        assert "already running" in second.stdout
        assert node_status(cfg).pid == pid

        stopped = _cli("stop")
        assert stopped.returncode == 0, stopped.stderr
        after = node_status(cfg)
        assert not after.reachable and after.pid is None
        assert _cli("status").returncode == 3
    finally:
        _cli("stop")
