"""The deletion jobs still in the engine's jobs queue (engine/upkeep/deletion_jobs.py), for tests:
a peek, page by page, which changes nothing."""

from __future__ import annotations

from cassieq.engine import QueueEngine
from cassieq.engine.upkeep.deletion_jobs import JOBS_QUEUE, decode_job
from cassieq.model import DeletionJob

MAX_PAGES = 1_000


async def pending_jobs(engine: QueueEngine) -> list[DeletionJob]:
    """Every job put and not done yet (other tests' too, on the shared keyspace)."""
    jobs: list[DeletionJob] = []
    after: int | None = None
    for _ in range(MAX_PAGES):
        page, after = await engine.peeker.peek(JOBS_QUEUE, 100, after)
        jobs += [decode_job(m.body) for m in page]
        if after is None:
            return jobs
    raise AssertionError(f"more than {MAX_PAGES} pages of jobs")
