"""The AWS CLI (`awscli` from PyPI, run as a separate process, as a user runs it) against a
served app, on both stores: create, send, receive with a wait, delete, queue attributes,
and a dead-letter redrive with a message move task."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.sqs.live_sqs import REGION, LiveSqs

SAFETY_S = 60  # bounds a command that would hang; nothing waits for it to pass


class Aws:
    def __init__(self, live: LiveSqs, home: Path) -> None:
        config = home / "config"
        config.write_text(f"[default]\nregion = {REGION}\noutput = json\n")
        credentials = home / "credentials"
        credentials.write_text("")  # none but the environment's
        self.home = home
        self.url = live.url
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "AWS_CONFIG_FILE": str(config),
            "AWS_SHARED_CREDENTIALS_FILE": str(credentials),
            "AWS_ACCESS_KEY_ID": live.account,
            "AWS_SECRET_ACCESS_KEY": live.key,
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def __call__(self, *args: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "awscli", "sqs", *args, "--endpoint-url", self.url],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=SAFETY_S,
            check=False,
        )
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return json.loads(done.stdout) if done.stdout.strip() else {}

    def file(self, name: str, content: Any) -> str:
        path = self.home / name
        path.write_text(json.dumps(content))
        return f"file://{path}"


def test_the_aws_cli_drives_the_endpoint(live: LiveSqs, tmp_path: Path) -> None:
    aws = Aws(live, tmp_path)
    dead = aws("create-queue", "--queue-name", "cli-dead")["QueueUrl"]
    dead_arn = aws("get-queue-attributes", "--queue-url", dead, "--attribute-names", "QueueArn")[
        "Attributes"
    ]["QueueArn"]
    policy = {"deadLetterTargetArn": dead_arn, "maxReceiveCount": "1"}
    work = aws(
        "create-queue",
        "--queue-name",
        "cli-work",
        "--attributes",
        aws.file("attrs.json", {"RedrivePolicy": json.dumps(policy), "VisibilityTimeout": "0"}),
    )["QueueUrl"]
    attrs = aws("get-queue-attributes", "--queue-url", work, "--attribute-names", "All")
    assert json.loads(attrs["Attributes"]["RedrivePolicy"])["deadLetterTargetArn"] == dead_arn

    # Send, receive with a wait, delete.
    sent = aws(
        "send-message",
        "--queue-url",
        work,
        "--message-body",
        "first",
        "--message-attributes",
        aws.file("mattrs.json", {"k": {"DataType": "String", "StringValue": "v"}}),
    )
    received = aws(
        "receive-message",
        "--queue-url",
        work,
        "--wait-time-seconds",
        "20",
        "--visibility-timeout",
        "30",
        "--message-attribute-names",
        "All",
    )
    [m] = received["Messages"]
    assert (m["MessageId"], m["Body"]) == (sent["MessageId"], "first")
    assert m["MessageAttributes"] == {"k": {"DataType": "String", "StringValue": "v"}}
    aws("delete-message", "--queue-url", work, "--receipt-handle", m["ReceiptHandle"])
    counts = aws(
        "get-queue-attributes",
        "--queue-url",
        work,
        "--attribute-names",
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
    )["Attributes"]
    assert counts == {
        "ApproximateNumberOfMessages": "0",
        "ApproximateNumberOfMessagesNotVisible": "0",
    }

    # Received once and not deleted (visibility 0: back at once): the next receive moves it
    # to the dead-letter queue; a message move task brings it back.
    aws("send-message", "--queue-url", work, "--message-body", "poison")
    assert aws("receive-message", "--queue-url", work, "--wait-time-seconds", "20")["Messages"]
    assert "Messages" not in aws("receive-message", "--queue-url", work)
    [in_dead] = aws(
        "receive-message", "--queue-url", dead, "--wait-time-seconds", "20",
        "--visibility-timeout", "0",
    )["Messages"]  # fmt: skip
    assert in_dead["Body"] == "poison"
    task = aws("start-message-move-task", "--source-arn", dead_arn)
    assert task["TaskHandle"]
    back = aws(
        "receive-message", "--queue-url", work, "--wait-time-seconds", "20",
        "--visibility-timeout", "60",
    )["Messages"]  # fmt: skip
    assert [b["Body"] for b in back] == ["poison"]
    tasks = aws("list-message-move-tasks", "--source-arn", dead_arn)["Results"]
    assert len(tasks) == 1 and tasks[0]["SourceArn"] == dead_arn
    aws("delete-message", "--queue-url", work, "--receipt-handle", back[0]["ReceiptHandle"])
    # Nothing left behind. (Each command starts a Python process, a second or more: the
    # other queue actions are driven through boto3, which shares the CLI's botocore.)
    assert "Messages" not in aws("receive-message", "--queue-url", work)
