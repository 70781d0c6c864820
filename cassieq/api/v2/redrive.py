"""v2 redrive: move a dead-letter queue's messages back, as a task with progress."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, get, post
from litestar.params import FromPath, JSONBody

from cassieq.api.dependencies import Engine
from cassieq.api.errors import errors_v2
from cassieq.api.security import account_before_request, authorize_for
from cassieq.api.v1.dto import Name
from cassieq.engine.life.redrive import MAX_PER_SECOND
from cassieq.model import AuthorizationLevel as L
from cassieq.model import RedriveTask


class RedriveRequest(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    # No "to": each message goes back to the queue it came from.
    EXAMPLE: ClassVar[dict[str, Any]] = {"maxPerSecond": 100}

    to: Name | None = None
    max_per_second: Annotated[int, msgspec.Meta(ge=1, le=MAX_PER_SECOND)] | None = None


class RedriveStarted(msgspec.Struct, frozen=True, rename="camel"):
    task_id: str


class RedriveStatus(msgspec.Struct, frozen=True, rename="camel"):
    status: str  # running, completed, failed, cancelled, interrupted (its server stopped)
    moved: int
    total: int
    failed: int  # messages left in the dead-letter queue: no queue to send them to
    to: str | None  # the queue given as "to"; null: each to the queue it came from

    @classmethod
    def of(cls, task: RedriveTask) -> RedriveStatus:
        return cls(task.status, task.moved, task.total, task.failed, task.target)


class RedriveController(Controller):
    path = "/api/v2/accounts/{account:str}/queues/{queue:str}/redrive"
    tags = ["queues"]
    before_request = staticmethod(account_before_request)

    @post(
        operation_id="startRedrive",
        opt={"level": L.PUT_MESSAGE},
        summary="Move this dead-letter queue's messages back: to `to`, else each to the queue "
        "it came from (else to the only queue naming this one as its dead-letter queue), at "
        "most maxPerSecond (100) a second, in the background of this server. A server that "
        "stops mid-task leaves its status 'running': start again to move the rest",
        status_code=202,
        responses=errors_v2(400, 401, 403, 404, 503),
    )
    async def start(
        self,
        request: Request[Any, Any, Any],
        engine: Engine,
        account: FromPath[str],
        queue: FromPath[str],
        data: JSONBody[RedriveRequest | None] = None,
    ) -> RedriveStarted:
        body = data or RedriveRequest()
        # The credentials must grant putting into where the messages go as well: the
        # target named, or (none named) each message's source queue, which only an
        # account-wide grant covers (#40: a `p` grant on the dead-letter queue alone moved
        # its messages into queues it had no grant for).
        await authorize_for(request, L.PUT_MESSAGE, body.to)
        task = await engine.start_redrive(account, queue, body.to, body.max_per_second)
        return RedriveStarted(task_id=task.id)

    @get(
        "/{task_id:str}",
        operation_id="getRedrive",
        opt={"level": L.GET_QUEUE_INFORMATION},
        summary="A redrive task's progress, from any server",
        responses=errors_v2(400, 401, 403, 404),
    )
    async def status(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str], task_id: FromPath[str]
    ) -> RedriveStatus:
        return RedriveStatus.of(await engine.redrive_status(account, queue, task_id))


REDRIVE_ROUTES: list[Any] = [RedriveController]
