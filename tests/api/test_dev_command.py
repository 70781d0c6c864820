"""`cassieq dev` as a newcomer runs it: the printed key works for put, get and ack."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time

import httpx
import pytest

from cassieq.tools.bench.servers import free_port


def test_dev_server_prints_working_credentials(tmp_path: object) -> None:
    port, admin_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSIEQ_")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cassieq",
            "dev",
            "--port",
            str(port),
            "--admin-port",
            str(admin_port),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        banner = []
        deadline = time.monotonic() + 60
        assert process.stdout is not None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            banner.append(line)
            if line.startswith("Swagger UI"):
                break
        text = "".join(banner)
        key = re.search(r"^key primary: (\S+)$", text, re.M)
        token = re.search(r"^operator token: (\S+)$", text, re.M)
        assert key and token, text
        assert len(token.group(1)) >= 32  # as long as `cassieq serve` requires
        # Both ports are printed: the application's and the admin routes'.
        assert f"on http://127.0.0.1:{port} " in text, text
        assert f"admin routes on http://127.0.0.1:{admin_port}/admin/api/v1" in text, text
        base = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Key {key.group(1)}"}
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{base}/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)  # polling the process start, bounded by the deadline
        q = f"{base}/api/v1/accounts/dev/queues"
        assert httpx.post(q, json={"queueName": "hello"}, headers=headers).status_code == 201
        assert httpx.post(f"{q}/hello/messages", content=b"hi", headers=headers).status_code == 201
        got = httpx.get(f"{q}/hello/messages/next", headers=headers).json()
        assert got["message"] == "hi"
        ack = httpx.delete(
            f"{q}/hello/messages", params={"popReceipt": got["popReceipt"]}, headers=headers
        )
        assert ack.status_code == 204
        admin = {"Authorization": f"Bearer {token.group(1)}"}
        assert httpx.get(f"{base}/api/v1/accounts/dev", headers=admin).status_code == 200
        assert httpx.get(f"{base}/admin/api/v1/accounts/dev", headers=admin).status_code == 200
        # On the application port the operator token is still required ...
        assert httpx.get(f"{base}/admin/api/v1/accounts/dev").status_code == 401
        # ... on the admin port, from loopback, it is not (as CassieQ's dev image).
        admin_base = f"http://127.0.0.1:{admin_port}"
        shown = httpx.get(f"{admin_base}/admin/api/v1/accounts/dev")
        assert shown.status_code == 200 and shown.json()["accountName"] == "dev"
        assert httpx.post(f"{admin_base}/admin/api/v1/accounts", json="acme").status_code == 201
        assert httpx.get(f"{base}/").status_code == 200
        _operator_pages_are_where_the_banner_says(text, base, admin_base)
    finally:
        process.terminate()
        process.wait(timeout=20)


def _operator_pages_are_where_the_banner_says(banner: str, base: str, admin_base: str) -> None:
    """The banner and the / page name the console and /metrics, and each answers as they
    say: open on the admin port from this machine, the token asked for on the API port."""
    console = re.search(r"^web console: (\S+) .*?(\S+/console) asks for", banner, re.M)
    metrics = re.search(r"^metrics: (\S+) .*?(\S+/metrics) wants", banner, re.M)
    assert console and metrics, banner
    assert (console.group(1), console.group(2)) == (f"{admin_base}/console", f"{base}/console")
    assert (metrics.group(1), metrics.group(2)) == (f"{admin_base}/metrics", f"{base}/metrics")
    opened = httpx.get(f"{admin_base}/console")
    assert opened.status_code == 200 and "Log in" not in opened.text
    assert "operator token" in httpx.get(f"{base}/console", follow_redirects=True).text.lower()
    assert httpx.get(f"{admin_base}/metrics").status_code == 200
    assert httpx.get(f"{base}/metrics").status_code == 401
    root = httpx.get(f"{base}/").text
    assert 'href="/console"' in root and "/metrics" in root, root


@pytest.mark.parametrize("taken", ["port", "admin-port"])
def test_a_port_in_use_ends_the_server_with_one_error_line(taken: str) -> None:
    """uvicorn's error line and its exit status (3), no traceback, and no listener left
    running: the other port's listener stops too."""
    port, admin_port = free_port(), free_port()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port if taken == "port" else admin_port))
        holder.listen(1)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CASSIEQ_")}
        args = ["dev", "--port", str(port), "--admin-port", str(admin_port)]
        done = subprocess.run(
            [sys.executable, "-m", "cassieq", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,  # before: the process ended too, with a 50-line traceback
        )
    output = done.stdout + done.stderr
    assert done.returncode == 3, output
    assert "address already in use" in output, output
    assert "Traceback" not in output and "never retrieved" not in output, output
