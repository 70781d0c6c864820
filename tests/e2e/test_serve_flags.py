"""`cassieq serve` flags win over the environment, as docs/operations/serving.md says."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from cassieq.cli.server import serve_settings
from cassieq.tools.bench.servers import free_port
from tests.api.conftest import ADMIN_TOKEN
from tests.cli_process import run_cassieq
from tests.conftest import CassandraNode


def test_serve_flags_win_over_the_environment(
    cassandra_store: object, cassandra_node: CassandraNode, tmp_path: Path
) -> None:
    s = cassandra_node.settings
    port, env_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSIEQ_")}
    env |= {
        "CASSIEQ_ADMIN_TOKEN": ADMIN_TOKEN,
        "CASSIEQ_PORT": str(env_port),  # the flags say otherwise: each must win
        "CASSIEQ_KEYSPACE": "no_such_keyspace_here",
        "CASSIEQ_CASSANDRA_PORT": "1",
        "CASSIEQ_LOG_FORMAT": "console",
    }
    flags = ["--port", str(port), "--keyspace", s.keyspace, "--log-format", "json"]
    flags += ["--cassandra-hosts", ",".join(s.cassandra_hosts)]
    flags += ["--cassandra-port", str(s.cassandra_port), "--log-level", "info"]
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "cassieq", "serve", *flags], env=env, stdout=out, stderr=out
        )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()[-3000:]
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)  # polls a process start, bounded by the deadline
        else:
            raise AssertionError(f"no answer on --port:\n{log.read_text()[-3000:]}")
        # The keyspace of the flag (the environment's does not exist): accounts work.
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        assert httpx.get(f"{url}/api/v1/accounts", headers=admin, timeout=30).status_code == 200
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def test_serve_refuses_an_unknown_log_format() -> None:
    refused = run_cassieq("serve", "--log-format", "xml")
    assert refused.returncode == 2 and "'xml' is not one of" in refused.stderr


def test_every_serve_flag_overrides_its_variable() -> None:
    env = {
        "CASSIEQ_HOST": "10.0.0.1",
        "CASSIEQ_PORT": "1",
        "CASSIEQ_ADMIN_PORT": "2",
        "CASSIEQ_CASSANDRA_HOSTS": "10.0.0.2",
        "CASSIEQ_CASSANDRA_PORT": "3",
        "CASSIEQ_KEYSPACE": "from_env",
        "CASSIEQ_WORKERS": "4",
        "CASSIEQ_LOG_FORMAT": "console",
        "CASSIEQ_LOG_LEVEL": "debug",
    }
    flags: dict[str, Any] = {
        "host": "0.0.0.0",
        "port": 8090,
        "admin_port": 8091,
        "cassandra_hosts": "a,b",
        "cassandra_port": 9043,
        "keyspace": "from_flag",
        "workers": 2,
        "log_format": "json",
        "log_level": "warning",
    }
    s = serve_settings(env, **flags)
    assert (s.host, s.port, s.admin_port) == ("0.0.0.0", 8090, 8091)
    assert (s.cassandra_hosts, s.cassandra_port, s.keyspace) == (("a", "b"), 9043, "from_flag")
    assert (s.log_format, s.log_level, s.workers) == ("json", "warning", 2)
    unset = serve_settings(env, **dict.fromkeys(flags))  # no flags: the environment
    assert (unset.port, unset.keyspace, unset.log_format) == (1, "from_env", "console")
    assert unset.workers == 4
