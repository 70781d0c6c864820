"""Queue routes of v1 (list, create, show, delete, size); v2's are in api/v2/queues.py."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, Response, delete, get, post
from litestar.params import FromPath, JSONBody, QueryParameter

from cassieq.api.dependencies import Engine
from cassieq.api.errors import errors
from cassieq.api.http.empty import EmptyResponse, empty
from cassieq.api.security import account_before_request
from cassieq.api.v1.dto import (
    QueueCreateOptions,
    QueueDefinitionBody,
    StatisticsSizeBody,
)
from cassieq.model import AuthorizationLevel as L

AUTH_ERRORS = (400, 401, 403)


class QueueController(Controller):
    path = "/api/v1/accounts/{account:str}/queues"
    tags = ["queues"]
    before_request = staticmethod(account_before_request)

    @get(
        operation_id="listQueues",
        opt={"level": L.GET_QUEUE_INFORMATION},
        summary="List the account's queues",
        responses=errors(*AUTH_ERRORS),
    )
    async def list_queues(
        self, engine: Engine, account: FromPath[str]
    ) -> list[QueueDefinitionBody]:
        return [QueueDefinitionBody.of(q) for q in await engine.list_queues(account)]

    @post(
        operation_id="createQueue",
        opt={"level": L.CREATE_QUEUE},
        summary="Create a queue (201), or find it existing (200; 409 with errorIfExists=true); "
        "409 when the account has CASSIEQ_MAX_QUEUES_PER_ACCOUNT queues already; 422 when "
        "dlqName names no existing queue",
        responses={
            200: empty("It already existed (empty body)"),
            201: empty("Created (empty body)"),
            **errors(*AUTH_ERRORS, 404, 409, 413),
        },
        status_code=201,
        media_type="text/plain",
    )
    async def create_queue(
        self,
        engine: Engine,
        account: FromPath[str],
        data: JSONBody[QueueCreateOptions],
        error_if_exists: Annotated[bool, QueryParameter(name="errorIfExists")] = False,
    ) -> Response[bytes]:
        # CassieQ ignores dlqName on create (fixed here): the engine refuses a dead-letter
        # queue that does not exist (422), and an account's queue beyond its limit (409).
        # v1 has no word for partitions: the server's default (issue 35).
        options = msgspec.structs.replace(data.options(), partitions=engine.default_partitions)
        _, created = await engine.create_queue(
            account, data.queue_name, options, error_if_exists=error_if_exists
        )
        # CassieQ answers an empty body: its clients read it as "true" (GET shows the queue).
        return EmptyResponse(201 if created else 200)

    @get(
        "/{queue:str}",
        operation_id="getQueue",
        opt={"level": L.GET_QUEUE_INFORMATION},
        summary="Show a queue",
        responses=errors(*AUTH_ERRORS, 404),
    )
    async def get_queue(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str]
    ) -> QueueDefinitionBody:
        return QueueDefinitionBody.of(await engine.queue(account, queue, fresh=True))

    @delete(
        "/{queue:str}",
        operation_id="deleteQueue",
        opt={"level": L.DELETE_QUEUE},
        summary="Delete a queue (its rows are removed in the background)",
        status_code=200,
        media_type="text/plain",
        responses={200: empty("Deleted (empty body)"), **errors(*AUTH_ERRORS, 404)},
    )
    async def delete_queue(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str]
    ) -> Response[bytes]:
        await engine.delete_queue(account, queue)
        return EmptyResponse(200)

    @get(
        "/{queue:str}/statistics",
        operation_id="getStatistics",
        opt={"level": L.GET_QUEUE_INFORMATION},
        summary='Queue size: exactly {"size": n}, as CassieQ answers (more at /api/v2)',
        responses=errors(*AUTH_ERRORS, 404),
    )
    async def statistics(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str]
    ) -> StatisticsSizeBody:
        return StatisticsSizeBody(size=(await engine.statistics(account, queue)).size)
