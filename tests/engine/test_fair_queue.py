"""Fair standard queues (issue 37 item 5), on each store: one group's backlog of 100,000
messages does not hold back ten small groups sent after it."""

from __future__ import annotations

from cassieq.engine import QueueEngine
from cassieq.engine.life.fair import NOISY_MIN
from cassieq.model import Delivery, OutgoingMessage
from tests.engine.conftest import make_queue

BIG = 100_000
SMALL_GROUPS = 10
SMALL_EACH = 10


async def _send_backlog(engine: QueueEngine, account: str, count: int, group: str | None) -> None:
    for start in range(0, count, 1_000):
        batch = [OutgoingMessage(body=f"big/{i}", group=group) for i in range(start, start + 1_000)]
        await engine.send(account, "q", batch)


async def _send_small(engine: QueueEngine, account: str) -> set[str]:
    bodies: set[str] = set()
    for g in range(SMALL_GROUPS):
        batch = [OutgoingMessage(body=f"s{g}/{n}", group=f"s{g}") for n in range(SMALL_EACH)]
        await engine.send(account, "q", batch)
        bodies |= {m.body for m in batch}
    return bodies


async def _first(engine: QueueEngine, account: str, count: int) -> list[Delivery]:
    got: list[Delivery] = []
    while len(got) < count:
        batch = await engine.receive(account, "q", 10, 60)
        assert batch, "the queue ran dry before the deliveries counted"
        got += batch
        assert await engine.ack_batch(account, "q", [d.receipt for d in batch]) == [None] * len(
            batch
        )
    return got


async def test_a_backlog_of_one_group_does_not_hold_back_the_small_groups(
    engine: QueueEngine, account: str
) -> None:
    await make_queue(engine, account, bucket_size=100)
    await _send_backlog(engine, account, BIG, "big")
    small = await _send_small(engine, account)
    definition = await engine.queue(account, "q", fresh=True)
    assert definition.options.fair_lane  # the backlog's group was found noisy
    first = await _first(engine, account, 1_000)
    delivered = {d.message for d in first}
    assert small <= delivered, sorted(small - delivered)[:5]
    # Only the backlog's first messages, sent before it was seen, share the small groups'
    # partition; the rest of the first thousand are its own, from the lane.
    assert sum(d.message.startswith("big/") for d in first) >= 1_000 - len(small)
    assert NOISY_MIN < 1_000


async def test_without_groups_the_backlog_comes_first(engine: QueueEngine, account: str) -> None:
    """The same queue with the backlog sent without a group: what the lane changes."""
    await make_queue(engine, account, bucket_size=100)
    await _send_backlog(engine, account, 2_000, None)
    small = await _send_small(engine, account)
    first = await _first(engine, account, 1_000)
    assert not small & {d.message for d in first}
    assert not (await engine.queue(account, "q", fresh=True)).options.fair_lane


async def test_evenly_spread_groups_are_not_noisy(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account)
    for _ in range(30):
        await engine.send(
            account, "q", [OutgoingMessage(body="x", group=f"g{g}") for g in range(20)]
        )
    assert not (await engine.queue(account, "q", fresh=True)).options.fair_lane
