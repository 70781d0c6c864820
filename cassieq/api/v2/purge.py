"""v2 purge: every message put before the call is gone; later puts stay."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Controller, post
from litestar.params import FromPath

from cassieq.api.dependencies import Engine
from cassieq.api.errors import errors_v2
from cassieq.api.security import account_before_request
from cassieq.model import AuthorizationLevel as L


class PurgedBody(msgspec.Struct, frozen=True):
    purged: int  # messages this call retired


class PurgeController(Controller):
    path = "/api/v2/accounts/{account:str}/queues/{queue:str}/purge"
    tags = ["queues"]
    before_request = staticmethod(account_before_request)

    @post(
        operation_id="purgeQueue",
        opt={"level": L.DELETE_QUEUE},
        summary="Retire every message put before the call (delivered to no one afterwards, on "
        "any server; receipts of those in flight become stale); later puts stay. 503: some "
        "could not be settled now, and calling again is safe",
        status_code=202,
        responses=errors_v2(400, 401, 403, 404, 503),
    )
    async def purge(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str]
    ) -> PurgedBody:
        return PurgedBody(purged=await engine.purge(account, queue))


PURGE_ROUTES: list[Any] = [PurgeController]
