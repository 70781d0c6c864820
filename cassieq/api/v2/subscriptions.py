"""v2 subscription routes (issue 36): create/list/show/delete a queue's subscriptions; an
ordered subscription's read, commit and seek; a shared subscription's receive, ack and
visibility (docs/guides/subscriptions.md).

Thin: validate (msgspec bodies, unknown fields refused), authorize (the route's level),
call ``engine.subscriptions``, shape the answer. Levels, as the queue's own routes have
them: a subscription is made and removed as a queue is (c, d), shown as a queue is (g); a
read shows bodies, as receive and peek do (r); a commit or a seek says which messages are
done, as an ack does (a). A shared subscription's receive, ack and visibility take the
bodies and give the answers of the queue's ``messages/receive``, ``messages/ack`` and
``messages/visibility`` (deliveries.py), at the same levels (r, a, u); their receipts are
signed for the subscription (``subscription_binding``), so a receipt of the queue or of
another subscription is refused there, per entry, as one of another queue.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from litestar import Controller, Response, delete, get, post, put
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, JSONBody, QueryParameter

from cassieq.api.dependencies import App, Engine
from cassieq.api.errors import errors_v2
from cassieq.api.security import account_before_request
from cassieq.api.v2.deliveries import acked, leases_changed, received
from cassieq.api.v2.dto_messages import (
    AckRequest,
    AckResponse,
    ReceiveRequest,
    ReceiveResponse,
    VisibilityRequest,
    VisibilityResponse,
)
from cassieq.api.v2.dto_subscriptions import (
    CommitRequest,
    ReadBody,
    SeekRequest,
    SubscriptionBody,
    SubscriptionDetailBody,
    SubscriptionListBody,
    SubscriptionOptionsBody,
)
from cassieq.api.v2.entries import subscription_binding
from cassieq.api.v2.messages import BATCH_BODY_LIMIT
from cassieq.engine.errors import InvalidArgument
from cassieq.model import AuthorizationLevel as L
from cassieq.model import name_problem
from cassieq.model_subscriptions import MAX_READ_LIMIT

DEFAULT_READ_LIMIT = 100


class SubscriptionV2Controller(Controller):
    path = "/api/v2/accounts/{account:str}/queues/{queue:str}/subscriptions"
    tags = ["subscriptions v2"]
    before_request = staticmethod(account_before_request)

    @put(
        "/{subscription:str}",
        operation_id="putSubscription",
        opt={"level": L.CREATE_QUEUE},
        summary="Create a subscription of the queue (201); 200 when it exists with the same "
        "mode and start, 409 when it exists with others or the queue has as many as it may; "
        "422 for a bad name, mode or start",
        status_code=201,
        responses={
            200: ResponseSpec(
                data_container=SubscriptionBody,
                description="It already existed with the same options",
                generate_examples=False,
            ),
            **errors_v2(401, 403, 404, 409),
        },
    )
    async def put_subscription(
        self,
        engine: Engine,
        account: FromPath[str],
        queue: FromPath[str],
        subscription: FromPath[str],
        data: JSONBody[SubscriptionOptionsBody],
    ) -> Response[SubscriptionBody]:
        if problem := name_problem("subscription name", subscription):
            raise InvalidArgument(problem)
        definition, created = await engine.subscriptions.create(
            account, queue, subscription, data.mode, data.start
        )
        return Response(SubscriptionBody.of(definition), status_code=201 if created else 200)

    @get(
        operation_id="listSubscriptions",
        opt={"level": L.GET_QUEUE_INFORMATION},
        summary="The queue's subscriptions, each with its lag and oldest unread age",
        responses=errors_v2(401, 403, 404),
    )
    async def list_subscriptions(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str]
    ) -> SubscriptionListBody:
        infos = await engine.subscriptions.list(account, queue)
        now = engine.now()
        return SubscriptionListBody(
            subscriptions=[SubscriptionDetailBody.of(info, now) for info in infos]
        )

    @get(
        "/{subscription:str}",
        operation_id="getSubscription",
        opt={"level": L.GET_QUEUE_INFORMATION},
        summary="A subscription: its options, committed position, lag (ordered: messages "
        "after the position; shared: messages not yet acked or passed) and "
        "oldestUnackedAgeSeconds (of the first of them; null when none)",
        responses=errors_v2(401, 403, 404),
    )
    async def get_subscription(
        self,
        engine: Engine,
        account: FromPath[str],
        queue: FromPath[str],
        subscription: FromPath[str],
    ) -> SubscriptionDetailBody:
        info = await engine.subscriptions.get(account, queue, subscription)
        return SubscriptionDetailBody.of(info, engine.now())

    @delete(
        "/{subscription:str}",
        operation_id="deleteSubscription",
        opt={"level": L.DELETE_QUEUE},
        summary="Delete a subscription (its position and state; the queue's messages stay)",
        status_code=204,
        responses=errors_v2(401, 403, 404),
    )
    async def delete_subscription(
        self,
        engine: Engine,
        account: FromPath[str],
        queue: FromPath[str],
        subscription: FromPath[str],
    ) -> None:
        await engine.subscriptions.delete(account, queue, subscription)

    @get(
        "/{subscription:str}/messages",
        operation_id="readSubscription",
        # Bodies: the level that reads messages (as receive and peek).
        opt={"level": L.READ_MESSAGE},
        summary="An ordered subscription: up to limit messages after its committed "
        "position, in id order within each partition; next is the position after the last "
        "one. The position does not move: commit it (POST .../position) once they are "
        "processed. 422 on a shared subscription (receive it)",
        responses=errors_v2(401, 403, 404, 503),
    )
    async def read(
        self,
        engine: Engine,
        account: FromPath[str],
        queue: FromPath[str],
        subscription: FromPath[str],
        limit: Annotated[int, QueryParameter(ge=1, le=MAX_READ_LIMIT)] = DEFAULT_READ_LIMIT,
    ) -> ReadBody:
        batch = await engine.subscriptions.read(account, queue, subscription, limit)
        return ReadBody.of(batch)

    @post(
        "/{subscription:str}/position",
        operation_id="commitSubscriptionPosition",
        # It says which messages are done: the level of an ack.
        opt={"level": L.ACK_MESSAGE},
        summary="An ordered subscription: commit a position (a read's next, or a message's "
        "position); with expected, only when the stored position is that one (409 "
        "otherwise). 422: not a position of this queue, or a shared subscription",
        status_code=200,
        responses=errors_v2(401, 403, 404, 409, 503),
    )
    async def commit(
        self,
        engine: Engine,
        account: FromPath[str],
        queue: FromPath[str],
        subscription: FromPath[str],
        data: JSONBody[CommitRequest],
    ) -> SubscriptionBody:
        definition = await engine.subscriptions.commit(
            account, queue, subscription, data.position, data.expected
        )
        return SubscriptionBody.of(definition)

    @post(
        "/{subscription:str}/seek",
        operation_id="seekSubscription",
        opt={"level": L.ACK_MESSAGE},
        summary="Move the position (replay or skip): to earliest, latest, {time} (the first "
        "message sent at or after it) or {position}; the subscription with its new position. "
        "A shared subscription's deliveries start again there: its receipts of before are "
        "stale",
        status_code=200,
        responses=errors_v2(401, 403, 404, 503),
    )
    async def seek(
        self,
        engine: Engine,
        account: FromPath[str],
        queue: FromPath[str],
        subscription: FromPath[str],
        data: JSONBody[SeekRequest],
    ) -> SubscriptionBody:
        definition = await engine.subscriptions.seek(account, queue, subscription, data.target())
        return SubscriptionBody.of(definition)

    @post(
        "/{subscription:str}/receive",
        operation_id="receiveSubscriptionMessages",
        opt={"level": L.READ_MESSAGE},
        summary="A shared subscription: receive up to maxMessages (its own deliveries and "
        "leases; the queue's and other subscriptions' are not touched); with waitSeconds, "
        "wait for the first one. The body and answer of messages/receive; 422 on an ordered "
        "subscription (read it)",
        status_code=200,
        responses=errors_v2(401, 403, 404, 503),
    )
    async def receive(
        self,
        app: App,
        account: FromPath[str],
        queue: FromPath[str],
        subscription: FromPath[str],
        data: JSONBody[ReceiveRequest],
    ) -> ReceiveResponse:
        if data.receive_attempt_id is not None:
            # Silently ignored, a FIFO consumer's retry would get other messages.
            raise InvalidArgument("receiveAttemptId is not taken by a subscription's receive")
        deliveries = await app.engine.subscriptions.receive(
            account,
            queue,
            subscription,
            max_messages=data.max_messages,
            invisibility_s=data.visibility_timeout_seconds,
            wait_s=data.wait_seconds,
        )
        return await received(
            app.receipts, account, subscription_binding(queue, subscription), deliveries
        )

    @post(
        "/{subscription:str}/ack",
        operation_id="ackSubscriptionMessages",
        opt={"level": L.ACK_MESSAGE},
        summary="A shared subscription: ack 1-100 of its deliveries by pop receipt (in it "
        "only); the stale ones, and receipts of the queue or of another subscription, "
        "reported in failed. The body and answer of messages/ack",
        status_code=200,
        responses=errors_v2(401, 403, 404, 503),
    )
    async def ack(
        self,
        app: App,
        account: FromPath[str],
        queue: FromPath[str],
        subscription: FromPath[str],
        data: JSONBody[AckRequest],
    ) -> AckResponse:
        return await acked(
            app.receipts,
            account,
            subscription_binding(queue, subscription),
            data.pop_receipts,
            partial(app.engine.subscriptions.ack_batch, account, queue, subscription),
        )

    @post(
        "/{subscription:str}/visibility",
        operation_id="changeSubscriptionMessageVisibility",
        opt={"level": L.UPDATE_MESSAGE},
        summary="A shared subscription: give 1-100 of its deliveries a new lease; new "
        "receipts. The body and answer of messages/visibility, each entry with "
        "visibilityTimeoutSeconds and without body (a subscription cannot change the "
        "queue's message): 422 otherwise",
        status_code=200,
        request_max_body_size=BATCH_BODY_LIMIT,
        responses=errors_v2(401, 403, 404, 503),
    )
    async def visibility(
        self,
        app: App,
        account: FromPath[str],
        queue: FromPath[str],
        subscription: FromPath[str],
        data: JSONBody[VisibilityRequest],
    ) -> VisibilityResponse:
        _check_lease_only(data)
        return await leases_changed(
            app.receipts,
            account,
            subscription_binding(queue, subscription),
            data.entries,
            partial(app.engine.subscriptions.change_visibility, account, queue, subscription),
        )


def _check_lease_only(data: VisibilityRequest) -> None:
    """A subscription's visibility change is a new lease only: the message is the queue's,
    read by every subscription, so none may change its body (and an entry without a lease
    would change nothing). Refused whole, as a malformed batch is: no entry is done."""
    for i, entry in enumerate(data.entries):
        if entry.body is not None:
            raise InvalidArgument(
                f"entries[{i}]: body cannot be changed through a subscription (the message "
                "is the queue's, read by every subscription)"
            )
        if entry.visibility_timeout_seconds is None:
            raise InvalidArgument(
                f"entries[{i}]: visibilityTimeoutSeconds is required on a subscription"
            )


SUBSCRIPTION_ROUTES: list[Any] = [SubscriptionV2Controller]
