"""The SQS guide's boto3 and AWS CLI snippets run as written against a served app (memory
store): the Python one as a separate process, the shell one with bash.

They are files, docs/snippets/sqs-boto3.py and sqs-aws-cli.sh, which the guide
(docs/guides/sqs.md) includes as they are: what it shows is what runs here."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from cassieq.store.memory import MemoryStore
from tests.sqs.live_sqs import REGION, LiveSqs, live_sqs

SNIPPETS = Path(__file__).resolve().parents[2] / "docs" / "snippets"
DEFAULT_URL = "http://127.0.0.1:8080"
SAFETY_S = 60


def _snippet(name: str) -> str:
    return (SNIPPETS / name).read_text()


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveSqs]:
    with live_sqs(MemoryStore(), monkeypatch) as running:
        yield running


def _env(live: LiveSqs, tmp_path: Path) -> dict[str, str]:
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
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }


def test_the_python_snippet_runs(live: LiveSqs, tmp_path: Path) -> None:
    snippet = _snippet("sqs-boto3.py")
    done = subprocess.run(
        [sys.executable, "-c", snippet],
        env=_env(live, tmp_path),
        capture_output=True,
        text=True,
        timeout=SAFETY_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "shipment 1 new" in done.stdout, done.stdout
    # It did what it says: both queues made, the message consumed.
    sqs = live.client()
    urls = sqs.list_queues(QueueNamePrefix="shipments")["QueueUrls"]
    assert sorted(u.rsplit("/", 1)[1] for u in urls) == ["shipments", "shipments-dlq"]
    assert "Messages" not in sqs.receive_message(QueueUrl=urls[0], VisibilityTimeout=0)


def test_the_shell_snippet_runs(live: LiveSqs, tmp_path: Path) -> None:
    snippet = _snippet("sqs-aws-cli.sh")
    # The snippet names the default endpoint and account "dev": this test's server and
    # account stand in for them.
    script = snippet.replace(DEFAULT_URL, live.url).replace("/dev/", f"/{live.account}/")
    script = script.replace("AWS_ACCESS_KEY_ID=dev", f"AWS_ACCESS_KEY_ID={live.account}")
    done = subprocess.run(
        ["bash", "-euc", script],
        env={**_env(live, tmp_path), "KEY": live.key},
        capture_output=True,
        text=True,
        timeout=SAFETY_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    sqs = boto3.client(
        "sqs",
        endpoint_url=live.url,
        region_name=REGION,
        aws_access_key_id=live.account,
        aws_secret_access_key=live.key,
    )
    url = sqs.get_queue_url(QueueName="greetings")["QueueUrl"]
    [m] = sqs.receive_message(QueueUrl=url)["Messages"]
    assert m["Body"] == "hi"
