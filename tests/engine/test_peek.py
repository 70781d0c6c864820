"""Peek: the messages still in the queue, in monoton order, page by page; changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from cassieq.engine import CallCounter, FakeClock, QueueEngine
from cassieq.engine.errors import InvalidArgument
from cassieq.model import OutgoingMessage, QueueDefinition
from cassieq.store.base import Store
from tests.engine.conftest import make_queue


async def _everything(store: Store, queue: QueueDefinition) -> dict[str, Any]:
    """Every row and pointer of the queue, as stored."""
    qid = queue.id
    monoton = await store.read_monoton(qid)
    return {
        "monoton": monoton,
        "reader": await store.read_pointer(qid, "reader"),
        "repair": await store.read_pointer(qid, "repair"),
        "invisibility": await store.read_invisibility(qid),
        "buckets": [await store.read_bucket(qid, b) for b in range(queue.bucket_of(monoton) + 2)],
    }


async def test_peek_shows_what_is_in_the_queue_and_changes_nothing(
    calls: CallCounter, engine: QueueEngine, account: str, clock: FakeClock, store: Store
) -> None:
    queue = await make_queue(engine, account, bucket_size=2, message_retention_seconds=60)
    await engine.put(account, "q", "expiring")
    clock.advance(30)
    for body in ("acked", "leased", "waiting"):
        await engine.put(account, "q", body)
    await engine.put(account, "q", "delayed", initial_invisibility_s=100)
    clock.advance(30)  # "expiring" is past its retention now, unmet
    first = await engine.get_next(account, "q", 30)
    assert first is not None and first.message == "acked"
    await engine.ack(account, "q", first.receipt)
    leased = await engine.get_next(account, "q", 30)
    assert leased is not None and leased.message == "leased"
    await engine.settle()

    before = await _everything(store, queue)
    calls.reset()
    peeked, cursor = await engine.peek(account, "q", 100)
    assert calls.lwts == 0
    assert await _everything(store, queue) == before

    assert cursor is None
    assert [(m.body, m.visible, m.delivery_count) for m in peeked] == [
        ("leased", False, 1),
        ("waiting", True, 0),
        ("delayed", False, 0),
    ]
    assert [m.monoton for m in peeked] == sorted(m.monoton for m in peeked)
    assert peeked[1].sent_at == clock.now() - 30_000


async def test_peek_pages_with_a_cursor(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account, bucket_size=2)
    for i in range(7):
        await engine.put(account, "q", f"m{i}")
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page, cursor = await engine.peek(account, "q", 3, cursor)
        seen += [m.body for m in page]
        pages += 1
        if cursor is None:
            break
    assert seen == [f"m{i}" for i in range(7)]
    assert pages == 3


async def test_peek_attributes_and_limits(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account)
    await engine.send(account, "q", [OutgoingMessage(body="b", attributes={"k": "v"})])
    (peeked,), _ = await engine.peek(account, "q", 1)
    assert peeked.attributes == {"k": "v"} and peeked.body == "b"
    for bad in (0, 101):
        with pytest.raises(InvalidArgument, match="limit"):
            await engine.peek(account, "q", bad)
