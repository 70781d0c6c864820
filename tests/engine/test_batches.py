"""v2 batches through the engine: a receive of N, batch ack and batch visibility change,
each one conditional batch per bucket partition (both stores)."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter

import pytest

from cassieq.engine import CallCounter, FakeClock, QueueEngine
from cassieq.engine.errors import InvalidArgument, StaleReceipt, Unsettled
from cassieq.model import Delivery, OutgoingMessage, PopReceipt, VisibilityChange
from cassieq.store.base import LwtUndecided, Store
from cassieq.store.cassandra import CassandraStore
from tests.engine.conftest import make_queue
from tests.engine.faults import FaultyStore
from tests.engine.test_holes_and_repair import drain


async def send(engine: QueueEngine, account: str, queue: str, bodies: list[str]) -> None:
    await engine.send(account, queue, [OutgoingMessage(body=b) for b in bodies])


def bodies(got: list[Delivery]) -> list[str]:
    return [d.message for d in got]


def batch_rounds(calls: CallCounter, store: Store) -> int:
    """Conditional batches the Cassandra store sent for cas_messages (every round)."""
    if not isinstance(store, CassandraStore):
        return calls.calls["cas_messages"]  # memory: one call, no rounds
    return calls.rounds("cas_messages")


async def test_a_receive_of_n_takes_n_distinct_messages_with_one_batch(
    calls: CallCounter, engine: QueueEngine, store: Store, account: str
) -> None:
    await make_queue(engine, account, bucket_size=20, strict_fifo=False)
    await send(engine, account, "q", [f"m{i}" for i in range(12)])
    calls.reset()
    rounds = batch_rounds(calls, store)
    got = await engine.receive(account, "q", 10, 30)
    assert len(got) == 10 and len(set(bodies(got))) == 10
    assert {d.receipt.monoton for d in got} <= set(range(12))
    assert all(d.delivery_count == 0 and d.first_delivered_at is not None for d in got)
    assert calls.calls["cas_messages"] == 1 and calls.calls["cas_message"] == 0
    assert batch_rounds(calls, store) - rounds == 1
    assert calls.lwts == 1
    rest = await engine.receive(account, "q", 10, 30)
    assert sorted(bodies(got + rest)) == sorted(f"m{i}" for i in range(12))


@pytest.mark.parametrize("strict_fifo", [True, False])
async def test_racing_batch_receivers_never_share_a_message_within_a_lease(
    engine: QueueEngine, other: QueueEngine, account: str, strict_fifo: bool
) -> None:
    await make_queue(engine, account, bucket_size=10, strict_fifo=strict_fifo)
    total = 60
    await send(engine, account, "q", [f"m{i}" for i in range(total)])
    delivered: Counter[str] = Counter()

    async def consumer(server: QueueEngine) -> None:
        # The clock never moves: every lease is in force for the whole test.
        for _ in range(50):
            got = await server.receive(account, "q", 5, 30)
            delivered.update(bodies(got))
            if sum(delivered.values()) >= total:
                return

    await asyncio.gather(*(consumer(s) for s in (engine, other) for _ in range(4)))
    assert [m for m, n in delivered.items() if n > 1] == []
    assert set(delivered) == {f"m{i}" for i in range(total)}


async def test_a_batch_ack_acks_the_rest_and_reports_the_stale_ones(
    calls: CallCounter, engine: QueueEngine, store: Store, account: str
) -> None:
    queue = await make_queue(engine, account, bucket_size=3)
    await send(engine, account, "q", [f"m{i}" for i in range(7)])
    got = await engine.receive(account, "q", 7, 30)
    assert bodies(got) == [f"m{i}" for i in range(7)]
    receipts = [d.receipt for d in got]
    await engine.ack(account, "q", receipts[1])  # acked already
    updated = await engine.update(account, "q", receipts[4], None, 30)  # receipt replaced
    deleted_version = PopReceipt(queue.version - 1, 5, receipts[5].version, receipts[5].tag)
    calls.reset()
    answer = await engine.ack_batch(account, "q", [*receipts, deleted_version, receipts[0]])
    assert [type(a) for a in answer] == [
        type(None),
        StaleReceipt,
        type(None),
        type(None),
        StaleReceipt,
        type(None),
        type(None),
        StaleReceipt,  # another version of the queue: no store call
        StaleReceipt,  # the same message twice in one batch: only the first counts
    ]
    # The receipts span buckets 0, 1 and 2: one conditional batch on each.
    assert calls.calls["ack_messages"] == 3 and calls.calls["ack_message"] == 0
    assert (await engine.ack_batch(account, "q", [updated])) == [None]
    assert await drain(engine, account, "q") == []
    stats = await engine.statistics(account, "q")
    assert (stats.size, stats.acked) == (0, 7)


async def test_a_batch_whose_bucket_cannot_be_settled_reports_its_entries_and_does_the_rest(
    store: Store, clock: FakeClock
) -> None:
    """One bucket's conditional batch undecided (LwtUndecided): its entries are answered
    Unsettled (503 over HTTP), the other buckets' entries still acked and reported."""
    faulty = FaultyStore(store)
    engine = QueueEngine(faulty, clock)
    account = f"t-{uuid.uuid4().hex[:12]}"
    await engine.accounts.create(account)
    queue = await make_queue(engine, account, bucket_size=2)
    await send(engine, account, "q", ["a", "b", "c", "d"])
    got = await engine.receive(account, "q", 4, 30)
    assert len(got) == 4
    undecided = queue.bucket_of(got[0].receipt.monoton)
    faulty.fail_once(
        "ack_messages",
        when=lambda _queue, bucket, *rest: bucket == undecided,
        error=lambda name: LwtUndecided(name, "injected"),
    )
    answer = await engine.ack_batch(account, "q", [d.receipt for d in got])
    in_undecided = [queue.bucket_of(d.receipt.monoton) == undecided for d in got]
    assert [isinstance(a, Unsettled) for a in answer] == in_undecided
    assert [a is None for a in answer] == [not u for u in in_undecided]
    assert not faulty.armed("ack_messages")
    # Not applied (the fault came before the batch ran): acking them again does it.
    again = [d.receipt for d, u in zip(got, in_undecided, strict=True) if u]
    assert await engine.ack_batch(account, "q", again) == [None] * len(again)
    assert (await engine.statistics(account, "q")).acked == 4


async def test_a_batch_visibility_change_with_new_bodies(
    calls: CallCounter, engine: QueueEngine, store: Store, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, bucket_size=10)
    await send(engine, account, "q", ["a", "b", "c", "d"])
    a, b, c, d = await engine.receive(account, "q", 4, 30)
    await engine.ack(account, "q", d.receipt)
    calls.reset()
    answer = await engine.change_visibility(
        account,
        "q",
        [
            VisibilityChange(receipt=a.receipt, invisibility_ms=0, body="a2"),
            VisibilityChange(receipt=b.receipt, invisibility_ms=5_000),
            VisibilityChange(receipt=c.receipt, invisibility_ms=-1),
            VisibilityChange(receipt=d.receipt, invisibility_ms=0),
        ],
    )
    new_a, new_b, bad, stale = answer
    assert isinstance(new_a, PopReceipt) and isinstance(new_b, PopReceipt)
    assert isinstance(bad, InvalidArgument) and isinstance(stale, StaleReceipt)
    # One read of the bucket, one conditional batch for both changes.
    assert calls.calls["cas_messages"] == 1 and calls.calls["read_bucket"] == 1
    # The old receipts are stale now.
    old = await engine.ack_batch(account, "q", [a.receipt, b.receipt])
    assert all(isinstance(x, StaleReceipt) for x in old)
    again = await engine.receive(account, "q", 10, 30)
    assert bodies(again) == ["a2"]  # visible at once, with its new body; b leased 5 s
    assert again[0].delivery_count == 1
    clock.advance(5)
    later = await engine.receive(account, "q", 10, 30)
    assert bodies(later) == ["b"]  # its new lease ended: delivered again
    assert later[0].delivery_count == 1
    assert isinstance((await engine.ack_batch(account, "q", [new_b]))[0], StaleReceipt)
    assert await engine.ack_batch(account, "q", [again[0].receipt, later[0].receipt]) == [
        None,
        None,
    ]


@pytest.mark.parametrize("left", [False, True], ids=["reader-in-bucket", "reader-left-bucket"])
async def test_a_change_to_visible_now_is_delivered_at_once_by_the_same_server(
    engine: QueueEngine, account: str, left: bool
) -> None:
    # The clock does not move: the change alone must make them deliverable. The reader's
    # snapshot of the full bucket used to hide them for up to a second (its age limit).
    await make_queue(engine, account, bucket_size=4)
    await send(engine, account, "q", ["a", "b", "c", "d", "e", "f", "g", "h"][: 8 if left else 4])
    held = await engine.receive(account, "q", 4, 30)
    if left:
        # The next bucket's four: the reader is past the first bucket now.
        rest = await engine.receive(account, "q", 4, 30)
        assert sorted(bodies(rest)) == ["e", "f", "g", "h"]
    changed = await engine.change_visibility(
        account, "q", [VisibilityChange(receipt=d.receipt, invisibility_ms=0) for d in held]
    )
    assert all(isinstance(c, PopReceipt) for c in changed)
    again = await engine.receive(account, "q", 4, 30)
    assert sorted(bodies(again)) == ["a", "b", "c", "d"]
    assert [d.delivery_count for d in again] == [1, 1, 1, 1]
    assert await engine.ack_batch(account, "q", [d.receipt for d in again]) == [None] * 4


async def test_a_new_body_without_a_new_lease_keeps_the_lease(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    # `cassieq update --message` without --invisibility: only the body changes.
    await make_queue(engine, account, bucket_size=10)
    await send(engine, account, "q", ["a"])
    (held,) = await engine.receive(account, "q", 1, 30)
    clock.advance(10)
    (kept,) = await engine.change_visibility(
        account, "q", [VisibilityChange(receipt=held.receipt, invisibility_ms=None, body="a2")]
    )
    assert isinstance(kept, PopReceipt)
    clock.advance(19)  # 29 s after the receive: still leased (a reset lease would be over)
    assert await engine.receive(account, "q", 10, 30) == []
    clock.advance(1)  # 30 s: the first lease ends, as it would have without the update
    (again,) = await engine.receive(account, "q", 10, 30)
    assert again.message == "a2" and again.delivery_count == 1


async def test_a_batch_receive_dead_letters_spent_messages_and_takes_others(
    calls: CallCounter, engine: QueueEngine, store: Store, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, "dlq")
    await make_queue(engine, account, bucket_size=10, max_delivery_count=1, dlq_name="dlq")
    await send(engine, account, "q", ["p0", "p1", "ok0"])
    first = await engine.receive(account, "q", 3, 1)
    assert bodies(first) == ["p0", "p1", "ok0"]
    assert await engine.ack_batch(account, "q", [first[2].receipt]) == [None]
    await send(engine, account, "q", ["ok1", "ok2"])
    clock.advance(2)  # p0 and p1 have used their one delivery
    calls.reset()
    got = await engine.receive(account, "q", 10, 30)
    assert bodies(got) == ["ok1", "ok2"]
    # The two moves run side by side, their targets taken first as one range: one
    # compare-and-set of the dead-letter queue's monoton, and the copies in source order.
    # (Each move took its own before: CI saw p1 land before p0.)
    assert calls.calls["cas_monoton"] == 1
    assert await drain(engine, account, "dlq") == ["p0", "p1"]
    stats = await engine.statistics(account, "q")
    assert (stats.dead_lettered, stats.in_flight) == (2, 2)


async def test_a_batch_receive_seals_and_advances_across_buckets(
    calls: CallCounter, engine: QueueEngine, store: Store, account: str
) -> None:
    queue = await make_queue(engine, account, bucket_size=3)
    await send(engine, account, "q", [f"m{i}" for i in range(8)])
    calls.reset()
    got = await engine.receive(account, "q", 8, 30)
    await engine.settle()
    # Strict FIFO (the default) across the buckets too.
    assert bodies(got) == [f"m{i}" for i in range(8)]
    # One conditional batch per bucket: 0-2, 3-5, 6-7.
    assert calls.calls["cas_messages"] == 3
    for bucket in (0, 1):
        assert (await store.read_bucket(queue.id, bucket)).sealed_at is not None
    assert (await store.read_bucket(queue.id, 2)).sealed_at is None  # not full, monoton in it
    assert await store.read_pointer(queue.id, "reader") == 2
    assert await engine.receive(account, "q", 8, 30) == []
    await send(engine, account, "q", ["m8", "m9"])
    assert bodies(await engine.receive(account, "q", 8, 30)) == ["m8", "m9"]


async def test_strict_fifo_batches_redeliver_expired_leases_first_in_order(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, bucket_size=4, strict_fifo=True)
    await send(engine, account, "q", [f"m{i}" for i in range(10)])
    first = await engine.receive(account, "q", 3, 5)
    assert bodies(first) == ["m0", "m1", "m2"]
    assert bodies(await engine.receive(account, "q", 3, 60)) == ["m3", "m4", "m5"]
    clock.advance(6)  # m0..m2's leases end; the reader has left bucket 0 meanwhile
    await engine.settle()
    got = await engine.receive(account, "q", 5, 60)
    assert bodies(got) == ["m0", "m1", "m2", "m6", "m7"]
    assert [d.delivery_count for d in got] == [1, 1, 1, 0, 0]
    assert bodies(await engine.receive(account, "q", 5, 60)) == ["m8", "m9"]


async def test_a_receive_takes_what_there_is(engine: QueueEngine, account: str) -> None:
    await make_queue(engine, account, bucket_size=5)
    assert await engine.receive(account, "q", 10, 30) == []
    await send(engine, account, "q", ["only"])
    got = await engine.receive(account, "q", 10, 30)
    assert bodies(got) == ["only"] and got[0].sent_at is not None


async def test_a_bucket_this_server_wrote_whole_is_taken_without_a_read(
    calls: CallCounter, engine: QueueEngine, other: QueueEngine, store: Store, account: str
) -> None:
    await make_queue(engine, account, bucket_size=10)
    await send(engine, account, "q", [f"m{i}" for i in range(10)])
    calls.reset()
    got = await engine.receive(account, "q", 10, 30)
    assert sorted(bodies(got)) == sorted(f"m{i}" for i in range(10))
    # What this server wrote is its snapshot of the bucket: one batch, no read.
    assert calls.calls["read_bucket"] == 0 and calls.calls["cas_messages"] == 1
    # Another server has no such snapshot: it reads the bucket and finds nothing to take.
    assert await other.receive(account, "q", 10, 30) == []


async def test_a_snapshot_of_part_of_a_bucket_is_read_again(
    calls: CallCounter, engine: QueueEngine, other: QueueEngine, store: Store, account: str
) -> None:
    await make_queue(engine, account, bucket_size=10)
    await send(engine, account, "q", [f"mine{i}" for i in range(5)])
    await send(other, account, "q", [f"theirs{i}" for i in range(5)])
    calls.reset()
    got = await engine.receive(account, "q", 10, 30)
    # Its own five came from its snapshot; the bucket is not full in it, so it was read
    # for the rest (the other server's five).
    assert sorted(bodies(got)) == sorted(
        [f"mine{i}" for i in range(5)] + [f"theirs{i}" for i in range(5)]
    )
    assert calls.calls["read_bucket"] == 1


async def test_a_send_is_one_monoton_range_in_request_order_and_one_insert_per_bucket(
    calls: CallCounter, engine: QueueEngine, store: Store, account: str
) -> None:
    await make_queue(engine, account, bucket_size=10)
    calls.reset()
    sent = await engine.send(account, "q", [OutgoingMessage(body=f"m{i}") for i in range(15)])
    monotons = [s.monoton for s in sent]
    # Consecutive, in the order sent: one range, taken with one compare-and-set.
    assert monotons == list(range(monotons[0], monotons[0] + 15))
    assert calls.calls["cas_monoton"] == 1
    buckets = {m // 10 for m in monotons}
    assert calls.calls["insert_messages"] == len(buckets)
    got = await engine.receive(account, "q", 15, 30)
    got += await engine.receive(account, "q", 15, 30)
    assert {d.receipt.monoton: d.message for d in got} == {
        m: f"m{i}" for i, m in enumerate(monotons)
    }


async def test_the_per_put_strategy_takes_a_monoton_for_each_message_of_a_send(
    calls: CallCounter, store: Store, clock: FakeClock, account: str
) -> None:
    engine = QueueEngine(store, clock, monotons="per_put", observers=[calls])
    await make_queue(engine, account, bucket_size=10)
    calls.reset()
    sent = await engine.send(account, "q", [OutgoingMessage(body=f"m{i}") for i in range(3)])
    assert await engine.put(account, "q", "alone") > 0
    # One compare-and-set at least per message (the grouped strategy: 2); side by side they
    # race for the counter, and a lost one is tried again.
    assert calls.calls["cas_monoton"] >= 4
    assert len({s.monoton for s in sent}) == 3
    got = await engine.receive(account, "q", 10, 30)
    assert sorted(bodies(got)) == ["alone", "m0", "m1", "m2"]
