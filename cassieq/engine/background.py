"""The background work each server runs: repair of every queue, and deletion jobs.

Every server runs it; the leases make each queue's repair (and each deletion job)
the work of one server at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from cassieq.engine.engine import QueueEngine


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
    def __init__(self, engine: QueueEngine, *, tick_seconds: float = 1.0) -> None:
        self._engine = engine
        self._tick_seconds = tick_seconds
        self._next_repair: dict[tuple[str, str], int] = {}
        self._task: asyncio.Task[None] | None = None
        self.health = LoopHealth()

    async def tick(self) -> None:
        """One pass: repair each queue whose poll interval is up, run deletion jobs."""
        engine, now = self._engine, self._engine.ctx.clock.now()
        for account in await engine.accounts.list():
            for queue in await engine.queues.list(account.name):
                key = (queue.account, queue.name)
                if self._next_repair.get(key, 0) > now:
                    continue
                self._next_repair[key] = now + queue.options.repair_poll_seconds * 1000
                await engine.repairer.run_once(queue)
        await engine.deleter.run_once()

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
