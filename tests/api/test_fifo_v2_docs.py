"""The FIFO guide's snippets (docs/guides/fifo.md includes them as they are) run as written
against a served app, on each store: the v2 curl session (every answer its comments show in
full, `# -> ...` without an ellipsis, is the line it printed), the boto3 program and the AWS
CLI's commands."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.store.base import Store
from tests.api.live import served
from tests.sqs.live_sqs import LiveSqs, live_sqs

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "docs" / "snippets"
SESSION = SNIPPETS / "fifo-v2.sh"
DOC_BASE = "http://127.0.0.1:8080/api/v2/accounts/dev"
TOKEN = "fifo-docs-operator-token"


def _shown(session: str) -> list[str]:
    """The answers the comments show whole, in order."""
    prefix = "# -> "
    answers = [line[len(prefix) :] for line in session.splitlines() if line.startswith(prefix)]
    return [a for a in answers if "..." not in a and not a.endswith(",")]


def test_the_fifo_session_runs_as_written(store: Store, tmp_path: Path) -> None:
    assert shutil.which("curl") and shutil.which("jq"), "the session needs curl and jq"
    session = SESSION.read_text()
    app = create_app(Settings(admin_token=TOKEN), store, background=False)
    with served(app) as port:
        url = f"http://127.0.0.1:{port}"
        account = f"fifodoc-{uuid.uuid4().hex[:10]}"  # the Cassandra keyspace is shared
        created = httpx.post(
            f"{url}/api/v1/accounts",
            json=account,
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=30,
        )
        assert created.status_code == 201, created.text
        key = created.json()["keys"]["primary"]
        code = f"KEY={key}\n" + session.replace(DOC_BASE, f"{url}/api/v2/accounts/{account}")
        ran = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", code],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )
    assert ran.returncode == 0, ran.stderr
    printed = ran.stdout.splitlines()
    assert len(printed) == 6, ran.stdout
    first_send = printed[1]
    assert first_send.count('"duplicate":false') == 3, first_send
    # Every answer shown whole, in order, among the lines printed.
    rest = iter(printed)
    for answer in _shown(session):
        assert answer in rest, f"{answer!r} not printed (in order):\n{ran.stdout}"


def _aws_env(live: LiveSqs, tmp_path: Path) -> dict[str, str]:
    """Only what the snippets need: the server, its account and key, an empty AWS config."""
    config = tmp_path / "aws-config"
    config.write_text("[default]\n")
    return {
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path),
        "AWS_CONFIG_FILE": str(config),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "CASSIEQ_URL": live.url,
        "CASSIEQ_ACCOUNT": live.account,
        "CASSIEQ_KEY": live.key,
        "KEY": live.key,
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }


@pytest.fixture
def live(store: Store, monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveSqs]:
    with live_sqs(store, monkeypatch) as running:
        yield running


def test_the_fifo_boto3_snippet_runs(live: LiveSqs, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", (SNIPPETS / "fifo-sqs-boto3.py").read_text()],
        env=_aws_env(live, tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2:] == ["received open account 7 account-7", "received deposit 100 account-7"]
    numbers = [int(line.rsplit(" ", 1)[1]) for line in lines[:2]]
    assert numbers == sorted(numbers) and numbers[0] != numbers[1]
    # The queue is a FIFO queue to v2 clients too.
    shown = httpx.get(
        f"{live.url}/api/v2/accounts/{live.account}/queues/ledger.fifo",
        headers={"Authorization": f"Key {live.key}"},
        timeout=30,
    )
    assert shown.json()["fifo"] is True and shown.json()["contentBasedDeduplication"] is True


def test_the_fifo_aws_cli_snippet_runs(live: LiveSqs, tmp_path: Path) -> None:
    script = (SNIPPETS / "fifo-aws-cli.sh").read_text()
    # The snippet names the default endpoint and account "dev": this test's stand in.
    script = script.replace("http://127.0.0.1:8080", live.url)
    script = script.replace("/dev/", f"/{live.account}/")
    script = script.replace("AWS_ACCESS_KEY_ID=dev", f"AWS_ACCESS_KEY_ID={live.account}")
    done = subprocess.run(
        ["bash", "-euc", script],
        env=_aws_env(live, tmp_path),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    received = json.loads(done.stdout[done.stdout.rindex('{\n    "Messages"') :])
    [message] = received["Messages"]
    assert message["Body"] == "order 1"
    assert message["Attributes"]["MessageGroupId"] == "customer-7"
    assert message["Attributes"]["SequenceNumber"].isdigit()
