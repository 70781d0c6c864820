from __future__ import annotations

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.worker import BackgroundWorker
from tests.engine.conftest import make_queue
from tests.engine.test_holes_and_repair import drain, sealed_bucket_with_late_write


async def test_a_tick_repairs_due_queues_and_runs_deletion_jobs(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await sealed_bucket_with_late_write(engine, account, clock, finalize_seconds=5)

    worker = BackgroundWorker(engine)
    clock.advance(5)
    await worker.tick()
    assert await drain(engine, account, "q") == ["late"]

    await make_queue(engine, account, "doomed")
    await engine.put(account, "doomed", "x")
    doomed = await engine.queues.delete(account, "doomed")
    clock.advance(engine.ctx.tuning.deletion_grace_ms / 1000)
    await worker.tick()
    assert await engine.ctx.store.read_monoton(doomed.id) == 0
