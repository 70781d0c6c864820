"""Message routes of the v1 API: put, get next, update, ack."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, Response, delete, get, post, put
from litestar.exceptions import HTTPException
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema
from litestar.params import FromPath, JSONBody, QueryParameter

from cassieq.api.dependencies import App, Engine
from cassieq.api.errors import errors, errors_response
from cassieq.api.http.empty import EmptyResponse, empty
from cassieq.api.security import account_before_request
from cassieq.api.v1.dto import GetMessageBody, UpdateMessageBody, UpdateMessageRequest
from cassieq.auth.receipt_keys import ReceiptSigner
from cassieq.auth.receipts import ReceiptOfAnotherQueue
from cassieq.engine import QueueEngine
from cassieq.engine.errors import StaleReceipt
from cassieq.model import MAX_MESSAGE_BYTES, PopReceipt
from cassieq.model import AuthorizationLevel as L


@dataclass
class _RawMessageBody(Operation):
    """The put body is opaque text stored verbatim, whatever the content type."""

    def __post_init__(self) -> None:
        # Litestar passes request_body=None for a handler without `data`: document ours.
        # A string, not `format: binary`: Swagger UI then offers a text box (binary gave only
        # a file picker) and the generated client takes a str. Any UTF-8 text is stored as
        # sent; the wire is unchanged.
        self.request_body = RequestBody(
            content={
                "text/plain": OpenAPIMediaType(
                    schema=Schema(type=OpenAPIType.STRING, examples=["Hello, world"])
                )
            },
            description="The message, stored as sent (UTF-8), at most 256 KiB",
            required=True,
        )


class MessageController(Controller):
    path = "/api/v1/accounts/{account:str}/queues/{queue:str}/messages"
    tags = ["messages"]
    before_request = staticmethod(account_before_request)

    @post(
        operation_id="putMessage",
        opt={"level": L.PUT_MESSAGE},
        summary="Put a message (the raw request body)",
        status_code=201,
        media_type="text/plain",
        operation_class=_RawMessageBody,
        # The body is the message: refused by its Content-Length before any of it is read,
        # and a chunked one as soon as it is longer.
        request_max_body_size=MAX_MESSAGE_BYTES,
        responses={201: empty("Stored (empty body)"), **errors(400, 401, 403, 404, 413)},
    )
    async def put_message(
        self,
        engine: Engine,
        request: Request[Any, Any, Any],
        account: FromPath[str],
        queue: FromPath[str],
        initial_invisibility_seconds: Annotated[
            int | None,
            QueryParameter(
                name="initialInvisibilitySeconds",
                ge=0,
                le=7 * 24 * 3600,
                description=(
                    "Seconds before the message is first visible "
                    "(default: the queue's delaySeconds, 0 unless set)"
                ),
            ),
        ] = None,
        initial_invisiblity_time: Annotated[
            int | None,
            QueryParameter(
                name="initialInvisiblityTime",
                ge=0,
                le=7 * 24 * 3600,
                description="Deprecated spelling CassieQ still accepts; not with the other",
            ),
        ] = None,
    ) -> Response[Any]:
        if initial_invisibility_seconds is not None and initial_invisiblity_time is not None:
            return errors_response(
                400,
                "query params initialInvisibilitySeconds and initialInvisiblityTime "
                "are mutually exclusive",
            )
        # CassieQ's deprecated (misspelt) parameter is honoured as its clients still send it.
        # Neither given: the queue's delaySeconds (the engine applies it).
        initial_s = (
            initial_invisiblity_time
            if initial_invisibility_seconds is None
            else initial_invisibility_seconds
        )
        # The route's request_max_body_size refused a larger body already (413).
        body = await request.body()
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return errors_response(422, "the message must be UTF-8 text")
        await engine.put(account, queue, text, initial_s)
        return EmptyResponse(201)

    @get(
        "/next",
        operation_id="getNextMessage",
        opt={"level": L.READ_MESSAGE},
        summary="Get the next visible message (204 when there is none)",
        responses={
            204: ResponseSpec(data_container=None, description="No visible message"),
            **errors(400, 401, 403, 404),
        },
    )
    async def next_message(
        self,
        app: App,
        account: FromPath[str],
        queue: FromPath[str],
        invisibility_time_seconds: Annotated[
            int, QueryParameter(name="invisibilityTimeSeconds", ge=0, le=7 * 24 * 3600)
        ] = 30,
    ) -> Response[GetMessageBody | None]:
        got = await app.engine.get_next(account, queue, invisibility_time_seconds)
        if got is None:
            return Response(None, status_code=204)
        return Response(
            GetMessageBody(
                pop_receipt=await app.receipts.encode(account, queue, got.receipt),
                message=got.message,
                delivery_count=got.delivery_count,
                message_tag=got.tag,
            )
        )

    @put(
        operation_id="updateMessage",
        opt={"level": L.UPDATE_MESSAGE},
        summary="Update a message's payload and/or invisibility; returns a new receipt",
        responses=errors(400, 401, 403, 404, 409, 413),
    )
    async def update_message(
        self,
        app: App,
        account: FromPath[str],
        queue: FromPath[str],
        data: JSONBody[UpdateMessageRequest],
        pop_receipt: Annotated[
            str, QueryParameter(name="popReceipt", min_length=1, max_length=1024)
        ],
    ) -> UpdateMessageBody:
        receipt = await _receipt_for(app.engine, app.receipts, account, queue, pop_receipt)
        if data.message is not None:
            _check_size(len(data.message.encode()))
        new = await app.engine.update(
            account, queue, receipt, data.message, data.new_invisibility_seconds
        )
        return UpdateMessageBody(
            pop_receipt=await app.receipts.encode(account, queue, new), message_tag=new.tag
        )

    @delete(
        operation_id="ackMessage",
        opt={"level": L.ACK_MESSAGE},
        summary="Ack a message (204); 409 when the receipt is stale",
        status_code=204,
        responses=errors(400, 401, 403, 404, 409),
    )
    async def ack_message(
        self,
        app: App,
        account: FromPath[str],
        queue: FromPath[str],
        pop_receipt: Annotated[
            str, QueryParameter(name="popReceipt", min_length=1, max_length=1024)
        ],
    ) -> None:
        await app.engine.ack(
            account,
            queue,
            await _receipt_for(app.engine, app.receipts, account, queue, pop_receipt),
        )


async def _receipt_for(
    engine: QueueEngine, receipts: ReceiptSigner, account: str, queue: str, token: str
) -> PopReceipt:
    """The queue is looked up before the receipt, as CassieQ does: a receipt on an unknown
    queue's URL is a 404; a genuine receipt of another queue is stale there (409); only a
    malformed or forged one is a bad parameter (400)."""
    await engine.queue(account, queue)
    try:
        return await receipts.decode(account, queue, token)
    except ReceiptOfAnotherQueue as exc:
        raise StaleReceipt(str(exc)) from None


def _check_size(size: int) -> None:
    if size > MAX_MESSAGE_BYTES:
        raise HTTPException(
            status_code=413, detail=f"the message is larger than {MAX_MESSAGE_BYTES} bytes"
        )
