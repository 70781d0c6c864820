"""Background repairs go round the accounts in turns (issue 40, finding 8), on both stores.

Measured before: one tenant's 1,000 queues stretched the shared background pass from 1.3 to
8.6 s, and every other account's repair waited behind all of them. Here in small: a tenant
with 12 queues, another with one, three repairs per account per tick.
"""

from __future__ import annotations

import uuid

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.worker import BackgroundWorker
from cassieq.model import QueueDefinition
from tests.engine.conftest import make_queue

PER_TICK = 3


async def _tenant(engine: QueueEngine, queues: int) -> str:
    name = f"turns-{uuid.uuid4().hex[:10]}"
    await engine.accounts.create(name)
    for i in range(queues):
        await make_queue(engine, name, f"q{i:02d}")
    return name


async def test_one_tenants_queues_do_not_hold_back_anothers_repair(
    engine: QueueEngine, clock: FakeClock
) -> None:
    big, small = await _tenant(engine, 12), await _tenant(engine, 1)
    repaired: list[tuple[str, str]] = []
    run_once = engine.repairer.run_once

    async def recorded(queue: QueueDefinition) -> None:
        repaired.append((queue.account, queue.name))
        await run_once(queue)

    engine.repairer.run_once = recorded  # type: ignore[method-assign]
    worker = BackgroundWorker(engine, repairs_per_account=PER_TICK)
    ticks: list[list[tuple[str, str]]] = []
    for _ in range(4):  # the clock stands still: each queue is due once
        repaired.clear()
        await worker.tick()
        ticks.append([r for r in repaired if r[0] in (big, small)])
    # The first tick: the small tenant's queue among the first round, not after the big
    # one's twelve; the big one's three longest waiting.
    first = ticks[0]
    assert (small, "q00") in first[:2], first
    assert [name for account, name in first if account == big] == ["q00", "q01", "q02"]
    # Then three of the big one's each tick, none twice, until all twelve are done.
    for tick in ticks[1:]:
        assert len(tick) == PER_TICK and all(account == big for account, _ in tick), tick
    names = [name for tick in ticks for account, name in tick if account == big]
    assert sorted(names) == [f"q{i:02d}" for i in range(12)]
    # All due again (their poll interval is up): again three of the big tenant's and the
    # small one's, not the big tenant's twelve.
    clock.advance(3600)
    repaired.clear()
    await worker.tick()
    again = [r for r in repaired if r[0] in (big, small)]
    assert len(again) == PER_TICK + 1
    assert [name for account, name in again if account == big] == ["q00", "q01", "q02"]
