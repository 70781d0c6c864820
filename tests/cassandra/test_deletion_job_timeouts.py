"""A deletion job's compare-and-sets whose answers are lost are resolved, never assumed
(#40 finding 1: the jobs are messages of the engine's own queue now).

Each LWT of a job's life times out once, before it ran (not applied: sent again) or after it
ran (applied, the answer lost: read back at SERIAL as applied): the put of the job when the
queue is deleted (its monoton, its row), its take by a pass, its ack. Either way the job is
done and acked within the passes that follow, without waiting for a lease to run out: a
take or an ack assumed either way would leave it taken and unacked until then.
"""

from __future__ import annotations

import uuid

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.model import QueueOptions
from cassieq.store.cassandra import CassandraStore, LwtRetry
from tests.engine.jobs import own_jobs_queue, pending_jobs
from tests.lwt_faults import Mode, TimeoutInjectingStore

MODES: list[Mode] = ["before", "after"]
ON_DELETE = ["cas_monoton", "insert_messages"]  # the job's put
ON_PASS = ["cas_messages", "ack_messages"]  # its take and its ack
PASSES = 10


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("primitive", ON_DELETE + ON_PASS)
async def test_a_deletion_job_is_done_once_through_a_lost_lwt_answer(
    cassandra_store: CassandraStore, primitive: str, mode: Mode
) -> None:
    lossy = TimeoutInjectingStore.beside(cassandra_store, lwt_retry=LwtRetry(base_s=0.001))
    clock = FakeClock()
    engine = QueueEngine(lossy, clock, tuning=own_jobs_queue())
    account = f"jt-{uuid.uuid4().hex[:10]}"
    await engine.accounts.create(account)
    queue, _ = await engine.create_queue(account, "doomed", QueueOptions())
    await engine.put(account, "doomed", "x")

    if primitive in ON_DELETE:
        lossy.inject(primitive, mode, times=1)
    await engine.delete_queue(account, "doomed")
    clock.advance(engine.ctx.tuning.deletion_grace_ms / 1000)
    if primitive in ON_PASS:
        lossy.inject(primitive, mode, times=1)
    for _ in range(PASSES):
        await engine.deleter.run_once()
        if await cassandra_store.read_monoton(queue.id) == 0:
            break
    assert lossy.injected[primitive] == 1, f"no timeout was injected into {primitive}"
    lossy.stop()

    assert await cassandra_store.read_monoton(queue.id) == 0  # the job was done
    await engine.deleter.run_once()  # its ack, if the last pass took other jobs after it
    assert queue.id not in {job.queue for job in await pending_jobs(engine)}  # and acked
