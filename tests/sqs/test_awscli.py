"""The AWS CLI (`awscli` from PyPI, run as a separate process, as a user runs it) against a
served app, on both stores: create, send, receive with a wait, delete, queue attributes,
and a dead-letter redrive with a message move task; and its FIFO commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.sqs.live_sqs import REGION, LiveSqs

SAFETY_S = 60  # bounds a command that would hang; nothing waits for it to pass

# Each `python -m awscli` start costs about 0.6 s of CPU importing botocore and awscli; the
# no-node loop (`make test-fast`) spent ~10 s on that alone. So the first command runs as
# `python -m awscli` and the rest go, one JSON argv a line, to one process that imported the
# CLI once and runs each through `create_clidriver().main(argv)`, the function
# `python -m awscli` calls, with a fresh driver (and botocore session) for each command.
_DRIVER = """
import contextlib, io, json, sys
from awscli.clidriver import create_clidriver
for line in sys.stdin:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = create_clidriver().main(json.loads(line))
        except SystemExit as exit:
            rc = exit.code if isinstance(exit.code, int) else 1
    print(json.dumps([rc, out.getvalue(), err.getvalue()]), flush=True)
"""


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
        self.process: subprocess.Popen[str] | None = None

    def __call__(self, *args: str) -> Any:
        argv = ["sqs", *args, "--endpoint-url", self.url]
        if self.process is None:
            # The first command: `python -m awscli`, exactly as a user starts it.
            done = subprocess.run(
                [sys.executable, "-m", "awscli", *argv],
                env=self.env,
                capture_output=True,
                text=True,
                timeout=SAFETY_S,
                check=False,
            )
            self.process = subprocess.Popen(
                [sys.executable, "-c", _DRIVER],
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
        else:
            # The rest: the same CLI entry point in the one process started above.
            assert self.process.stdin is not None and self.process.stdout is not None
            self.process.stdin.write(json.dumps(argv) + "\n")
            self.process.stdin.flush()
            returncode, stdout, stderr = json.loads(self.process.stdout.readline())
        assert returncode == 0, (args, stdout, stderr)
        return json.loads(stdout) if stdout.strip() else {}

    def close(self) -> None:
        if self.process is not None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=SAFETY_S)

    def file(self, name: str, content: Any) -> str:
        path = self.home / name
        path.write_text(json.dumps(content))
        return f"file://{path}"


def test_the_aws_cli_drives_the_endpoint(live: LiveSqs, tmp_path: Path) -> None:
    aws = Aws(live, tmp_path)
    try:
        _drive(aws)
    finally:
        aws.close()


def _drive(aws: Aws) -> None:
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


def test_the_aws_cli_fifo_examples(live: LiveSqs, tmp_path: Path) -> None:
    """The AWS CLI's FIFO commands (issue 37's acceptance), run unchanged: create-queue of a
    .fifo name with FifoQueue and ContentBasedDeduplication (shorthand attributes),
    send-message with --message-group-id and --message-deduplication-id, receive-message
    with --attribute-names All, delete-message."""
    aws = Aws(live, tmp_path)
    try:
        _drive_fifo(aws)
    finally:
        aws.close()


def _drive_fifo(aws: Aws) -> None:
    url = aws(
        "create-queue",
        "--queue-name",
        "MyFifoQueue.fifo",
        "--attributes",
        "FifoQueue=true,ContentBasedDeduplication=true",
    )["QueueUrl"]
    attrs = aws("get-queue-attributes", "--queue-url", url, "--attribute-names", "All")
    assert attrs["Attributes"]["FifoQueue"] == "true"
    assert attrs["Attributes"]["ContentBasedDeduplication"] == "true"
    sent = [
        aws(
            "send-message",
            "--queue-url",
            url,
            "--message-body",
            body,
            "--message-group-id",
            "orders-42",
            "--message-deduplication-id",
            body,
        )
        for body in ("created", "paid")
    ]
    assert int(sent[0]["SequenceNumber"]) < int(sent[1]["SequenceNumber"])
    # The same deduplication id again: answered with the first message's id.
    again = aws(
        "send-message", "--queue-url", url, "--message-body", "created",
        "--message-group-id", "orders-42", "--message-deduplication-id", "created",
    )  # fmt: skip
    assert again["MessageId"] == sent[0]["MessageId"]
    # As many of the group as the answer holds, in order (SQS's FIFO delivery logic); then
    # nothing of the group while they are in flight.
    got = aws(
        "receive-message", "--queue-url", url, "--attribute-names", "All",
        "--max-number-of-messages", "10", "--visibility-timeout", "60",
    )["Messages"]  # fmt: skip
    assert [m["MessageId"] for m in got] == [s["MessageId"] for s in sent]
    assert "Messages" not in aws("receive-message", "--queue-url", url)
    for m, expected in zip(got, sent, strict=True):
        assert m["Attributes"]["MessageGroupId"] == "orders-42"
        assert m["Attributes"]["SequenceNumber"] == expected["SequenceNumber"]
        aws("delete-message", "--queue-url", url, "--receipt-handle", m["ReceiptHandle"])
    assert "Messages" not in aws("receive-message", "--queue-url", url)
