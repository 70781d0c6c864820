"""SQS message move tasks (Start/List/CancelMessageMoveTask) on the engine's redrive.

A task handle names the dead-letter queue and the redrive task, so a cancel (which gets
only the handle) finds it; it is checked against the caller's account like a queue URL.
Status "running" with a cancel asked is SQS's CANCELLING; "interrupted" (its server stopped)
is SQS's FAILED, with the reason.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cassieq.api.sqs import errors
from cassieq.api.sqs.actions.common import name_of_arn, queue_arn, required
from cassieq.api.sqs.context import Handler, SqsCall
from cassieq.engine.errors import InvalidArgument, NotFound
from cassieq.model import RedriveTask

MAX_PER_SECOND = 500  # SQS's bound of MaxNumberOfMessagesPerSecond
_STATUS = {
    "running": "RUNNING",
    "completed": "COMPLETED",
    "failed": "FAILED",
    "interrupted": "FAILED",
}


def _resource_not_found(message: str) -> errors.SqsError:
    return errors.SqsError("ResourceNotFoundException", message)


def task_handle(account: str, queue: str, task_id: str) -> str:
    return base64.urlsafe_b64encode(f"{account}:{queue}:{task_id}".encode()).decode()


def _of_handle(call: SqsCall, handle: str) -> tuple[str, str]:
    try:
        raw = base64.b64decode(handle, altchars=b"-_", validate=True)
        account, queue, task_id = raw.decode().split(":")
    except (binascii.Error, UnicodeError, ValueError):
        raise errors.invalid_parameter_value("Value for parameter TaskHandle is invalid.") from None
    if account != call.account:  # not said apart from an unknown task: it tells nothing
        raise _resource_not_found(
            "The resource that you specified for the TaskHandle does not exist."
        )
    return queue, task_id


def _status(task: RedriveTask) -> str:
    if task.status == "running" and task.cancel_requested:
        return "CANCELLING"
    return _STATUS.get(task.status, task.status.upper())


async def start_message_move_task(call: SqsCall) -> dict[str, Any]:
    source = name_of_arn(call, str(required(call, "SourceArn")), "SourceArn")
    destination = call.params.get("DestinationArn")
    to = None if destination is None else name_of_arn(call, str(destination), "DestinationArn")
    rate = call.params.get("MaxNumberOfMessagesPerSecond")
    if rate is not None and not (isinstance(rate, int) and 1 <= rate <= MAX_PER_SECOND):
        raise errors.invalid_parameter_value(
            f"Value for parameter MaxNumberOfMessagesPerSecond must be from 1 to {MAX_PER_SECOND}."
        )
    try:
        task = await call.engine.start_redrive(call.account, source, to, rate)
    except NotFound:
        raise errors.queue_does_not_exist(source) from None
    except InvalidArgument as exc:
        raise errors.invalid_parameter_value(str(exc)) from None
    return {"TaskHandle": task_handle(call.account, source, task.id)}


async def list_message_move_tasks(call: SqsCall) -> dict[str, Any]:
    source_arn = str(required(call, "SourceArn"))
    source = name_of_arn(call, source_arn, "SourceArn")
    limit = call.params.get("MaxResults", 1)
    if not (isinstance(limit, int) and 1 <= limit <= 10):
        raise errors.invalid_parameter_value("Value for parameter MaxResults must be from 1 to 10.")
    try:
        tasks = await call.engine.list_redrives(call.account, source)
    except NotFound:
        raise errors.queue_does_not_exist(source) from None
    results = []
    for task in tasks[:limit]:
        result: dict[str, Any] = {
            "Status": _status(task),
            "SourceArn": source_arn,
            "ApproximateNumberOfMessagesMoved": task.moved,
            "ApproximateNumberOfMessagesToMove": task.total,
            "StartedTimestamp": task.started_at,
        }
        if task.status == "running":  # SQS gives the handle of a running task only
            result["TaskHandle"] = task_handle(call.account, source, task.id)
        if task.target is not None:
            result["DestinationArn"] = queue_arn(call, task.target)
        if task.max_per_second is not None:
            result["MaxNumberOfMessagesPerSecond"] = task.max_per_second
        reasons = []
        if task.status == "interrupted":
            reasons.append(
                "The server running the task stopped; start a new task to move the rest."
            )
        if task.failed:
            reasons.append(
                f"{task.failed} message(s) had no queue to go back to (no recorded source)."
            )
        if reasons:
            result["FailureReason"] = " ".join(reasons)
        results.append(result)
    return {"Results": results}


async def cancel_message_move_task(call: SqsCall) -> dict[str, Any]:
    queue, task_id = _of_handle(call, str(required(call, "TaskHandle")))
    try:
        task = await call.engine.cancel_redrive(call.account, queue, task_id)
    except NotFound:
        raise _resource_not_found(
            "The resource that you specified for the TaskHandle does not exist."
        ) from None
    except InvalidArgument as exc:  # not running any more
        raise errors.unsupported_operation(str(exc)) from None
    return {"ApproximateNumberOfMessagesMoved": task.moved}


ACTIONS: dict[str, Handler] = {
    "StartMessageMoveTask": start_message_move_task,
    "ListMessageMoveTasks": list_message_move_tasks,
    "CancelMessageMoveTask": cancel_message_move_task,
}
