"""Ownership of background work across servers: one lease row per job, LWT + TTL."""

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

    async def release(self, name: str) -> None:
        await self._ctx.store.release_lease(name, self._ctx.instance_id)
