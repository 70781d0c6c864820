"""(Stand-in until sqs-h2's common.py is merged.)"""

from __future__ import annotations

from urllib.parse import urlsplit

from cassieq.engine.errors import QueueNotFound
from cassieq.sqs import errors
from cassieq.sqs.context import SqsCall


async def queue_of(call: SqsCall, queue_url: str) -> tuple[str, str]:
    parts = urlsplit(str(queue_url)).path.strip("/").split("/")
    if len(parts) != 2 or parts[0] != call.account:
        raise errors.queue_does_not_exist()
    try:
        await call.engine.queues.get(parts[0], parts[1])
    except QueueNotFound:
        raise errors.queue_does_not_exist() from None
    return parts[0], parts[1]
