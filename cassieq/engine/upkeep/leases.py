"""Ownership of background work across servers (a queue's repair): one lease row each,
LWT + TTL. A lease is never released: its owner renews it while it works, and it expires
once the owner stops (deletion jobs need none: a job's delivery is its lease).

A renewal is a read at SERIAL and a compare-and-set: two Paxos rounds. The owner renews
only once less than half the lease is left (every third repair of a queue at the
defaults, 5 s polls and 30 s leases) and trusts the expiry it wrote until then: nobody
else takes a lease before its expiry on their clock, so this holds while the servers'
clocks agree within half a lease (15 s), where renewing at every repair allowed 25 s.
An idle server's repair passes over the test keyspace's 1,374 queues took a lease 42-47
times a second, every one of them two Paxos rounds on the coordinator.
"""

from __future__ import annotations

from cassieq.engine.context import EngineContext

# Leases this server remembers holding; past it, those due for renewal are forgotten
# (a deleted queue's lease is never asked for again).
HELD_ENTRIES = 100_000


class Leases:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx
        # name -> engine-clock ms after which the lease is renewed before it is trusted
        self._renew_at: dict[str, int] = {}

    async def hold(self, name: str) -> bool:
        """Take, renew, or take over an expired lease; True while this instance owns it."""
        ctx = self._ctx
        now, ttl = ctx.clock.now(), ctx.tuning.lease_ttl_ms
        if now < self._renew_at.get(name, 0):
            return True  # taken or renewed by us less than half a lease ago
        held = await ctx.store.acquire_lease(name, ctx.instance_id, now, ttl)
        if held:
            if len(self._renew_at) >= HELD_ENTRIES:
                self._renew_at = {n: t for n, t in self._renew_at.items() if t > now}
            # Expires at now + ttl (as written): trusted for the first half of that.
            self._renew_at[name] = now + ttl // 2
        else:
            self._renew_at.pop(name, None)
        return held
