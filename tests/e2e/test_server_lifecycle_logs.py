"""`cassieq dev` and `cassieq serve` as a process manager sees them: the banner (dev) on
stdout for the person, every log line on stderr in the chosen format with one timestamp
style, the process announced once though two listeners serve it, and exit status 0 after
the graceful stop a SIGTERM asks for (docker stop, systemd, Kubernetes)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from cassieq.tools.bench.servers import free_port
from tests.api.conftest import start_server
from tests.conftest import CassandraNode

ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
DEADLINE_S = 60


def _wait_healthy(url: str, process: subprocess.Popen[bytes], deadline: float) -> None:
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the server exited with {process.returncode}"
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)  # not listening yet: polls the process start, bounded by deadline
    raise AssertionError(f"{url} did not answer within {DEADLINE_S} s")


def _terminate(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise


def _events(stderr: str) -> list[dict[str, object]]:
    events = []
    for number, line in enumerate(stderr.splitlines(), 1):
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"stderr line {number} is not JSON: {line!r}") from exc
        assert isinstance(event, dict) and {"event", "level", "timestamp"} <= event.keys(), line
        events.append(event)
    return events


def _announced_once(events: list[str]) -> None:
    started = [e for e in events if e.startswith("Started server process")]
    finished = [e for e in events if e.startswith("Finished server process")]
    assert len(started) == 1 and len(finished) == 1, events
    # The process is finished once both listeners and the application's shutdown are.
    assert events.index("Application shutdown complete.") < events.index(finished[0]), events


@pytest.mark.parametrize("fmt", ["json", "console"])
def test_dev_logs_in_one_format_and_exits_0_on_sigterm(fmt: str, tmp_path: Path) -> None:
    port, admin_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSIEQ_")}
    env["CASSIEQ_LOG_FORMAT"] = fmt
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    command = [sys.executable, "-m", "cassieq", "dev", "--port", str(port),
               "--admin-port", str(admin_port), "--admin-token", "short"]  # fmt: skip
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(command, env=env, stdout=stdout, stderr=stderr)
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", process, time.monotonic() + DEADLINE_S)
    finally:
        status = _terminate(process)
    assert status == 0, err.read_text()[-3000:]

    banner = out.read_text()
    assert banner.startswith("cassieq dev server on"), banner
    assert "operator token: short" in banner
    # No log line among the banner's lines (the first events used to be printed there,
    # in structlog's default style, before logging was configured).
    for line in banner.splitlines():
        assert not re.match(r"\d{4}-\d\d-\d\d|\{", line), line
    stderr_text = err.read_text()
    if fmt == "json":
        events = _events(stderr_text)
        assert all(ISO_UTC.fullmatch(str(e["timestamp"])) for e in events), stderr_text
        names = [str(e["event"]) for e in events]
    else:
        lines = stderr_text.splitlines()
        # ConsoleRenderer: "<timestamp> [<level>] <event, padded> key=value ... [logger]".
        parsed = [re.fullmatch(r"(\S+) \[(\w+)\s*\] (.*?)(?: \[[\w.]+\])?", ln) for ln in lines]
        assert all(p and ISO_UTC.fullmatch(p.group(1)) for p in parsed), stderr_text
        names = [re.split(r"\s+[\w.]+=", p.group(3))[0].strip() for p in parsed if p]
    # The first events (before the banner) and the short token's warning are log lines too.
    assert "account_created" in names and "short_secret" in names, names
    _announced_once(names)


def test_serve_exits_0_on_sigterm(
    cassandra_node: CassandraNode, cassandra_store: object, tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    server = start_server(cassandra_node, log, CASSIEQ_ADMIN_PORT=str(free_port()))
    status = _terminate(server.process)
    assert status == 0, log.read_text()[-3000:]
    _announced_once([str(e["event"]) for e in _events(log.read_text())])
