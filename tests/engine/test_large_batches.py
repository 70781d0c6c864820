"""Batches of large messages: sent, received and changed in parts under Cassandra's request
limit (16 MiB by default), never refused whole (both stores)."""

from __future__ import annotations

from cassieq.engine import QueueEngine
from cassieq.model import MAX_MESSAGE_BYTES, OutgoingMessage, PopReceipt, VisibilityChange
from cassieq.store.batches import MAX_BATCH_BYTES
from tests.engine.conftest import make_queue
from tests.engine.test_batches import bodies

SIZE = 250_000  # near the largest message a queue allows
COUNT = 100  # one v2 batch, in one bucket: 25 MB, over the limit as one request


async def test_a_bucket_of_large_messages_is_sent_received_changed_and_acked_whole(
    engine: QueueEngine, account: str
) -> None:
    assert SIZE <= MAX_MESSAGE_BYTES and COUNT * SIZE > 2 * MAX_BATCH_BYTES
    await make_queue(engine, account, bucket_size=COUNT)
    sent = [f"{i:03d}".ljust(SIZE, "x") for i in range(COUNT)]
    # Before they went in parts: every put failed (InvalidRequest: "CQL Message of size
    # 25022293 bytes exceeds allowed maximum of 16777216 bytes"), and the API said 500.
    ids = await engine.send(account, "q", [OutgoingMessage(body=b) for b in sent])
    assert len(ids) == COUNT
    got = await engine.receive(account, "q", COUNT, 30)
    assert sorted(bodies(got)) == sent  # each whole, each once
    # A visibility change with new bodies writes them all again, in one call.
    changed = [b.replace("x", "y") for b in bodies(got)]
    outcomes = await engine.change_visibility(
        account,
        "q",
        [
            VisibilityChange(receipt=d.receipt, invisibility_ms=0, body=body)
            for d, body in zip(got, changed, strict=True)
        ],
    )
    assert all(isinstance(o, PopReceipt) for o in outcomes)
    # Visible again at once (the clock has not moved).
    again = await engine.receive(account, "q", COUNT, 30)
    assert sorted(bodies(again)) == sorted(changed)
    assert await engine.ack_batch(account, "q", [d.receipt for d in again]) == [None] * COUNT
    assert await engine.receive(account, "q", COUNT, 30) == []


async def test_a_groups_claims_of_large_messages_go_in_parts(
    engine: QueueEngine, account: str
) -> None:
    """Deduplication by message group claims a group's ids in one conditional batch, and
    each claim holds its message: 100 of 250 KB to one group are claimed in parts (one
    batch was over Cassandra's request limit), and a retry of them is answered whole."""
    await make_queue(
        engine, account, bucket_size=COUNT, fifo=True, deduplication_scope="messageGroup"
    )
    sent = [f"{i:03d}".ljust(SIZE, "x") for i in range(COUNT)]
    batch = [OutgoingMessage(body=b, group="g", dedup_id=f"d{i}") for i, b in enumerate(sent)]
    first = await engine.send(account, "q", batch)
    assert len({s.monoton for s in first}) == COUNT and not any(s.duplicate for s in first)
    again = await engine.send(account, "q", batch)
    assert all(s.duplicate for s in again)
    assert [s.monoton for s in again] == [s.monoton for s in first]
    got: list[str] = []
    while answer := await engine.receive(account, "q", COUNT, 30):
        got += bodies(answer)
        await engine.ack_batch(account, "q", [d.receipt for d in answer])
    assert got == sent  # in send order, each once
