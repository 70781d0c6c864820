"""Ownership of background work across servers (a queue's repair): one lease row each,
LWT + TTL. A lease is never released: its owner renews it while it works, and it expires
once the owner stops (deletion jobs need none: a job's delivery is its lease)."""

from __future__ import annotations

from cassieq.engine.context import EngineContext


class Leases:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx

    async def hold(self, name: str) -> bool:
        """Take, renew, or take over an expired lease; True while this instance owns it."""
        ctx = self._ctx
        held = await ctx.store.acquire_lease(
            name, ctx.instance_id, ctx.clock.now(), ctx.tuning.lease_ttl_ms
        )
        return held
