"""Deletion jobs in tests: a jobs queue of the test's own, and the jobs still in it (a peek,
page by page, which changes nothing)."""

from __future__ import annotations

import uuid

from cassieq.engine import QueueEngine, Tuning
from cassieq.engine.upkeep.deletion_jobs import decode_job
from cassieq.model import DeletionJob

MAX_PAGES = 1_000


def own_jobs_queue(**knobs: object) -> Tuning:
    """Tuning (with ``knobs``) whose deletion jobs go to a jobs queue of this test's own.

    The servers of the HTTP tests run on the wall clock, on the same keyspace, beside tests
    on a FakeClock (weeks ahead): on one jobs queue, a wall-clock server sealing a bucket of
    a fake-clock test's jobs judges them written after the seal (repair's, after a wait
    the test never sees), and the jobs of each are not visible to the other for weeks."""
    name = f"deletion-jobs-test-{uuid.uuid4().hex[:12]}"
    return Tuning(deletion_jobs_queue=name, **knobs)  # type: ignore[arg-type]


async def pending_jobs(engine: QueueEngine) -> list[DeletionJob]:
    """Every job put into ``engine``'s jobs queue and not done yet."""
    jobs: list[DeletionJob] = []
    after: int | None = None
    for _ in range(MAX_PAGES):
        page, after = await engine.peeker.peek(engine.deletion_log.queue, 100, after)
        jobs += [decode_job(m.body) for m in page]
        if after is None:
            return jobs
    raise AssertionError(f"more than {MAX_PAGES} pages of jobs")
