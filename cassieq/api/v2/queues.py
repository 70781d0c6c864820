"""v2 queue routes: create/update/show/delete, statistics, peek (api-v2.md).

Thin: validate (msgspec bodies, unknown options refused), authorize (the route's level),
call the engine, shape the answer. Purge and redrive live beside these (their own module).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, delete, get, patch, put
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, JSONBody, QueryParameter

from cassieq.api.dependencies import Engine
from cassieq.api.errors import errors_v2
from cassieq.api.security import account_before_request, authorize_for
from cassieq.api.v2.dto_queues import (
    FIFO_ONLY,
    PeekBody,
    PeekedMessageBody,
    QueueBody,
    QueueOptionsBody,
    QueueOptionsPatch,
    StatisticsV2Body,
)
from cassieq.engine.errors import InvalidArgument, QueueExists
from cassieq.engine.life.peek import MAX_LIMIT as MAX_PEEK
from cassieq.model import PEEK_CURSOR_PATTERN, QueueOptions
from cassieq.model import AuthorizationLevel as L

CURSOR_PATTERN = PEEK_CURSOR_PATTERN


class QueueV2Controller(Controller):
    path = "/api/v2/accounts/{account:str}/queues/{queue:str}"
    tags = ["queues v2"]
    before_request = staticmethod(account_before_request)

    @put(
        operation_id="putQueueV2",
        opt={"level": L.CREATE_QUEUE},
        summary="Create a queue with these options (201); 200 when it exists with the same "
        "options, 409 when it exists with others; 422 for an unknown option, one out of its "
        "bounds, a deadLetterQueue that does not exist (or, for a FIFO queue, is not FIFO), "
        "or a FIFO-only option on a standard queue",
        status_code=201,
        responses={
            200: ResponseSpec(
                data_container=QueueBody,
                description="It already existed with the same options",
                generate_examples=False,
            ),
            **errors_v2(401, 403, 404, 409),
        },
    )
    async def put_queue(
        self,
        engine: Engine,
        account: FromPath[str],
        queue: FromPath[str],
        data: JSONBody[QueueOptionsBody],
    ) -> Response[QueueBody]:
        options = data.options(engine.default_partitions)
        if not options.fifo:
            _refuse_fifo_only(data.fifo_options_given())
        _check_throughput_limit(options)
        dlq = options.dlq_name
        if dlq is not None and await engine.find_queue(account, dlq, fresh=True) is None:
            raise InvalidArgument(f"deadLetterQueue {dlq!r} must name an existing queue")
        definition, created = await engine.create_queue(account, queue, options)
        if not created and definition.options != options:
            raise QueueExists(f"queue {queue!r} already exists with other options")
        return Response(QueueBody.of(definition), status_code=201 if created else 200)

    @patch(
        operation_id="updateQueueV2",
        opt={"level": L.CREATE_QUEUE},
        summary="Change some options of a queue; the definition. bucketSize cannot change "
        "(422), nor fifo, nor a FIFO queue's partitions (409). This server uses the new "
        "options at once, other servers within the queue cache time (about 2 s)",
        responses=errors_v2(401, 403, 404, 409),
    )
    async def update_queue(
        self,
        request: Request[Any, Any, Any],
        engine: Engine,
        account: FromPath[str],
        queue: FromPath[str],
        data: JSONBody[QueueOptionsPatch],
    ) -> QueueBody:
        changes = data.changes()
        current = await engine.queue(account, queue, fresh=True)
        if not changes.get("fifo", current.options.fifo):
            _refuse_fifo_only(fifo_only_changed(changes))
        _check_throughput_limit(msgspec.structs.replace(current.options, **changes))
        if drops_messages(current.options, changes):
            # A change that can end messages is a delete of them: the create level that
            # lets a client shape a queue does not cover it (#40: a `c` grant's PATCH of the
            # retention to 60 s expired a whole queue).
            await authorize_for(request, L.DELETE_QUEUE, queue)
        return QueueBody.of(await engine.update_queue(account, queue, changes))

    @get(
        operation_id="getQueueV2",
        opt={"level": L.GET_QUEUE_INFORMATION},
        summary="Show a queue with every option",
        responses=errors_v2(401, 403, 404),
    )
    async def get_queue(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str]
    ) -> QueueBody:
        return QueueBody.of(await engine.queue(account, queue, fresh=True))

    @delete(
        operation_id="deleteQueueV2",
        opt={"level": L.DELETE_QUEUE},
        summary="Delete a queue (gone at once; its rows are removed in the background)",
        status_code=204,
        responses=errors_v2(401, 403, 404),
    )
    async def delete_queue(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str]
    ) -> None:
        await engine.delete_queue(account, queue)

    @get(
        "/statistics",
        operation_id="getStatisticsV2",
        opt={"level": L.GET_QUEUE_INFORMATION},
        summary="Queue statistics: size, visible, inFlight, delayed, published, delivered, "
        "acked, deadLettered, expired, oldestMessageAgeSeconds, deadLetterPending (past "
        "maxDeliveryCount, kept while the dead-letter queue is missing); with detail=true "
        "also the pipeline's latest snapshot, once one exists",
        responses=errors_v2(401, 403, 404),
    )
    async def statistics(
        self,
        engine: Engine,
        account: FromPath[str],
        queue: FromPath[str],
        detail: Annotated[
            bool,
            QueryParameter(
                description="Add the latest snapshot of `cassieq pipeline stats` (delivery-count "
                "histogram, ack latency, oldest unacked age) as `detail`, when one exists"
            ),
        ] = False,
    ) -> StatisticsV2Body:
        if not detail:
            return StatisticsV2Body.of(await engine.statistics(account, queue), None)
        # Independent reads: side by side.
        stats, snapshot = await asyncio.gather(
            engine.statistics(account, queue), engine.statistics_snapshot(account, queue)
        )
        return StatisticsV2Body.of(stats, snapshot)

    @get(
        "/messages/peek",
        operation_id="peekMessages",
        # Peek shows bodies: the level that reads messages, not the one that reads a
        # queue's information (#40: a `g` grant read bodies here).
        opt={"level": L.READ_MESSAGE},
        summary="Messages still in the queue (not acked, expired or dead-lettered), oldest "
        "first, without leasing or changing them; `next` is the cursor of the next page",
        responses=errors_v2(401, 403, 404),
    )
    async def peek(
        self,
        engine: Engine,
        account: FromPath[str],
        queue: FromPath[str],
        limit: Annotated[int, QueryParameter(ge=1, le=MAX_PEEK)] = 10,
        after: Annotated[
            str | None,
            QueryParameter(
                pattern=CURSOR_PATTERN,
                description="The `next` of the previous page (opaque); absent: from the start",
            ),
        ] = None,
    ) -> PeekBody:
        messages, following = await engine.peek(account, queue, limit, after)
        return PeekBody(messages=[PeekedMessageBody.of(m) for m in messages], next=following)


QUEUE_ROUTES: list[Any] = [QueueV2Controller]


def fifo_only_changed(changes: dict[str, object]) -> list[str]:
    """The FIFO-only options that ``changes`` sets away from their defaults (wire names)."""
    defaults = QueueOptions()
    return [
        wire
        for wire, name in zip(FIFO_ONLY, _FIFO_FIELDS, strict=True)
        if name in changes and changes[name] != getattr(defaults, name)
    ]


_FIFO_FIELDS = ("content_based_deduplication", "deduplication_scope", "fifo_throughput_limit")


def _refuse_fifo_only(names: list[str]) -> None:
    # SQS refuses them on a standard queue too: silently kept, they would promise nothing.
    if names:
        raise InvalidArgument(f"{', '.join(names)}: only for a FIFO queue (fifo: true)")


def _check_throughput_limit(options: QueueOptions) -> None:
    # SQS's rule (its endpoint enforces it on the same queues): a per-group throughput
    # limit goes with deduplication per group.
    if (
        options.fifo_throughput_limit == "perMessageGroupId"
        and options.deduplication_scope != "messageGroup"
    ):
        raise InvalidArgument(
            "fifoThroughputLimit perMessageGroupId needs deduplicationScope messageGroup"
        )


def drops_messages(options: QueueOptions, changes: dict[str, object]) -> bool:
    """Whether changing ``options`` by ``changes`` can end stored messages: a shorter
    retention (they expire), fewer deliveries before dead-lettering, or another (or no)
    dead-letter queue for the messages past their deliveries."""

    def lowered(name: str) -> bool:
        new = changes.get(name)
        return isinstance(new, int) and new < getattr(options, name)

    moved = "dlq_name" in changes and changes["dlq_name"] != options.dlq_name
    return lowered("message_retention_seconds") or lowered("max_delivery_count") or moved
