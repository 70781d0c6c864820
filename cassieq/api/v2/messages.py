"""v2 message routes: batch send, receive (long polling), batch ack, batch visibility.

Thin: validate, authorize (the route's level), call the engine façade, shape the answer.
A batch answers per entry: one stale or foreign receipt is reported in ``failed`` with its
own code, never a whole-request error.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from litestar import Controller, post
from litestar.params import FromPath, JSONBody

from cassieq.api.dependencies import App, Engine
from cassieq.api.errors import errors_v2
from cassieq.api.security import account_before_request
from cassieq.api.v2.deliveries import acked, leases_changed, received
from cassieq.api.v2.dto_messages import (
    MAX_BATCH,
    AckRequest,
    AckResponse,
    ReceiveRequest,
    ReceiveResponse,
    SendRequest,
    SendResponse,
    SentEntry,
    VisibilityRequest,
    VisibilityResponse,
)
from cassieq.engine.errors import InvalidArgument
from cassieq.model import MAX_MESSAGE_BYTES, OutgoingMessage, message_id
from cassieq.model import AuthorizationLevel as L

# A send (or visibility) batch may carry 100 messages of 256 KiB (the queue's limit until it
# was raised to SQS's 1 MiB; kept, not multiplied by four, so one request holds no more
# than it did); 1 MiB more covers the JSON around them (keys, quotes, attributes' framing, a
# few escapes). A larger batch (of 1 MiB messages: more than 25 or so) is 413: send it in parts.
BATCH_BODY_LIMIT = MAX_BATCH * MAX_MESSAGE_BYTES + 1024 * 1024


class MessageV2Controller(Controller):
    path = "/api/v2/accounts/{account:str}/queues/{queue:str}/messages"
    tags = ["messages v2"]
    before_request = staticmethod(account_before_request)

    @post(
        operation_id="sendMessages",
        opt={"level": L.PUT_MESSAGE},
        summary="Send 1-100 messages; their ids in request order (FIFO queues: with their "
        "sequence numbers, a duplicate flagged and answered with the first one's id)",
        status_code=201,
        request_max_body_size=BATCH_BODY_LIMIT,
        responses=errors_v2(401, 403, 404, 413, 503),
    )
    async def send(
        self,
        engine: Engine,
        account: FromPath[str],
        queue: FromPath[str],
        data: JSONBody[SendRequest],
    ) -> SendResponse:
        # The queue's maxMessageBytes and delaySeconds are the engine's to apply.
        options = (await engine.queue(account, queue)).options
        if options.fifo:
            _check_fifo_send(data, options.content_based_deduplication)
        outgoing = [
            OutgoingMessage(
                body=entry.body,
                delay_ms=None if entry.delay_seconds is None else entry.delay_seconds * 1000,
                attributes=dict(entry.attributes),
                # A group stays in one partition: its messages in order there (a FIFO
                # queue's engine places them by group itself).
                partition_key=entry.partition_key or entry.group_id,
                group=entry.group_id,
                dedup_id=entry.deduplication_id,
            )
            for entry in data.messages
        ]
        sent = await engine.send(account, queue, outgoing)
        return SendResponse(
            messages=[
                SentEntry(
                    id=message_id(s.partition, s.monoton),
                    message_tag=s.tag,
                    sequence_number=s.sequence_number,
                    # A FIFO queue's answer says true or false; a standard queue's nothing.
                    duplicate=None if s.sequence_number is None else s.duplicate,
                )
                for s in sent
            ]
        )

    @post(
        "/receive",
        operation_id="receiveMessages",
        opt={"level": L.READ_MESSAGE},
        summary="Receive up to maxMessages; with waitSeconds, wait for the first one",
        status_code=200,
        responses=errors_v2(401, 403, 404, 503),
    )
    async def receive(
        self,
        app: App,
        account: FromPath[str],
        queue: FromPath[str],
        data: JSONBody[ReceiveRequest],
    ) -> ReceiveResponse:
        deliveries = await app.engine.receive(
            account,
            queue,
            max_messages=data.max_messages,
            invisibility_s=data.visibility_timeout_seconds,
            wait_s=data.wait_seconds,
            attempt_id=data.receive_attempt_id,
        )
        return await received(app.receipts, account, queue, deliveries)

    @post(
        "/ack",
        operation_id="ackMessages",
        opt={"level": L.ACK_MESSAGE},
        summary="Ack 1-100 messages by pop receipt; the stale ones reported in failed",
        status_code=200,
        responses=errors_v2(401, 403, 404, 503),
    )
    async def ack(
        self,
        app: App,
        account: FromPath[str],
        queue: FromPath[str],
        data: JSONBody[AckRequest],
    ) -> AckResponse:
        await app.engine.queue(account, queue)  # an unknown queue is a 404, as in v1
        return await acked(
            app.receipts,
            account,
            queue,
            data.pop_receipts,
            partial(app.engine.ack_batch, account, queue),
        )

    @post(
        "/visibility",
        operation_id="changeMessageVisibility",
        opt={"level": L.UPDATE_MESSAGE},
        summary="Give 1-100 deliveries a new lease (and maybe a new body); new receipts",
        status_code=200,
        request_max_body_size=BATCH_BODY_LIMIT,
        responses=errors_v2(401, 403, 404, 503),
    )
    async def visibility(
        self,
        app: App,
        account: FromPath[str],
        queue: FromPath[str],
        data: JSONBody[VisibilityRequest],
    ) -> VisibilityResponse:
        return await leases_changed(
            app.receipts,
            account,
            queue,
            data.entries,
            partial(app.engine.change_visibility, account, queue),
        )


def _check_fifo_send(data: SendRequest, content_based: bool) -> None:
    """A FIFO queue's refusals, named by v2's fields and entries (SQS's rules; the engine
    refuses the first two in its own words): every message needs a groupId, none may have
    its own delay, and without content-based deduplication each needs a deduplicationId
    (a FIFO send that could silently be stored twice is refused, not accepted)."""
    for i, entry in enumerate(data.messages):
        if entry.group_id is None:
            raise InvalidArgument(f"messages[{i}]: groupId is required on a FIFO queue")
        if entry.delay_seconds is not None:
            raise InvalidArgument(
                f"messages[{i}]: delaySeconds cannot be set per message on a FIFO queue "
                "(the queue's delaySeconds applies)"
            )
        if entry.deduplication_id is None and not content_based:
            raise InvalidArgument(
                f"messages[{i}]: deduplicationId is required on a FIFO queue without "
                "contentBasedDeduplication"
            )


MESSAGE_ROUTES: list[Any] = [MessageV2Controller]
