"""SQS queue actions on the engine's queues: the same queues v1 and v2 see.

SQS queue names are [A-Za-z0-9_-]{1,80}, a subset of CassieQ's, and a FIFO queue's the same
ending in '.fifo' (fifo.py); a queue made through v1 or v2 with a '.' in its name is still
reached by its URL. Add/RemovePermission edit the kept Policy (permissions.py).
"""

from __future__ import annotations

import base64
import binascii
import functools
from typing import Any

import msgspec

from cassieq.api.sqs import errors
from cassieq.api.sqs.actions import attributes, fifo, move_tasks, permissions
from cassieq.api.sqs.actions.common import name_of_url, queue_definition, queue_url, required
from cassieq.api.sqs.context import Handler, SqsCall
from cassieq.engine.errors import (
    Conflict,
    Contention,
    InvalidArgument,
    QueueExists,
    QueueLimitReached,
    QueueNotFound,
)
from cassieq.model import QueueOptions

MAX_LIST = 1000
MAX_TAGS = 50


def _engine_errors(handler: Handler) -> Handler:
    """The engine's errors as SQS's (what a handler does not answer itself)."""

    @functools.wraps(handler)
    async def run(call: SqsCall) -> dict[str, Any]:
        try:
            return await handler(call)
        except QueueNotFound:
            raise errors.queue_does_not_exist() from None
        except QueueLimitReached as exc:
            raise errors.over_limit(str(exc)) from None
        except InvalidArgument as exc:
            raise errors.invalid_parameter_value(str(exc)) from None
        except (Contention, QueueExists):  # raced another change of the queue: retryable
            raise errors.service_unavailable() from None

    return run


def _attributes_param(call: SqsCall) -> dict[str, Any]:
    given = call.params.get("Attributes") or {}
    if not isinstance(given, dict):
        raise errors.invalid_parameter_value("Attributes must be a map of names to values.")
    return given


def _check_tags(tags: Any) -> dict[str, str]:
    if not isinstance(tags, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in tags.items()
    ):
        raise errors.invalid_parameter_value("Tags must be a map of strings to strings.")
    for key, value in tags.items():
        if not 1 <= len(key) <= 128 or len(value) > 256:
            raise errors.invalid_parameter_value(
                "Tag keys must be 1 to 128 characters, tag values at most 256."
            )
    return tags


async def _check_dead_letter(
    call: SqsCall, changes: dict[str, object], source_fifo: bool, given: dict[str, Any]
) -> None:
    """The dead-letter queue a RedrivePolicy names exists and is of its source's type."""
    dlq = changes.get("dlq_name")
    if not isinstance(dlq, str):
        return
    target = await call.engine.find_queue(call.account, dlq)
    if target is None:
        raise errors.queue_does_not_exist(dlq)
    fifo.check_dead_letter_type(given.get("RedrivePolicy"), source_fifo, target.options.fifo)


async def create_queue(call: SqsCall) -> dict[str, Any]:
    name = str(required(call, "QueueName"))
    given = _attributes_param(call)
    is_fifo = fifo.requested(given)
    fifo.check_name(name, is_fifo)
    changes = attributes.option_changes(call, given, fifo_queue=is_fifo, creating=True)
    tags = _check_tags(call.params.get("tags") or {})
    if len(tags) > MAX_TAGS:
        raise errors.invalid_parameter_value(f"A queue can have at most {MAX_TAGS} tags.")
    await _check_dead_letter(call, changes, is_fifo, given)
    # SQS has no word for partitions: the server's default (issue 35).
    options = attributes.sqs_options({"partitions": call.engine.default_partitions, **changes})
    fifo.check_throughput(options)
    try:
        definition, created = await call.engine.create_queue(call.account, name, options, tags=tags)
    except InvalidArgument as exc:
        raise errors.invalid_attribute_value(str(exc)) from None
    # An existing queue: the URL when the attributes given match it (those not given are
    # not compared, as SQS does), QueueNameExists naming the ones that differ otherwise.
    if not created:
        differ = [
            attribute
            for attribute, value in given.items()
            if any(
                getattr(definition.options, f) != v
                for f, v in attributes.option_changes(
                    call, {attribute: value}, fifo_queue=is_fifo, creating=True
                ).items()
            )
        ]
        if differ:
            raise errors.queue_name_exists(differ)
    return {"QueueUrl": queue_url(call, name)}


async def get_queue_url(call: SqsCall) -> dict[str, Any]:
    name = str(required(call, "QueueName"))
    owner = call.params.get("QueueOwnerAWSAccountId")
    if owner not in (None, call.account):
        raise errors.access_denied("Access to the queue of another account is denied.")
    if await call.engine.find_queue(call.account, name) is None:
        raise errors.queue_does_not_exist(name)
    return {"QueueUrl": queue_url(call, name)}


def _page(call: SqsCall, names: list[str]) -> tuple[list[str], str | None]:
    """SQS's pagination: MaxResults (1-1000) and an opaque NextToken (the last name
    given, so a page is stable while queues come and go)."""
    limit = call.params.get("MaxResults")
    if limit is not None and not (isinstance(limit, int) and 1 <= limit <= MAX_LIST):
        raise errors.invalid_parameter_value(f"MaxResults must be from 1 to {MAX_LIST}.")
    token = call.params.get("NextToken")
    if token is not None:
        try:
            after = base64.b64decode(str(token), altchars=b"-_", validate=True).decode()
        except (binascii.Error, UnicodeError, ValueError):
            raise errors.invalid_parameter_value("Invalid NextToken value.") from None
        names = [n for n in names if n > after]
    page = names[: limit or MAX_LIST]
    more = limit is not None and len(names) > len(page)
    return page, base64.urlsafe_b64encode(page[-1].encode()).decode() if more else None


async def list_queues(call: SqsCall) -> dict[str, Any]:
    prefix = str(call.params.get("QueueNamePrefix") or "")
    names = sorted(
        q.name for q in await call.engine.list_queues(call.account) if q.name.startswith(prefix)
    )
    page, token = _page(call, names)
    result: dict[str, Any] = {}
    if page:
        result["QueueUrls"] = [queue_url(call, n) for n in page]
    if token is not None:
        result["NextToken"] = token
    return result


async def delete_queue(call: SqsCall) -> dict[str, Any]:
    name = name_of_url(call, str(required(call, "QueueUrl")))
    await call.engine.delete_queue(call.account, name)
    return {}


async def get_queue_attributes(call: SqsCall) -> dict[str, Any]:
    requested = call.params.get("AttributeNames") or []
    if not isinstance(requested, list):
        raise errors.invalid_parameter_value("AttributeNames must be a list.")
    names = attributes.attribute_names([str(n) for n in requested])
    queue = await queue_definition(call, fresh=True)
    stats = None
    if attributes.needs_statistics(names):
        stats = await call.engine.statistics(call.account, queue.name)
    shown = attributes.render(call, queue, names, stats)
    return {"Attributes": shown} if shown else {}


async def set_queue_attributes(call: SqsCall) -> dict[str, Any]:
    queue = await queue_definition(call)
    given = _attributes_param(call)
    changes = attributes.option_changes(call, given, fifo_queue=queue.options.fifo)
    await _check_dead_letter(call, changes, queue.options.fifo, given)

    def checked(options: QueueOptions) -> dict[str, object]:
        # On the options the update reads (a compare-and-set): the other of the pair may
        # be changing at the same time.
        fifo.check_throughput(msgspec.structs.replace(options, **changes))
        return changes

    try:
        await call.engine.update_queue(call.account, queue.name, checked)
    except QueueExists:
        raise
    except (InvalidArgument, Conflict) as exc:
        # The engine's refusals of a change: fewer partitions (PartitionsCannotShrink), or
        # what a FIFO queue keeps from its creation (its partitions, its type).
        raise errors.invalid_attribute_value(str(exc)) from None
    return {}


async def purge_queue(call: SqsCall) -> dict[str, Any]:
    queue = await queue_definition(call)
    await call.engine.purge(call.account, queue.name)
    return {}


async def list_dead_letter_source_queues(call: SqsCall) -> dict[str, Any]:
    dlq = await queue_definition(call)
    names = sorted(
        q.name
        for q in await call.engine.list_queues(call.account)
        if q.options.dlq_name == dlq.name
    )
    page, token = _page(call, names)
    # "queueUrls", lower-case: as SQS's API names this one member.
    result: dict[str, Any] = {"queueUrls": [queue_url(call, n) for n in page]}
    if token is not None:
        result["NextToken"] = token
    return result


async def tag_queue(call: SqsCall) -> dict[str, Any]:
    queue = await queue_definition(call)
    tags = _check_tags(required(call, "Tags"))
    if not tags:  # as SQS: an empty map is, in the query protocol, no parameter at all
        raise errors.missing_parameter("Tags")
    if len({**queue.tags, **tags}) > MAX_TAGS:
        raise errors.invalid_parameter_value(f"A queue can have at most {MAX_TAGS} tags.")
    await call.engine.retag_queue(call.account, queue.name, tags, [])
    return {}


async def untag_queue(call: SqsCall) -> dict[str, Any]:
    queue = await queue_definition(call)
    keys = required(call, "TagKeys")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise errors.invalid_parameter_value("TagKeys must be a list of strings.")
    if not keys:  # as Tags above
        raise errors.missing_parameter("TagKeys")
    await call.engine.retag_queue(call.account, queue.name, {}, keys)
    return {}


async def list_queue_tags(call: SqsCall) -> dict[str, Any]:
    # Fresh: a change just made on another server must show.
    queue = await queue_definition(call, fresh=True)
    return {"Tags": dict(queue.tags)} if queue.tags else {}


ACTIONS: dict[str, Handler] = {
    name: _engine_errors(handler)
    for name, handler in {
        "CreateQueue": create_queue,
        "GetQueueUrl": get_queue_url,
        "ListQueues": list_queues,
        "DeleteQueue": delete_queue,
        "GetQueueAttributes": get_queue_attributes,
        "SetQueueAttributes": set_queue_attributes,
        "PurgeQueue": purge_queue,
        "ListDeadLetterSourceQueues": list_dead_letter_source_queues,
        "TagQueue": tag_queue,
        "UntagQueue": untag_queue,
        "ListQueueTags": list_queue_tags,
        "AddPermission": permissions.add_permission,
        "RemovePermission": permissions.remove_permission,
        **move_tasks.ACTIONS,
    }.items()
}
