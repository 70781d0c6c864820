"""`cassieq fifo-check`'s workload end to end against a served app's SQS endpoint, on both
stores: boto3 sends every message twice with its dedup id and leaves every first delivery to
expire, and the checker finds the run clean with the figures that proves it did both."""

from __future__ import annotations

from cassieq.tools.fifo.checker import VIOLATIONS
from cassieq.tools.fifo.run import run_check
from cassieq.tools.fifo.workload import Credentials, Shape
from tests.sqs.conftest import SqsServer

GROUPS, PER_GROUP = 2, 3


def test_the_workload_through_boto3_passes_the_checker(sqs_server: SqsServer) -> None:
    said: list[str] = []
    creds = Credentials(
        endpoints=(sqs_server.base,),
        access_key=sqs_server.account,
        secret_key=sqs_server.keys["primary"],
        region="eu-west-1",  # the fixture's server's region
    )
    shape = Shape(
        groups=GROUPS,
        per_group=PER_GROUP,
        consumers=2,
        expire_fraction=1.0,  # every first delivery left to expire: each comes back once
        retry_fraction=1.0,  # every send repeated with its dedup id
        visibility=1,
        tail=1.0,
        timeout=60.0,
    )
    result = run_check(creds, shape, said.append)
    assert result["failures"] == [], result
    assert result["ok"] is True
    assert {k: result[k] for k in VIOLATIONS} == dict.fromkeys(VIOLATIONS, 0)
    messages = GROUPS * PER_GROUP
    assert result["messages"] == result["acked"] == messages
    assert result["sends_retried"] == result["retries_same_id"] == messages
    assert result["left_to_expire"] == messages
    assert result["redeliveries"] >= messages
    assert set(result["per_group"]) == {"g000", "g001"}
    assert any("all 6 messages acked" in line for line in said)
