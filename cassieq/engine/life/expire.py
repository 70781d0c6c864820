"""Retention: retiring a message that outlived its queue's messageRetentionSeconds.

Whoever meets such a message where it would deliver it (the reader, the invisibility
side, a batch receive) or move it (repair) retires it instead: one compare-and-set on
the version it read, like an ack, that marks it expired. From then on it is acked as far
as the pointers, repair and bucket deletion go, so its bucket is finished and dropped as
when everything is acked; statistics count it as expired (the invisibility summary keeps
the count after the bucket is gone). Deciding it is ``MessageRow.past_retention``.
"""

from __future__ import annotations

from cassieq.engine.context import EngineContext
from cassieq.model import MessageRow, QueueDefinition


def expiring(queue: QueueDefinition, row: MessageRow, now: int) -> bool:
    return row.past_retention(now, queue.options.retention_ms)


async def expire(
    ctx: EngineContext,
    queue: QueueDefinition,
    bucket: int,
    row: MessageRow,
    *,
    unsealed: bool = False,
) -> bool:
    """Retire ``row`` (at the version read) as expired; whether this call did it."""
    done = await ctx.store.cas_message(
        queue.id, bucket, row.version, row.retired(ctx.clock.now(), expired=True), unsealed=unsealed
    )
    if done:
        ctx.log.info(
            "message_expired", queue=str(queue.id), monoton=row.monoton, version=row.version
        )
    return done
