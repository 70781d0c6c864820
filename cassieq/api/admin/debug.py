"""Operator routes: read-only inspection of a queue's buckets, monoton and pointers."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, get
from litestar.params import FromPath, PathParameter

from cassieq.api.admin.dto import MessageDebugBody, MonotonBody, PointersBody, TombstoneBody
from cassieq.api.dependencies import Engine
from cassieq.api.errors import errors
from cassieq.api.security import admin_guard
from cassieq.api.v1.dto import QueueDefinitionBody
from cassieq.engine import QueueEngine
from cassieq.engine.errors import NotFound
from cassieq.model import MessageRow, QueueDefinition

BASE = "/accounts/{account:str}/queues/{queue:str}"
# Buckets and monotons are Cassandra bigints, never negative: beyond, 400 naming the
# parameter (the driver could not encode a larger one: it was a 500).
Position = Annotated[int, PathParameter(ge=0, le=2**63 - 1)]
ERRORS = errors(401, 403, 404)


class DebugController(Controller):
    path = "/api/v1/debug"
    tags = ["debug (operator)"]
    guards = [admin_guard]

    @get(
        "/accounts/{account:str}/queues",
        operation_id="debugListQueues",
        summary="Queues of an account",
        responses=ERRORS,
    )
    async def queues(self, engine: Engine, account: FromPath[str]) -> list[QueueDefinitionBody]:
        await engine.account(account)
        return [QueueDefinitionBody.of(q) for q in await engine.list_queues(account)]

    @get(
        f"{BASE}/buckets/current/messages",
        operation_id="debugCurrentBucket",
        summary="Messages of the reader's bucket",
        responses=ERRORS,
    )
    async def current_bucket(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str]
    ) -> list[MessageDebugBody]:
        q = await _queue(engine, account, queue)
        pointers = await engine.inspect_pointers(q)
        snap = await engine.inspect_bucket(q, pointers.reader)
        return [_message(m) for m in snap.messages]

    @get(
        f"{BASE}/buckets/{{bucket:int}}/messages",
        operation_id="debugBucket",
        summary="Messages of one bucket",
        responses=ERRORS,
    )
    async def bucket(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str], bucket: Position
    ) -> list[MessageDebugBody]:
        q = await _queue(engine, account, queue)
        return [_message(m) for m in (await engine.inspect_bucket(q, bucket)).messages]

    @get(
        f"{BASE}/buckets/{{bucket:int}}/tombstone",
        operation_id="debugTombstone",
        summary="When the bucket was sealed (and finalized)",
        responses=ERRORS,
    )
    async def tombstone(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str], bucket: Position
    ) -> TombstoneBody:
        q = await _queue(engine, account, queue)
        snap = await engine.inspect_bucket(q, bucket)
        if snap.sealed_at is None:
            raise NotFound(f"bucket {bucket} is not sealed")
        return TombstoneBody(
            bucket=bucket, sealed_at=snap.sealed_at, finalized_at=snap.finalized_at
        )

    @get(
        f"{BASE}/messages/{{monoton:int}}",
        operation_id="debugMessage",
        summary="One raw message",
        responses=ERRORS,
    )
    async def message(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str], monoton: Position
    ) -> MessageDebugBody:
        q = await _queue(engine, account, queue)
        row = await engine.inspect_message(q, monoton)
        if row is None:
            raise NotFound(f"no message at monoton {monoton}")
        return _message(row)

    @get(
        f"{BASE}/monotons/current",
        operation_id="debugMonoton",
        summary="The next monoton to hand out",
        responses=ERRORS,
    )
    async def monoton(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str]
    ) -> MonotonBody:
        q = await _queue(engine, account, queue)
        return MonotonBody(value=(await engine.inspect_pointers(q)).monoton)

    @get(
        f"{BASE}/pointers",
        operation_id="debugPointers",
        summary="Reader, repair and invisibility pointers",
        responses=ERRORS,
    )
    async def pointers(
        self, engine: Engine, account: FromPath[str], queue: FromPath[str]
    ) -> PointersBody:
        q = await _queue(engine, account, queue)
        p = await engine.inspect_pointers(q)
        invisibility = p.invisibility
        return PointersBody(
            reader=p.reader,
            repair=p.repair,
            invisibility=invisibility.bucket,
            stragglers={str(b): due for b, due in sorted(invisibility.stragglers.items())},
            invisibility_lag=p.reader - invisibility.bucket,
            repair_lag=p.reader - p.repair,
        )


async def _queue(engine: QueueEngine, account: str, queue: str) -> QueueDefinition:
    return await engine.queue(account, queue, fresh=True)


def _message(m: MessageRow) -> MessageDebugBody:
    return MessageDebugBody(
        monoton=m.monoton,
        message=m.message,
        version=m.version,
        delivery_count=m.delivery_count,
        acked=m.acked,
        dead_lettered=m.dead_lettered,
        republished_to=m.republished_to,
        next_visible_on=m.next_visible_on,
        tag=m.tag,
        created_at=m.created_at,
        updated_at=m.updated_at,
    )
