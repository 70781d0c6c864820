"""Put: take a monoton, write the message into its bucket."""

from __future__ import annotations

from cassieq.engine.context import EngineContext, new_token
from cassieq.engine.errors import Contention, InvalidArgument
from cassieq.engine.monotons import Monotons
from cassieq.model import MessageRow, QueueDefinition

MAX_PUT_ATTEMPTS = 8


class Publisher:
    def __init__(self, ctx: EngineContext, monotons: Monotons) -> None:
        self._ctx = ctx
        self._monotons = monotons

    async def put(
        self,
        queue: QueueDefinition,
        message: str,
        initial_invisibility_ms: int = 0,
        *,
        delivery_count: int = 0,
    ) -> int:
        """Store a message; return its monoton. ``delivery_count`` is kept by repair moves."""
        if initial_invisibility_ms < 0:
            raise InvalidArgument("initial invisibility must be >= 0")
        ctx = self._ctx
        for _ in range(MAX_PUT_ATTEMPTS):
            monoton = await self._monotons.take(queue.id)
            bucket = queue.bucket_of(monoton)
            now = ctx.clock.now()
            row = MessageRow(
                monoton=monoton,
                message=message,
                version=1,
                delivery_count=delivery_count,
                acked=False,
                next_visible_on=now + initial_invisibility_ms,
                tag=new_token(),
                created_at=now,
                updated_at=now,
                change=new_token(),
            )
            if await ctx.store.insert_messages(queue.id, bucket, [row], now):
                return monoton
            # The bucket was finalized before this write landed (a very slow writer):
            # nothing was written, the monoton is a hole, take a fresh one.
            ctx.log.warning("put_into_finalized_bucket", queue=str(queue.id), monoton=monoton)
        raise Contention(f"could not write a message into {queue.id}")
