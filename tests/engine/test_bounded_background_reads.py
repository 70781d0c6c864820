"""Background passes read a bounded number of rows at a time, whatever tenants do (#40
finding 1), on both stores.

The size of a read is what one call of the store answers: the rows of a listing, the
messages of a bucket. Before, a pass listed every deletion job in one read (a row, then a
tombstone, per queue ever deleted) and every queue row of each account in one read (a row
per queue name ever used). What each read costs Cassandra itself (cells, tombstones) is
traced in tests/cassandra/test_deletion_tombstones.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from cassieq.engine import FakeClock, QueueEngine, Tuning
from cassieq.engine import worker as background_module
from cassieq.engine.upkeep.deletion_jobs import JOBS_QUEUE
from cassieq.engine.worker import BackgroundWorker
from cassieq.model import (
    BucketState,
    DeletionJob,
    QueueDefinition,
    QueueId,
    QueueOptions,
    name_problem,
)
from cassieq.store.base import Store
from tests.engine.conftest import make_queue
from tests.engine.faults import FaultyStore
from tests.engine.jobs import pending_jobs
from tests.engine.test_holes_and_repair import drain, sealed_bucket_with_late_write

# The most rows one read of a pass may answer: a page of a directory (DIRECTORY_PAGE).
BOUND = 200
PASSES = 40  # bounded loops: a pass that never finishes the work fails the test


class SizedReads:
    """The store, keeping the largest answer of each read primitive (read_*, list_*)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.largest: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if not name.startswith(("read_", "list_")):
            return target

        async def read(*args: Any, **kwargs: Any) -> Any:
            answer = await target(*args, **kwargs)
            if isinstance(answer, BucketState):
                size = len(answer.messages)
            else:
                size = len(answer) if isinstance(answer, list) else 1
            self.largest[name] = max(self.largest.get(name, 0), size)
            return answer

        return read


async def churn(engine: QueueEngine, account: str, names: list[str], *, put: bool) -> None:
    """Create and delete each queue (with a message in it, if ``put``), 16 at a time."""
    gate = asyncio.Semaphore(16)

    async def one(name: str) -> None:
        async with gate:
            await make_queue(engine, account, name)
            if put:
                await engine.put(account, name, "x")
            await engine.queues.delete(account, name)

    await asyncio.gather(*(one(name) for name in names))


async def run_jobs(engine: QueueEngine, account: str) -> None:
    """Deletion passes until one finishes nothing and none of ``account``'s jobs is left.

    A pass that finishes nothing is no proof that the jobs are done (one failed on purpose
    stays leased), so they are looked for."""
    for _ in range(PASSES):
        finished = await engine.deleter.run_once()
        mine = [j for j in await pending_jobs(engine) if j.queue.account == account]
        if finished == 0 and not mine:
            return
    raise AssertionError(f"jobs still left after {PASSES} passes")


async def test_deletion_passes_read_jobs_a_bounded_number_at_a_time(
    store: Store, clock: FakeClock, engine: QueueEngine, account: str
) -> None:
    names = [f"q{i}" for i in range(300)]
    await churn(engine, account, names[:30], put=True)
    await churn(engine, account, names[30:], put=False)
    clock.advance(engine.ctx.tuning.deletion_grace_ms / 1000)

    sized = SizedReads(store)
    server = QueueEngine(sized, clock, tuning=engine.ctx.tuning, instance_id="passes")
    await run_jobs(server, account)

    for name in names[:30]:  # each job was done: the old versions' rows are gone
        assert await store.read_monoton(QueueId(account, name, 1)) == 0
    # The accounts are the operator's (tests/cassandra pages them): not a tenant's doing.
    largest = {k: v for k, v in sized.largest.items() if k != "list_accounts"}
    assert max(largest.values()) <= BOUND, largest


async def test_a_pass_walks_an_account_directory_a_page_at_a_time(
    store: Store,
    clock: FakeClock,
    engine: QueueEngine,
    account: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Small pages, so that a directory of 50 rows takes three ticks.
    monkeypatch.setattr(background_module, "DIRECTORY_PAGE", 10, raising=False)
    monkeypatch.setattr(background_module, "DIRECTORY_PAGES_PER_TICK", 2, raising=False)
    await churn(engine, account, [f"gone{i:02}" for i in range(45)], put=False)
    active = ["a", "gone05x", "gone30x", "m", "z"]  # spread among the deleted names
    for name in active:
        await make_queue(engine, account, name)

    sized = SizedReads(store)
    server = QueueEngine(sized, clock, tuning=engine.ctx.tuning, instance_id="passes")
    repaired: list[str] = []
    run_once = server.repairer.run_once

    async def noted(queue: QueueDefinition) -> int | None:
        if queue.account == account:
            repaired.append(queue.name)
        return await run_once(queue)

    server.repairer.run_once = noted  # type: ignore[method-assign]
    worker = BackgroundWorker(server)
    for _ in range(3):
        await worker.tick()
    assert sorted(repaired) == active  # each once: every row seen, none twice
    walked = max(sized.largest.get("list_queues", 0), sized.largest.get("list_queues_page", 0))
    assert walked <= 10, sized.largest


async def test_a_failing_job_leaves_the_pass_alive_and_is_done_after_its_lease(
    store: Store, clock: FakeClock, tuning: Tuning, account: str
) -> None:
    faulty = FaultyStore(store)
    engine = QueueEngine(faulty, clock, tuning=tuning)
    other = QueueEngine(store, clock, tuning=tuning, instance_id="other")
    queue = await make_queue(engine, account, "doomed")
    await engine.put(account, "doomed", "x")
    await engine.queues.delete(account, "doomed")
    clock.advance(engine.ctx.tuning.deletion_grace_ms / 1000)

    faulty.fail_once("delete_queue_state", when=lambda qid, *_: qid == queue.id)
    await engine.deleter.run_once()  # the job fails; the pass does not
    assert not faulty.armed("delete_queue_state")
    assert await store.read_monoton(queue.id) == 1
    await other.deleter.run_once()  # the job is still the failed server's (its lease)
    assert await store.read_monoton(queue.id) == 1
    clock.advance(10 * 60)  # past the lease of a job (5 minutes): anyone takes it again
    await run_jobs(other, account)
    assert await store.read_monoton(queue.id) == 0


async def test_a_queue_whose_repair_fails_fails_neither_the_pass_nor_the_other_repairs(
    store: Store, clock: FakeClock, tuning: Tuning, account: str
) -> None:
    faulty = FaultyStore(store)
    engine = QueueEngine(faulty, clock, tuning=tuning)
    broken = await make_queue(engine, account, "broken")  # listed before "q"
    await sealed_bucket_with_late_write(engine, account, clock, finalize_seconds=5)
    faulty.fail_once("read_pointer", when=lambda qid, *_: qid == broken.id)
    clock.advance(5)
    await BackgroundWorker(engine).tick()
    assert not faulty.armed("read_pointer")  # the broken queue's repair failed...
    assert await drain(engine, account, "q") == ["late"]  # ...and q's was done all the same


async def test_jobs_left_in_the_old_table_are_moved_to_the_jobs_queue_and_done(
    store: Store, clock: FakeClock, engine: QueueEngine, account: str
) -> None:
    # What a server of the earlier version leaves: a row in the old table per deletion,
    # more than one page of them.
    queues: list[QueueDefinition] = []
    for i in range(70):
        queue = await make_queue(engine, account, f"old{i:02}")
        await engine.put(account, queue.name, "x")
        job = DeletionJob(queue=queue.id, bucket_size=20, created_at=clock.now())
        await store.add_deletion_job(job)
        gone = msgspec.structs.replace(queue, version=queue.version + 1, status="deleted")
        assert await store.replace_queue(gone, queue.version)
        queues.append(queue)
    clock.advance(engine.ctx.tuning.deletion_grace_ms / 1000)

    await run_jobs(engine, account)
    for queue in queues:
        assert await store.read_monoton(queue.id) == 0
    start = QueueId(account, "", 0)  # sorts before every job of the account
    left = await store.list_deletion_jobs(start, 100)
    assert [job for job in left if job.queue.account == account] == []


async def test_a_job_whose_delete_never_happened_keeps_the_queue(
    clock: FakeClock, engine: QueueEngine, account: str
) -> None:
    # A crash after the job was left and before the version bump.
    queue = await make_queue(engine, account, "kept")
    await engine.put(account, "kept", "still here")
    job = DeletionJob(queue=queue.id, bucket_size=20, created_at=clock.now())
    await engine.deletion_log.add(job)
    clock.advance(engine.ctx.tuning.deletion_grace_ms / 1000)
    await run_jobs(engine, account)
    got = await engine.get_next(account, "kept", 30)
    assert got is not None and got.message == "still here"


def test_the_jobs_queue_is_out_of_every_tenants_reach() -> None:
    assert name_problem("accountName", JOBS_QUEUE.account) is not None  # no tenant's name
    # Jobs are retried until done: never dead-lettered nor expired.
    defaults = QueueOptions()
    assert JOBS_QUEUE.options.max_delivery_count > 10**9 > defaults.max_delivery_count
    assert JOBS_QUEUE.options.message_retention_seconds > 10**9
