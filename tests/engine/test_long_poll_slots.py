"""Waiting receives are bounded per account and in all (issue 40, finding 4), on each store.

Measured before: one tenant's long polls held 973 of the server's 1,000 request slots. Here
in small: a share of 3 per account and 4 in all. A receive beyond either answers at once
(what is visible, maybe nothing); the others keep waiting and are woken by puts as before.
"""

from __future__ import annotations

import asyncio
import uuid

from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.context import Tuning
from cassieq.model import Delivery, OutgoingMessage
from cassieq.store.base import Store
from tests.engine.conftest import make_queue

SLOTS = Tuning(
    long_poll_check_ms=3_600_000,  # the watchers never tick by themselves
    long_poll_max_waiting=4,
    long_poll_max_waiting_per_account=3,
)
WAIT_S = 20  # what each receive asks for
PROMPT_S = 5  # an answer "at once" comes well within this (the waits are 20 s)


async def _tenant(engine: QueueEngine) -> str:
    name = f"lp-{uuid.uuid4().hex[:10]}"
    await engine.accounts.create(name)
    await make_queue(engine, name)
    return name


def _waiting(engine: QueueEngine, account: str) -> asyncio.Task[list[Delivery]]:
    return asyncio.create_task(engine.receive(account, "q", invisibility_s=60, wait_s=WAIT_S))


async def _waits(engine: QueueEngine, account: str, waiters: int) -> None:
    queue = (await engine.queues.get(account, "q")).id
    await asyncio.wait_for(engine.waiters.watching(queue, waiters), PROMPT_S)


async def test_an_account_beyond_its_share_is_answered_at_once(store: Store) -> None:
    engine = QueueEngine(store, FakeClock(), tuning=SLOTS)
    a, b = await _tenant(engine), await _tenant(engine)
    held = [_waiting(engine, a) for _ in range(3)]
    await _waits(engine, a, 3)
    # A's fourth: beyond its share, it does not wait (the queue is empty: nothing).
    assert await asyncio.wait_for(_waiting(engine, a), PROMPT_S) == []
    assert engine.long_poll_slots.waiting(a) == 3
    # B still waits, and a put wakes it as before.
    b_waits = _waiting(engine, b)
    await _waits(engine, b, 1)
    await engine.send(b, "q", [OutgoingMessage(body="for b")])
    got = await asyncio.wait_for(b_waits, PROMPT_S)
    assert [d.message for d in got] == ["for b"]
    assert not any(task.done() for task in held)  # A's three still wait
    for task in held:
        task.cancel()
    await asyncio.gather(*held, return_exceptions=True)
    assert engine.long_poll_slots.waiting() == 0  # every slot given back


async def test_the_total_bounds_every_account_together(store: Store) -> None:
    engine = QueueEngine(store, FakeClock(), tuning=SLOTS)
    a, b, c = await _tenant(engine), await _tenant(engine), await _tenant(engine)
    held = [_waiting(engine, a) for _ in range(3)]
    await _waits(engine, a, 3)
    held.append(_waiting(engine, b))
    await _waits(engine, b, 1)
    # Four wait: C's receive answers at once, with the message that is there.
    await engine.send(c, "q", [OutgoingMessage(body="for c")])
    got = await asyncio.wait_for(_waiting(engine, c), PROMPT_S)
    assert [d.message for d in got] == ["for c"]
    assert await asyncio.wait_for(_waiting(engine, c), PROMPT_S) == []
    # One ends (a put wakes B's): C may wait again.
    await engine.send(b, "q", [OutgoingMessage(body="for b")])
    assert len(await asyncio.wait_for(held.pop(), PROMPT_S)) == 1
    c_waits = _waiting(engine, c)
    await _waits(engine, c, 1)
    assert not c_waits.done()
    for task in [*held, c_waits]:
        task.cancel()
    await asyncio.gather(*held, c_waits, return_exceptions=True)
    assert engine.long_poll_slots.waiting() == 0
