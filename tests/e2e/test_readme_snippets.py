"""The curl sessions the documentation shows and the client README's example, run as written
against a `cassieq dev` started here (memory store, and --cassandra on the test keyspace).

The curl sessions are files, docs/snippets/curl-v1.sh and curl-v2.sh: the documentation
site includes them as they are (pymdownx.snippets), and the README, which a code host renders
without includes, shows them literally, checked here to be the same text. A README block (and
the client README's example) is found by the marker comment before it:
``<!-- readme-test: NAME -->``. The only changes made to a session before it runs: the dev
server's URL for http://127.0.0.1:8080 and the banner's key for ``KEY=...``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from cassieq.tools.bench.servers import free_port
from tests.conftest import CassandraNode

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "docs" / "snippets"
CURL_SESSIONS = ("curl-v1", "curl-v2")
DOC_URL = "http://127.0.0.1:8080"


def snippet(markdown: Path, name: str) -> str:
    """The fenced block right after ``<!-- readme-test: NAME -->``."""
    text = markdown.read_text()
    found = re.search(
        rf"<!-- readme-test: {re.escape(name)} -->\n```\w*\n(.*?)\n```", text, re.DOTALL
    )
    assert found, f"{markdown.name} has no block marked readme-test: {name}"
    return found.group(1)


def session(name: str) -> str:
    """The curl session docs/snippets/NAME.sh, as the documentation shows it."""
    return (SNIPPETS / f"{name}.sh").read_text().rstrip("\n")


@pytest.mark.parametrize("name", CURL_SESSIONS)
def test_the_readme_shows_the_tested_sessions(name: str) -> None:
    assert snippet(ROOT / "README.md", name) == session(name), (
        f"README.md's block readme-test: {name} differs from docs/snippets/{name}.sh"
    )


@dataclass
class Dev:
    url: str
    key: str

    def prepared(self, code: str) -> str:
        return code.replace(DOC_URL, self.url).replace("KEY=...", f"KEY={self.key}")


@pytest.fixture
def dev(store_kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Dev]:
    port, admin_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSIEQ_")}
    args = ["dev", "--port", str(port), "--admin-port", str(admin_port)]
    if store_kind == "cassandra":
        node: CassandraNode = request.getfixturevalue("cassandra_node")
        request.getfixturevalue("cassandra_store")  # the schema is applied
        s = node.settings
        env |= {
            "CASSIEQ_KEYSPACE": s.keyspace,
            "CASSIEQ_CASSANDRA_HOSTS": ",".join(s.cassandra_hosts),
            "CASSIEQ_CASSANDRA_PORT": str(s.cassandra_port),
        }
        args.append("--cassandra")
    log = tmp_path / "dev.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "cassieq", *args], env=env, stdout=out, stderr=out, text=True
        )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        key = None
        while time.monotonic() < deadline and process.poll() is None:
            key = key or re.search(r"^key primary: (\S+)$", log.read_text(), re.M)
            try:
                if key and httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.2)  # polls a process start, bounded by the deadline
        else:
            pytest.fail(f"cassieq dev did not start:\n{log.read_text()[-3000:]}")
        assert key, log.read_text()
        # On Cassandra the account `dev` outlives a run: its queues start over.
        with httpx.Client(
            base_url=f"{url}/api/v1/accounts/dev",
            headers={"Authorization": f"Key {key.group(1)}"},
            timeout=30,
        ) as c:
            for queue in ("orders", "jobs", "shipments", "shipments-dlq", "greetings"):
                assert c.delete(f"/queues/{queue}").status_code in (200, 404)
        yield Dev(url, key.group(1))
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def _bash(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert shutil.which("curl") and shutil.which("jq"), "the curl sessions need curl and jq"
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_the_curl_sessions_run_as_written(dev: Dev, tmp_path: Path) -> None:
    v1 = _bash(dev.prepared(session("curl-v1")), tmp_path)
    assert v1.returncode == 0, v1.stderr
    lines = v1.stdout.splitlines()
    # create 201, put 201, the message, ack 204, and the empty queue's 204.
    assert lines[:2] == ["201", "201"] and lines[-2:] == ["204", "204"], v1.stdout
    got = json.loads("\n".join(lines[2:-2]))
    assert got["message"] == "hi" and got["deliveryCount"] == 0  # no stored quotes

    v2_code = f"KEY={dev.key}\n" + dev.prepared(session("curl-v2"))
    v2 = _bash(v2_code, tmp_path)
    assert v2.returncode == 0, v2.stderr
    definition, created, sent, *rest = v2.stdout.splitlines()
    assert created == "201" and json.loads(definition)["queueName"] == "jobs", v2.stdout
    assert [m["id"] for m in json.loads(sent)["messages"]] != []
    received, acked = json.loads(rest[0]), json.loads(rest[1])
    assert [m["body"] for m in received["messages"]] == ["order 1"]  # order 2 is delayed
    assert acked["acked"] == [received["messages"][0]["popReceipt"]] and acked["failed"] == []


def test_the_client_readme_example_runs_as_written(dev: Dev, tmp_path: Path) -> None:
    code = snippet(ROOT / "api_spec/client/README.md", "client-example")
    env = {**os.environ, "CASSIEQ_URL": dev.url, "CASSIEQ_KEY": dev.key}
    ran = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["hello", "409 Conflict", "404 no-such-queue"]
    # The async put (a str: the document declares the put's body as text, #39) is in the queue.
    with httpx.Client(
        base_url=f"{dev.url}/api/v1/accounts/dev/queues/orders",
        headers={"Authorization": f"Key {dev.key}"},
        timeout=30,
    ) as c:
        assert c.get("/messages/next").json()["message"] == "async hello"
        assert c.get("/messages/next").status_code == 204


def test_the_readme_and_the_sqs_guide_run_in_order_on_one_server(dev: Dev, tmp_path: Path) -> None:
    """#39 item 2: followed in order, a newcomer's examples must not collide (the boto3 one
    made "orders" again, with a RedrivePolicy, and failed with QueueAlreadyExists)."""
    for name in ("curl-v1", "curl-v2"):
        ran = _bash(f"KEY={dev.key}\n" + dev.prepared(session(name)), tmp_path)
        assert ran.returncode == 0, (name, ran.stderr)
    snippets = ROOT / "docs" / "snippets"
    config = tmp_path / "aws-config"
    config.write_text("[default]\n")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CASSIEQ_", "AWS_"))},
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path),
        "AWS_CONFIG_FILE": str(config),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "CASSIEQ_URL": dev.url,
        "CASSIEQ_KEY": dev.key,
        "KEY": dev.key,
    }
    boto = subprocess.run(
        [sys.executable, "-c", (snippets / "sqs-boto3.py").read_text()],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert boto.returncode == 0, boto.stderr
    assert "shipment 1 new" in boto.stdout
    cli = (snippets / "sqs-aws-cli.sh").read_text().replace(DOC_URL, dev.url)
    aws = subprocess.run(
        ["bash", "-euc", cli], capture_output=True, text=True, env=env, cwd=tmp_path,
        timeout=120, check=False,
    )  # fmt: skip
    assert aws.returncode == 0, aws.stderr
