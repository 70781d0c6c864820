"""What every SQS action needs: the queue a QueueUrl names, and a queue's URL and ARN.

A queue URL is ``<base_url>/<account>/<queue>`` (as SQS's ``https://sqs.<region>.
amazonaws.com/<account id>/<queue>``): the account takes the place of SQS's account id.
Only the path counts (clients reach us through proxies and other host names); a URL of
another account is refused whether or not that queue exists, so it tells nothing.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from cassieq.api.sqs import errors
from cassieq.api.sqs.context import SqsCall
from cassieq.engine.errors import QueueNotFound
from cassieq.model import QueueDefinition, valid_name


def queue_url(call: SqsCall, name: str) -> str:
    return f"{call.base_url.rstrip('/')}/{call.account}/{name}"


def queue_arn(call: SqsCall, name: str) -> str:
    return f"arn:aws:sqs:{call.region}:{call.account}:{name}"


def name_of_url(call: SqsCall, url: str) -> str:
    """The queue name of a QueueUrl of the caller's account (not looked up)."""
    parts = [unquote(p) for p in urlsplit(url).path.split("/") if p]
    if len(parts) != 2 or not all(valid_name(p) for p in parts):
        # As SQS answers a URL that names no queue (QueueDoesNotExist; in the query
        # protocol AWS.SimpleQueueService.NonExistentQueue).
        raise errors.queue_does_not_exist()
    account, name = parts
    if account != call.account:
        raise errors.access_denied(f"Access to the resource {url} is denied.")
    return name


def name_of_arn(call: SqsCall, arn: str, label: str) -> str:
    """The queue name of an SQS queue ARN of the caller's account (not looked up)."""
    parts = arn.split(":")
    if len(parts) != 6 or parts[:3] != ["arn", "aws", "sqs"] or not valid_name(parts[5]):
        raise errors.invalid_parameter_value(f"Value {arn} for parameter {label} is invalid.")
    if parts[4] != call.account:
        raise errors.access_denied(f"Access to the resource {arn} is denied.")
    return parts[5]


def required(call: SqsCall, name: str) -> Any:
    value = call.params.get(name)
    if value is None or value == "":
        raise errors.missing_parameter(name)
    return value


async def queue_definition(
    call: SqsCall, url: str | None = None, *, fresh: bool = False
) -> QueueDefinition:
    """The definition of the queue the call's QueueUrl (or ``url``) names (``fresh``: read
    from the store, not this server's briefly cached copy)."""
    name = name_of_url(call, url if url is not None else str(required(call, "QueueUrl")))
    try:
        return await call.engine.queue(call.account, name, fresh=fresh)
    except QueueNotFound:
        raise errors.queue_does_not_exist(name) from None


async def queue_of(call: SqsCall, url: str | None = None) -> tuple[str, str]:
    """(account, queue name) of the call's QueueUrl (or ``url``): the caller's account only
    (AccessDenied for another's), an existing queue only (QueueDoesNotExist)."""
    definition = await queue_definition(call, url)
    return definition.account, definition.name
