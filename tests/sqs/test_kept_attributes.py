"""SQS queue attributes kept and shown back (Policy, KMS, SSE-SQS), Add/RemovePermission,
MaximumMessageSize up to 1 MiB (v2's maxMessageBytes too), and the QueueAlreadyExists that
names the attributes which differ (#39 items 2, 12, 13): on both stores, below the route,
then through boto3 against a served app."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
import pytest

from cassieq.api.v2.dto_queues import QueueOptionsBody
from cassieq.engine import QueueEngine
from tests.sqs.live_sqs import LiveSqs
from tests.sqs.test_queue_actions import Sqs, account, engine, sqs  # noqa: F401

MIB = 1024 * 1024
POLICY = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage"}],
    }
)


async def test_policy_and_encryption_attributes_are_kept_and_shown(
    sqs: Sqs,  # noqa: F811
    engine: QueueEngine,  # noqa: F811
) -> None:
    given = {"Policy": POLICY, "SqsManagedSseEnabled": "true"}
    await sqs("CreateQueue", QueueName="q", Attributes=given)
    shown = await sqs.attributes("q", "All")
    assert (shown["Policy"], shown["SqsManagedSseEnabled"]) == (POLICY, "true")
    assert "KmsMasterKeyId" not in shown and "KmsDataKeyReusePeriodSeconds" not in shown
    assert await sqs("CreateQueue", QueueName="q", Attributes=given) == {"QueueUrl": sqs.url("q")}
    # Another server reads them from the queue row.
    other = QueueEngine(engine.ctx.store, engine.ctx.clock, instance_id="other")
    options = (await other.queues.get(sqs.account, "q", fresh=True)).options
    assert (options.policy, options.sqs_managed_sse_enabled) == (POLICY, True)

    # A KMS key turns SSE-SQS off (one encryption per queue); its reuse period is SQS's 300 s
    # until one is given.
    await sqs("SetQueueAttributes", QueueUrl=sqs.url("q"), Attributes={"KmsMasterKeyId": "alias/k"})
    shown = await sqs.attributes("q", "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "All")
    assert shown["KmsMasterKeyId"] == "alias/k" and shown["SqsManagedSseEnabled"] == "false"
    assert shown["KmsDataKeyReusePeriodSeconds"] == "300"
    await sqs(
        "SetQueueAttributes",
        QueueUrl=sqs.url("q"),
        Attributes={"KmsDataKeyReusePeriodSeconds": "600", "Policy": ""},
    )
    shown = await sqs.attributes("q", "All")
    assert shown["KmsDataKeyReusePeriodSeconds"] == "600" and "Policy" not in shown
    await sqs("SetQueueAttributes", QueueUrl=sqs.url("q"), Attributes={"KmsMasterKeyId": ""})
    assert "KmsMasterKeyId" not in await sqs.attributes("q", "All")
    stored = (await other.queues.get(sqs.account, "q", fresh=True)).options
    assert (stored.policy, stored.kms_master_key_id) == (None, None)
    assert stored.kms_data_key_reuse_period_seconds == 600


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("Policy", "not json"),
        ("Policy", '{"Version": "2012-10-17"}'),
        ("Policy", json.dumps({"Statement": [], "Pad": "x" * 8192})),
        ("KmsDataKeyReusePeriodSeconds", "59"),
        ("KmsDataKeyReusePeriodSeconds", "86401"),
        ("SqsManagedSseEnabled", "yes"),
        ("MaximumMessageSize", str(MIB + 1)),
    ],
)
async def test_bad_kept_attributes_are_refused(sqs: Sqs, name: str, value: str) -> None:  # noqa: F811
    await sqs.fails("InvalidAttributeValue", "CreateQueue", QueueName="q", Attributes={name: value})


async def test_one_encryption_at_a_time_and_1_mib_messages(sqs: Sqs) -> None:  # noqa: F811
    both = {"SqsManagedSseEnabled": "true", "KmsMasterKeyId": "alias/k"}
    await sqs.fails("InvalidAttributeValue", "CreateQueue", QueueName="q", Attributes=both)
    await sqs("CreateQueue", QueueName="q", Attributes={"MaximumMessageSize": str(MIB)})
    assert (await sqs.attributes("q", "MaximumMessageSize")) == {"MaximumMessageSize": str(MIB)}


async def test_add_and_remove_permission_edit_the_policy(sqs: Sqs) -> None:  # noqa: F811
    await sqs("CreateQueue", QueueName="q")
    url = sqs.url("q")
    await sqs(
        "AddPermission", QueueUrl=url, Label="send", AWSAccountIds=["bob"], Actions=["SendMessage"]
    )
    await sqs(
        "AddPermission",
        QueueUrl=url,
        Label="read",
        AWSAccountIds=["bob", "eve"],
        Actions=["ReceiveMessage", "DeleteMessage"],
    )
    policy = json.loads((await sqs.attributes("q", "Policy"))["Policy"])
    assert policy["Version"] == "2012-10-17"
    assert policy["Statement"] == [
        {
            "Sid": "send",
            "Effect": "Allow",
            "Principal": {"AWS": "arn:aws:iam::bob:root"},
            "Action": "SQS:SendMessage",
            "Resource": sqs.arn("q"),
        },
        {
            "Sid": "read",
            "Effect": "Allow",
            "Principal": {"AWS": ["arn:aws:iam::bob:root", "arn:aws:iam::eve:root"]},
            "Action": ["SQS:ReceiveMessage", "SQS:DeleteMessage"],
            "Resource": sqs.arn("q"),
        },
    ]
    same = await sqs.fails(
        "InvalidParameterValue",
        "AddPermission",
        QueueUrl=url,
        Label="send",
        AWSAccountIds=["bob"],
        Actions=["*"],
    )
    assert "Already exists" in same.message
    for bad in ({"Actions": ["Fly"]}, {"Label": "a b"}, {"AWSAccountIds": ["no:pe"]}):
        params = {"Label": "x", "AWSAccountIds": ["bob"], "Actions": ["*"], **bad}
        await sqs.fails("InvalidParameterValue", "AddPermission", QueueUrl=url, **params)
    await sqs.fails("MissingParameter", "AddPermission", QueueUrl=url, Label="x", Actions=["*"])

    await sqs("RemovePermission", QueueUrl=url, Label="send")
    policy = json.loads((await sqs.attributes("q", "Policy"))["Policy"])
    assert [s["Sid"] for s in policy["Statement"]] == ["read"]
    missing = await sqs.fails(
        "InvalidParameterValue", "RemovePermission", QueueUrl=url, Label="send"
    )
    assert "can't find label" in missing.message
    await sqs("RemovePermission", QueueUrl=url, Label="read")
    assert "Policy" not in await sqs.attributes("q", "All")  # no statement left: no policy


async def test_permissions_added_at_once_are_all_kept(sqs: Sqs, engine: QueueEngine) -> None:  # noqa: F811
    await sqs("CreateQueue", QueueName="q")
    # Two servers, five at once: each statement is added to the Policy version it read (a
    # compare-and-set), so none overwrites another.
    other = Sqs(QueueEngine(engine.ctx.store, engine.ctx.clock, instance_id="o"), sqs.account)
    labels = [f"l{i}" for i in range(6)]
    await asyncio.gather(
        *(
            (sqs if i % 2 else other)(
                "AddPermission",
                QueueUrl=sqs.url("q"),
                Label=label,
                AWSAccountIds=["bob"],
                Actions=["*"],
            )
            for i, label in enumerate(labels)
        )
    )
    policy = json.loads((await sqs.attributes("q", "Policy"))["Policy"])
    assert sorted(s["Sid"] for s in policy["Statement"]) == labels
    await asyncio.gather(
        *(sqs("RemovePermission", QueueUrl=sqs.url("q"), Label=label) for label in labels[:3])
    )
    policy = json.loads((await sqs.attributes("q", "Policy"))["Policy"])
    assert sorted(s["Sid"] for s in policy["Statement"]) == labels[3:]


async def test_queue_already_exists_names_the_attributes_that_differ(sqs: Sqs) -> None:  # noqa: F811
    await sqs("CreateQueue", QueueName="orders")
    redrive = json.dumps({"deadLetterTargetArn": sqs.arn("orders-dlq"), "maxReceiveCount": 3})
    await sqs("CreateQueue", QueueName="orders-dlq")
    exists = await sqs.fails(
        "QueueNameExists",
        "CreateQueue",
        QueueName="orders",
        Attributes={"RedrivePolicy": redrive, "VisibilityTimeout": "30", "Policy": POLICY},
    )
    assert exists.query_code == "QueueAlreadyExists"
    assert exists.message == (
        "A queue already exists with the same name and a different value for attribute(s) "
        "RedrivePolicy, Policy."
    )


def test_v2_max_message_bytes_goes_to_1_mib() -> None:
    assert QueueOptionsBody().max_message_bytes == MIB  # the default, as SQS's
    body = msgspec.json.decode(b'{"maxMessageBytes": 1048576}', type=QueueOptionsBody)
    assert body.options().max_message_bytes == MIB
    with pytest.raises(msgspec.ValidationError, match="<= 1048576"):
        msgspec.json.decode(b'{"maxMessageBytes": 1048577}', type=QueueOptionsBody)


# --- boto3 ------------------------------------------------------------------------------------


def test_boto3_policy_and_sse_are_returned_and_permissions_accepted(live: LiveSqs) -> None:
    boto: Any = live.client()
    url = boto.create_queue(
        QueueName="secured", Attributes={"Policy": POLICY, "SqsManagedSseEnabled": "true"}
    )["QueueUrl"]
    shown = boto.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert shown["Policy"] == POLICY and shown["SqsManagedSseEnabled"] == "true"
    boto.add_permission(
        QueueUrl=url, Label="carol", AWSAccountIds=["carol"], Actions=["SendMessage"]
    )
    policy = boto.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])["Attributes"]
    assert [s.get("Sid") for s in json.loads(policy["Policy"])["Statement"]] == [None, "carol"]
    boto.remove_permission(QueueUrl=url, Label="carol")
    policy = boto.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])["Attributes"]
    assert len(json.loads(policy["Policy"])["Statement"]) == 1
