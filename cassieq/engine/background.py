"""The background work each server runs: repair of every queue, and deletion jobs.

Every server runs it; the leases make each queue's repair (and each deletion job)
the work of one server at a time.
"""

from __future__ import annotations

import asyncio
import contextlib

from cassieq.engine.engine import QueueEngine


class BackgroundWorker:
    def __init__(self, engine: QueueEngine, *, tick_seconds: float = 1.0) -> None:
        self._engine = engine
        self._tick_seconds = tick_seconds
        self._next_repair: dict[tuple[str, str], int] = {}
        self._task: asyncio.Task[None] | None = None

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

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        log = self._engine.ctx.log
        while True:
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception:
                # One bad pass (a node down, a timeout) must not end background work.
                log.exception("background_tick_failed")
            await asyncio.sleep(self._tick_seconds)
