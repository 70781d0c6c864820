"""AddPermission and RemovePermission: statements of the queue's Policy, as SQS writes them.

The Policy is kept and shown back (GetQueueAttributes), never enforced: access to a queue is
by its account's keys. AddPermission adds one statement (its Sid the Label) granting the
accounts (arn:aws:iam::<account>:root, an account in place of an AWS account id) the
actions ("SQS:<action>"); RemovePermission drops the statement of a Label, and the Policy
with its last statement.
"""

from __future__ import annotations

import json
import re
from typing import Any

from cassieq.api.sqs import errors
from cassieq.api.sqs.actions.attributes import MAX_POLICY_BYTES
from cassieq.api.sqs.actions.common import queue_arn, queue_definition, required
from cassieq.api.sqs.context import SqsCall
from cassieq.api.sqs.model import action_names
from cassieq.model import QueueOptions, valid_name

LABEL = re.compile(r"[A-Za-z0-9_-]{1,80}")
MAX_ACTIONS = 7  # SQS: at most seven actions per statement


def _names(call: SqsCall, member: str) -> list[str]:
    value = required(call, member)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise errors.missing_parameter(member)
    return value


def _label(call: SqsCall) -> str:
    label = str(required(call, "Label"))
    if not LABEL.fullmatch(label):
        raise errors.invalid_parameter_value(
            f"Value {label[:80]} for parameter Label is invalid. Reason: Can only include "
            "alphanumeric characters, hyphens, or underscores. 1 to 80 in length."
        )
    return label


def _statements(policy: str | None) -> tuple[dict[str, Any], list[Any]]:
    if policy is None:
        return {}, []
    parsed = json.loads(policy)
    statements = parsed.get("Statement", [])
    return parsed, statements if isinstance(statements, list) else [statements]


def _one_or_list(values: list[str]) -> str | list[str]:
    return values[0] if len(values) == 1 else values


async def add_permission(call: SqsCall) -> dict[str, Any]:
    label = _label(call)
    accounts = _names(call, "AWSAccountIds")
    actions = _names(call, "Actions")
    for account in accounts:
        if not valid_name(account):
            raise errors.invalid_parameter_value(
                f"Value {account[:80]} for parameter AWSAccountIds is invalid."
            )
    for action in actions:
        if action != "*" and action not in action_names():
            raise errors.invalid_parameter_value(
                f"Value SQS:{action[:80]} for parameter ActionName is invalid. Reason: "
                "Please refer to the appropriate WSDL for a list of valid actions."
            )
    if len(actions) > MAX_ACTIONS:
        raise errors.over_limit(f"{len(actions)} actions: a statement has at most {MAX_ACTIONS}.")
    queue = await queue_definition(call)
    arn = queue_arn(call, queue.name)
    statement = {
        "Sid": label,
        "Effect": "Allow",
        "Principal": {"AWS": _one_or_list([f"arn:aws:iam::{a}:root" for a in accounts])},
        "Action": _one_or_list([f"SQS:{a}" for a in actions]),
        "Resource": arn,
    }

    def added(options: QueueOptions) -> dict[str, object]:
        policy, statements = _statements(options.policy)
        if any(isinstance(s, dict) and s.get("Sid") == label for s in statements):
            raise errors.invalid_parameter_value(
                f"Value {label} for parameter Label is invalid. Reason: Already exists."
            )
        policy = {"Version": "2012-10-17", "Id": f"{arn}/SQSDefaultPolicy", **policy}
        policy["Statement"] = [*statements, statement]
        text = json.dumps(policy, separators=(",", ":"))
        if len(text.encode()) > MAX_POLICY_BYTES:
            raise errors.over_limit(f"The queue's policy would be over {MAX_POLICY_BYTES} bytes.")
        return {"policy": text}

    # Computed on the version the update reads (a compare-and-set): two permissions added
    # at once are both kept.
    await call.engine.update_queue(call.account, queue.name, added)
    return {}


async def remove_permission(call: SqsCall) -> dict[str, Any]:
    label = _label(call)
    queue = await queue_definition(call)

    def removed(options: QueueOptions) -> dict[str, object]:
        policy, statements = _statements(options.policy)
        kept = [s for s in statements if not (isinstance(s, dict) and s.get("Sid") == label)]
        if len(kept) == len(statements):
            raise errors.invalid_parameter_value(
                f"Value {label} for parameter Label is invalid. Reason: can't find label."
            )
        text = json.dumps({**policy, "Statement": kept}, separators=(",", ":"))
        return {"policy": text if kept else None}  # the Policy goes with its last statement

    await call.engine.update_queue(call.account, queue.name, removed)
    return {}
