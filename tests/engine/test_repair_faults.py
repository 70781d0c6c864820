"""Repair moves survive failures mid-way: no loss, no second copy (found in review)."""

from __future__ import annotations

import pytest

from cassieq.engine import FakeClock, QueueEngine
from cassieq.model import MessageRow
from cassieq.store.base import Store
from tests.engine.faults import FaultyStore, InjectedFault
from tests.engine.test_holes_and_repair import drain, sealed_bucket_with_late_write


def _retire(_q: object, _b: int, _v: int, row: MessageRow) -> bool:
    return row.acked and row.republished_to is not None


@pytest.mark.parametrize(
    ("primitive", "after", "when"),
    [
        ("insert_messages", False, lambda *a: True),  # the copy's write fails
        ("insert_messages", True, lambda *a: True),  # the copy is written, the answer lost
        ("cas_message", False, _retire),  # crash before the original is retired
    ],
    ids=["copy-fails", "copy-written-answer-lost", "crash-before-retire"],
)
async def test_an_interrupted_move_is_finished_once(
    store: Store, clock: FakeClock, account: str, primitive: str, after: bool, when: object
) -> None:
    faulty = FaultyStore(store)
    engine = QueueEngine(faulty, clock)
    await sealed_bucket_with_late_write(engine, account, clock)
    clock.advance(15)
    faulty.fail_once(primitive, after=after, when=when)  # type: ignore[arg-type]
    with pytest.raises(InjectedFault):
        await engine.repair(account, "q")
    # The same owner's next poll, and a takeover by another server later: same outcome.
    clock.advance(5)
    await engine.repair(account, "q")
    other = QueueEngine(faulty, clock, instance_id="other")
    clock.advance(31)
    await other.repair(account, "q")
    assert await drain(engine, account, "q") == ["late"]
    clock.advance(60)
    await other.repair(account, "q")
    assert await drain(engine, account, "q") == []
    stats = await engine.statistics(account, "q")
    assert (stats.published, stats.acked, stats.size) == (3, 3, 0)
