"""The background work each server runs: repair of every queue, and deletion jobs.

Every server runs it; a lease makes each queue's repair, and its delivery each deletion
job, the work of one server at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from dataclasses import dataclass

from cassieq.engine.engine import QueueEngine
from cassieq.model import QueueDefinition

# Rows per read of an account's queue directory, and reads per account per tick. A deleted
# name keeps its row (its version is never reused), so a directory grows with every name
# its tenant ever used: each read is bounded, and a directory longer than a tick's pages is
# walked over several ticks, where only that account's repairs come less often.
DIRECTORY_PAGE = 200
DIRECTORY_PAGES_PER_TICK = 10
# Repairs of one account per tick, taken in turns with the other accounts' (#40 finding 8:
# one tenant's 1,000 queues stretched every server's pass from 1.3 to 8.6 s, and every
# other account's repair waited for the whole of it). An account with more due queues
# has the longest-waiting ones repaired first and the rest in the next ticks.
REPAIRS_PER_ACCOUNT_PER_TICK = 50


@dataclass
class LoopHealth:
    """What /ready and /metrics say about the loop: a loop that stopped ticking (hung on a
    node, or dead) leaves its last success behind on the engine's clock."""

    # False: this app runs no background loop (tests, tools): nothing to be alive.
    enabled: bool = True
    running: bool = False
    ticks: int = 0
    failures: int = 0
    # Engine clock (ms) at the end of the last pass that completed; None: none yet.
    last_success_ms: int | None = None


class BackgroundWorker:
    def __init__(
        self,
        engine: QueueEngine,
        *,
        tick_seconds: float = 1.0,
        repairs_per_account: int = REPAIRS_PER_ACCOUNT_PER_TICK,
    ) -> None:
        self._engine = engine
        self._tick_seconds = tick_seconds
        self._repairs_per_account = repairs_per_account
        self._turn = 0  # which account goes first this tick: each in turn
        self._next_repair: dict[tuple[str, str], int] = {}
        # account -> the queue name after which its directory walk goes on next tick
        self._walks: dict[str, str] = {}
        self._task: asyncio.Task[None] | None = None
        self.health = LoopHealth()

    async def tick(self) -> None:
        """One pass: repair each queue whose poll interval is up, run deletion jobs.

        Every read of the pass is bounded whatever tenants do: accounts and each account's
        directory in pages, the deletion jobs as a queue's receive (docs/design/
        background-reads.md)."""
        engine, now = self._engine, self._engine.ctx.clock.now()
        walks: dict[str, str] = {}
        due: dict[str, list[QueueDefinition]] = {}
        for account in await engine.account_names():
            rows, walks[account] = await self._directory_slice(account)
            for queue in rows:
                key = (queue.account, queue.name)
                if queue.status != "active":
                    self._next_repair.pop(key, None)  # a deleted name: nothing to repair
                elif self._next_repair.get(key, 0) <= now:
                    due.setdefault(account, []).append(queue)
        self._walks = {account: after for account, after in walks.items() if after}
        for queue in self._in_turns(due):
            key = (queue.account, queue.name)
            self._next_repair[key] = now + queue.options.repair_poll_seconds * 1000
            await self._repair(queue)
        self._turn += 1
        await engine.deleter.run_once()

    def _in_turns(self, due: dict[str, list[QueueDefinition]]) -> list[QueueDefinition]:
        """This tick's repairs: up to ``repairs_per_account`` of each account, the longest
        waiting first (never repaired: first of all), one of each account in turn; the
        account that goes first moves on each tick."""
        accounts = sorted(due)
        if accounts:
            first = self._turn % len(accounts)
            accounts = accounts[first:] + accounts[:first]
        waited = self._next_repair
        picks = [
            sorted(due[a], key=lambda q: waited.get((q.account, q.name), 0))[
                : self._repairs_per_account
            ]
            for a in accounts
        ]
        return [q for turn in itertools.zip_longest(*picks) for q in turn if q is not None]

    async def _repair(self, queue: QueueDefinition) -> None:
        """Repair one queue; a failure is that queue's, logged, and the pass goes on: one
        tenant's queue whose repair keeps failing must not fail every server's pass (and
        with it /ready everywhere) nor hold back the other queues' repairs."""
        for view in queue.partition_views():  # each partition has its own repair (issue 35)
            try:
                await self._engine.repairer.run_once(view)
            except Exception:
                self._engine.ctx.log.exception("repair_failed", queue=str(view.id))

    async def _directory_slice(self, account: str) -> tuple[list[QueueDefinition], str]:
        """This tick's rows of the account's directory: up to DIRECTORY_PAGES_PER_TICK pages
        from where the last tick stopped; and where the next one starts ('': the first)."""
        queues, after = self._engine.queues, self._walks.get(account) or None
        rows: list[QueueDefinition] = []
        for _ in range(DIRECTORY_PAGES_PER_TICK):
            page = await queues.list_page(account, after, DIRECTORY_PAGE)
            rows += page
            if len(page) < DIRECTORY_PAGE:
                return rows, ""  # the end: from the first row next tick
            after = page[-1].name
        return rows, after or ""

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())
        self.health.running = True

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self.health.running = False

    async def _run(self) -> None:
        log = self._engine.ctx.log
        while True:
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception:
                # One bad pass (a node down, a timeout) must not end background work.
                self.health.failures += 1
                log.exception("background_tick_failed")
            else:
                self.health.ticks += 1
                self.health.last_success_ms = self._engine.ctx.clock.now()
            await asyncio.sleep(self._tick_seconds)
