"""The reader leaves a bucket before its seal and pointer move are written: what if they fail?"""

from __future__ import annotations

import asyncio

import pytest

from cassieq.engine import CallCounter, FakeClock, QueueEngine
from cassieq.engine.life.receive import MAX_AHEAD
from cassieq.engine.life.redeliver import LEAVING_MAX_MS, QUIET_MAX_MS
from cassieq.model import Counts, PopReceipt, QueueDefinition, VisibilityChange
from cassieq.store.base import Store
from tests.engine.conftest import make_queue
from tests.engine.faults import FaultyStore, faulty_queue
from tests.engine.test_holes_and_repair import drain, write_late


@pytest.mark.parametrize(
    ("primitive", "after"),
    [
        ("seal_bucket", False),  # the seal is never written
        ("seal_bucket", True),  # sealed, the answer lost: the pointer was not moved
        ("cas_pointer", False),  # sealed, the pointer never moved
        ("cas_pointer", True),  # moved, the answer lost
    ],
    ids=["seal-fails", "seal-answer-lost", "move-fails", "move-answer-lost"],
)
async def test_a_failed_advance_loses_nothing_and_the_reader_finds_its_way(
    store: Store, clock: FakeClock, account: str, primitive: str, after: bool
) -> None:
    faulty, engine, queue, payloads = await faulty_queue(
        store, clock, account, 7, bucket_size=2, finalize_seconds=1
    )
    faulty.fail_once(primitive, after=after)
    seen = await drain(engine, account, "q")
    await engine.settle()
    assert not faulty.armed(primitive)  # the fault happened, in the background move
    # The failed move is found out by the next leave, which reads the pointer and goes on
    # from there (or back to the bucket that was not sealed).
    seen += await drain(engine, account, "q")
    await engine.settle()
    assert sorted(seen) == payloads  # each once
    assert await faulty.read_pointer(queue.id, "reader") == 3  # the last, open bucket
    for bucket in range(3):
        assert (await faulty.read_bucket(queue.id, bucket)).sealed_at is not None
    # Nothing is left behind for repair or the invisibility side to deliver again.
    clock.advance(60)
    await engine.repair(account, "q")
    assert await drain(engine, account, "q") == []
    assert (await engine.statistics(account, "q")).size == 0


async def test_readers_of_another_server_follow_a_pointer_moved_meanwhile(
    engine: QueueEngine, other: QueueEngine, account: str
) -> None:
    queue = await make_queue(engine, account, bucket_size=2)
    payloads = [f"m{i}" for i in range(6)]
    for payload in payloads:
        await engine.put(account, "q", payload)
    first = await engine.get_next(account, "q", 30)
    assert first is not None
    # The other server reads through buckets 0 and 1 and moves the pointer to 2.
    taken = [first.message]
    for _ in range(4):
        got = await other.get_next(account, "q", 30)
        assert got is not None
        taken.append(got.message)
    await other.settle()
    assert await other.ctx.store.read_pointer(queue.id, "reader") == 2
    # This server's view is bucket 0: its readers learn of the move and follow it.
    while (got := await engine.get_next(account, "q", 30)) is not None:
        taken.append(got.message)
    await engine.settle()
    assert sorted(taken) == payloads
    # It went on from bucket 2 (where the other server left the pointer): all three are full.
    assert await engine.ctx.store.read_pointer(queue.id, "reader") == 3


async def test_a_bucket_left_but_not_yet_sealed_is_not_passed_by_the_invisibility_side(
    store: Store, clock: FakeClock, account: str
) -> None:
    # Another server's readers may still take from it (by the stored pointer): if the
    # invisibility pointer were past it, repair would later move what they delivered.
    faulty, engine, queue, _ = await faulty_queue(store, clock, account, 4, bucket_size=2)
    seal = faulty.hold("seal_bucket")

    async def get_and_ack() -> str:
        got = await engine.get_next(account, "q", 30)
        assert got is not None
        await engine.ack(account, "q", got.receipt)
        return got.message

    assert [await get_and_ack() for _ in range(3)] == ["m0", "m1", "m2"]  # left bucket 0
    assert (await faulty.read_bucket(queue.id, 0)).sealed_at is None  # its seal is held up
    # This get's invisibility pass sees bucket 0 behind its readers, every row acked.
    assert await get_and_ack() == "m3"
    assert (await faulty.read_invisibility(queue.id)).bucket == 0
    seal.set()
    await engine.settle()
    assert await engine.get_next(account, "q", 30) is None
    assert (await faulty.read_invisibility(queue.id)).bucket == 1  # passed once sealed
    await engine.settle()


async def test_readers_go_several_buckets_ahead_of_the_moves_written_behind_them(
    store: Store, clock: FakeClock, account: str
) -> None:
    # Batch receives empty a bucket in a round or two: waiting for each seal and pointer
    # move in turn bounded them. The moves are written behind, in order, up to MAX_AHEAD.
    faulty, engine, queue, payloads = await _buckets_of_two(store, clock, account)
    seal = faulty.hold("seal_bucket")
    seen = []
    for _ in payloads:  # none of them waits for a seal
        got = await engine.get_next(account, "q", 30)
        assert got is not None
        seen.append(got.message)
    assert seen == payloads
    assert await faulty.read_pointer(queue.id, "reader") == 0
    for bucket in range(MAX_AHEAD + 1):
        assert (await faulty.read_bucket(queue.id, bucket)).sealed_at is None
    seal.set()
    await engine.settle()
    assert await faulty.read_pointer(queue.id, "reader") == MAX_AHEAD
    for bucket in range(MAX_AHEAD):
        assert (await faulty.read_bucket(queue.id, bucket)).sealed_at is not None
    assert await engine.get_next(account, "q", 30) is None


async def test_the_pointer_passes_every_bucket_sealed_meanwhile_in_one_move(
    calls: CallCounter, store: Store, clock: FakeClock, account: str
) -> None:
    # The seals of the chain are written at once; the pointer moves in order, each move
    # past every bucket sealed by then: one CAS per bucket in turn bounded batch receives.
    faulty, engine, queue, payloads = await _buckets_of_two(store, clock, account, calls)
    calls.reset()
    move = faulty.hold("cas_pointer")
    seen = [(await engine.get_next(account, "q", 30)) for _ in payloads]
    assert [got.message for got in seen if got is not None] == payloads
    await faulty.finished("seal_bucket", MAX_AHEAD)  # only the moves are held
    for bucket in range(MAX_AHEAD):
        assert (await faulty.read_bucket(queue.id, bucket)).sealed_at is not None
    assert await faulty.read_pointer(queue.id, "reader") == 0
    move.set()
    await engine.settle()
    assert await faulty.read_pointer(queue.id, "reader") == MAX_AHEAD
    # Bucket 0's move (its CAS was already sent when the others were sealed), then one
    # move past all the rest.
    assert calls.calls["cas_pointer"] == 2
    assert await engine.get_next(account, "q", 30) is None


async def test_a_failed_move_in_the_chain_sends_the_readers_back_and_loses_nothing(
    store: Store, clock: FakeClock, account: str
) -> None:
    # The buckets after a failed move were complete: they are sealed, but the pointer did
    # not pass them, and the readers go back to it. Whoever passes them later finds them
    # sealed; what the readers did not take the invisibility side delivers.
    faulty, engine, queue, payloads = await faulty_queue(
        store, clock, account, 9, bucket_size=2, finalize_seconds=1
    )
    seal = faulty.hold("seal_bucket")
    seen = []
    for _ in range(6):  # buckets 0-1 left (their moves waiting for the seals), 2 emptied
        got = await engine.get_next(account, "q", 30)
        assert got is not None
        seen.append(got.message)
        await engine.ack(account, "q", got.receipt)
    faulty.fail_once("cas_pointer")  # bucket 0's move: sealed, the pointer not moved
    seal.set()
    await engine.settle()
    assert not faulty.armed("cas_pointer")
    assert await faulty.read_pointer(queue.id, "reader") == 0
    for bucket in (0, 1):
        assert (await faulty.read_bucket(queue.id, bucket)).sealed_at is not None
    assert (await faulty.read_bucket(queue.id, 2)).sealed_at is None  # not left yet
    # The readers find their way from the stored pointer; each message once.
    seen += await drain(engine, account, "q")
    await engine.settle()
    assert sorted(seen) == payloads
    assert await faulty.read_pointer(queue.id, "reader") == 4
    clock.advance(60)
    await engine.repair(account, "q")
    assert await drain(engine, account, "q") == []
    assert (await engine.statistics(account, "q")).size == 0


async def test_receivers_of_a_busy_queue_read_the_buckets_their_demand_needs_at_once(
    store: Store, clock: FakeClock, account: str
) -> None:
    # Each full bucket serves bucket_size messages: receivers that read the buckets after
    # it one at a time each waited for every read on their way (two batches per bucket).
    faulty, engine, queue, payloads = await faulty_queue(store, clock, account, 16, bucket_size=4)
    later = faulty.hold("read_bucket", when=lambda qid, bucket: bucket > 0)

    def reads() -> list[int]:
        return [args[1] for name, args in faulty.calls if name == "read_bucket"]

    receivers = [asyncio.ensure_future(engine.receive(account, "q", 4, 30)) for _ in range(4)]
    try:
        # Bucket 0 serves one of them; the other three batches need buckets 1 to 3. Their
        # reads are all under way before any of them has answered.
        await asyncio.wait_for(faulty.until(lambda: {1, 2, 3} <= set(reads())), 30)
        assert 4 not in reads()  # and no further than the demand
    finally:
        later.set()
    got = await asyncio.gather(*receivers)
    await engine.settle()
    assert sorted(d.message for batch in got for d in batch) == sorted(payloads)
    assert all(len(batch) == 4 for batch in got)
    # Each read once, by the reader. The ones it left (1 and 2) are not read again when
    # their seal is stored: this server took every message of them, so the invisibility
    # side knows them without a read.
    assert sorted(b for b in reads() if b > 0) == [1, 2, 3]
    assert await faulty.read_pointer(queue.id, "reader") == 3  # 3 is emptied, not left


async def test_a_lone_receiver_of_a_backlog_reads_no_bucket_ahead(
    store: Store, clock: FakeClock, account: str
) -> None:
    faulty, engine, _, _ = await faulty_queue(store, clock, account, 16, bucket_size=4)
    got = await engine.receive(account, "q", 4, 30)
    assert sorted(d.message for d in got) == ["m0", "m1", "m2", "m3"]
    assert [args[1] for name, args in faulty.calls if name == "read_bucket"] == [0]
    await engine.settle()


async def _buckets_of_two(
    store: Store, clock: FakeClock, account: str, calls: CallCounter | None = None
) -> tuple[FaultyStore, QueueEngine, QueueDefinition, list[str]]:
    """An engine on a faulty store (counted by ``calls``); a queue of buckets of 2,
    MAX_AHEAD + 1 of them full."""
    observers = [] if calls is None else [calls]
    return await faulty_queue(
        store, clock, account, 2 * (MAX_AHEAD + 1), observers=observers, bucket_size=2
    )


def _reads_of(faulty: FaultyStore, bucket: int) -> int:
    return sum(1 for name, args in faulty.calls if name == "read_bucket" and args[1] == bucket)


async def test_a_bucket_being_sealed_is_read_for_its_redeliveries_once_the_seal_is_stored(
    store: Store, clock: FakeClock, account: str
) -> None:
    # Gets do not read a bucket this server's reader has left while its seal is under way
    # (each get of a busy queue waited for such reads); the seal's task reads it once stored.
    faulty, engine, _, payloads = await faulty_queue(store, clock, account, 6, bucket_size=2)
    sealing = faulty.hold("seal_bucket", when=lambda qid, bucket, now: bucket == 0)
    first = await engine.receive(account, "q", 4, 30)  # buckets 0 and 1; 0 left, seal held
    assert sorted(d.message for d in first) == payloads[:4]
    # m0, m1 (bucket 0) visible again at once: no clock advance, which would end the skip.
    # (Changed here after the reader took them: the bucket is read after its seal, not
    # known from those takes.)
    changes = [VisibilityChange(receipt=d.receipt, invisibility_ms=0) for d in first]
    changed = await engine.change_visibility(
        account, "q", [c for c in changes if c.receipt.monoton < 2]
    )
    assert all(isinstance(r, PopReceipt) for r in changed)
    before = _reads_of(faulty, 0)
    try:
        # The invisibility side comes first, but skips bucket 0: the reader answers from
        # its own bucket.
        second = await engine.receive(account, "q", 2, 30)
        assert sorted(d.message for d in second) == ["m4", "m5"]
        assert _reads_of(faulty, 0) == before  # not read by the get
    finally:
        sealing.set()
    await engine.settle()
    assert _reads_of(faulty, 0) == before + 1  # the one read after the seal
    again = await engine.receive(account, "q", 2, 30)  # the invisibility side's first
    assert sorted(d.message for d in again) == ["m0", "m1"]
    assert all(d.delivery_count == 1 for d in again)  # one delivery before this one


async def test_a_seal_that_takes_long_does_not_keep_its_bucket_from_the_gets(
    store: Store, clock: FakeClock, account: str
) -> None:
    faulty, engine, _, payloads = await faulty_queue(store, clock, account, 6, bucket_size=2)
    sealing = faulty.hold("seal_bucket", when=lambda qid, bucket, now: bucket == 0)
    first = await engine.receive(account, "q", 2, 30)
    assert sorted(d.message for d in first) == payloads[:2]
    assert await engine.receive(account, "q", 2, 30) != []  # leaves bucket 0: seal held
    try:
        clock.advance(31)  # m0, m1's leases end, and the seal has taken longer than the bound
        assert LEAVING_MAX_MS < 31_000
        again = await engine.receive(account, "q", 2, 30)
        assert sorted(d.message for d in again) == ["m0", "m1"]
        assert _reads_of(faulty, 0) == 2  # read by the get itself
    finally:
        sealing.set()
    await engine.settle()


async def test_a_head_whose_messages_this_server_acked_is_passed_without_a_read(
    store: Store, clock: FakeClock, account: str
) -> None:
    faulty, engine, queue, _ = await faulty_queue(store, clock, account, 4, bucket_size=2)
    got = await engine.receive(account, "q", 4, 30)
    await engine.settle()  # bucket 0 sealed: m0 and m1 pending
    assert not any(await engine.ack_batch(account, "q", [d.receipt for d in got]))
    before = _reads_of(faulty, 0)
    assert await engine.receive(account, "q", 1, 30) == []
    await engine.settle()
    state = await faulty.read_invisibility(queue.id)
    assert state.bucket >= 1
    # Passed on that read and its own acks (each at the version the read showed).
    assert _reads_of(faulty, 0) == before
    assert state.summary == Counts(published=2, acked=2, delivered=2)


async def test_a_bucket_this_server_took_whole_is_not_read_after_its_seal(
    store: Store, clock: FakeClock, account: str
) -> None:
    # Every message of bucket 0 was taken by this server's reader: what the seal leaves is
    # known here (each row as its take left it), and no other row can appear in it.
    faulty, engine, queue, payloads = await faulty_queue(store, clock, account, 4, bucket_size=2)
    got = await engine.receive(account, "q", 4, 30)
    await engine.settle()
    assert sorted(d.message for d in got) == payloads
    assert (await store.read_bucket(queue.id, 0)).sealed_at is not None
    assert _reads_of(faulty, 0) == 1  # the reader's own read; none after the seal
    # Its leases run: gets skip it instead of reading it (what the seal left says when the
    # first one ends), and answer from nowhere else.
    assert await engine.receive(account, "q", 2, 30) == []
    assert _reads_of(faulty, 0) == 1
    # All acked here: the invisibility pointer passes it on what the seal left, unread.
    assert not any(await engine.ack_batch(account, "q", [d.receipt for d in got]))
    assert await engine.receive(account, "q", 1, 30) == []
    await engine.settle()
    # Bucket 1 too: that receive found it empty and left it.
    state = await faulty.read_invisibility(queue.id)
    assert state.bucket == 2
    assert _reads_of(faulty, 0) == 1
    assert state.summary == Counts(published=4, acked=4, delivered=4)


async def test_a_bucket_this_server_took_whole_redelivers_what_was_not_acked(
    store: Store, clock: FakeClock, account: str
) -> None:
    _, engine, _, _ = await faulty_queue(store, clock, account, 4, bucket_size=2)
    got = await engine.receive(account, "q", 4, 30)
    await engine.settle()
    kept = min(got, key=lambda d: d.receipt.monoton)  # in bucket 0
    acked = [d.receipt for d in got if d is not kept]
    assert not any(await engine.ack_batch(account, "q", acked))
    clock.advance(31)  # its lease has ended
    again = await engine.receive(account, "q", 2, 30)
    assert [(d.message, d.delivery_count) for d in again] == [(kept.message, 1)]
    assert not any(await engine.ack_batch(account, "q", [again[0].receipt]))
    clock.advance(31)
    assert await engine.receive(account, "q", 2, 30) == []


async def test_a_bucket_another_server_took_from_is_read_after_its_seal(
    store: Store, clock: FakeClock, account: str
) -> None:
    # This server's reader took only part of bucket 0: what the seal leaves is not known
    # here (another server's delivery, its lease), so it is read once the seal is stored.
    faulty, engine, _, payloads = await faulty_queue(
        store, clock, account, 4, bucket_size=2, strict_fifo=True
    )
    other = QueueEngine(store, clock, instance_id="other")
    first = await other.receive(account, "q", 1, 30)
    assert [d.message for d in first] == ["m0"]
    got = await engine.receive(account, "q", 3, 30)
    await engine.settle()
    assert sorted(d.message for d in got) == payloads[1:]
    assert _reads_of(faulty, 0) == 2  # the reader's, and the one after the seal
    # The other server's delivery is not acked: redelivered here when its lease ends.
    assert not any(await engine.ack_batch(account, "q", [d.receipt for d in got]))
    clock.advance(31)
    again = await engine.receive(account, "q", 2, 30)
    assert [(d.message, d.delivery_count) for d in again] == [("m0", 1)]


async def _m0_taken_then_the_rest(
    store: Store, clock: FakeClock, account: str, seconds: float
) -> tuple[FaultyStore, QueueEngine, int]:
    """Bucket 0 (of 2) taken whole by one server: m0, then ``seconds`` later m1 (and bucket
    1), its seal stored; and the reads of bucket 0 before the second receive."""
    faulty, engine, _, _ = await faulty_queue(
        store, clock, account, 4, bucket_size=2, strict_fifo=True
    )
    assert [d.message for d in await engine.receive(account, "q", 1, 30)] == ["m0"]
    clock.advance(seconds)
    reads = _reads_of(faulty, 0)
    got = await engine.receive(account, "q", 3, 30)
    await engine.settle()
    assert [d.message for d in got] == ["m1", "m2", "m3"]
    return faulty, engine, reads


async def test_takes_a_second_old_at_the_seal_are_not_trusted_for_the_bucket(
    store: Store, clock: FakeClock, account: str
) -> None:
    # What another server changed after the first take is seen within QUIET_MAX_MS of the
    # change, as after a read: takes older than that are not the bucket's state any more.
    faulty, _, reads = await _m0_taken_then_the_rest(store, clock, account, QUIET_MAX_MS / 1000)
    # The reader's (its hint of the bucket is as old), and the one after the seal.
    assert _reads_of(faulty, 0) == reads + 2


async def test_what_takes_left_is_trusted_from_the_first_take_not_from_the_seal(
    store: Store, clock: FakeClock, account: str
) -> None:
    seconds = 0.6 * QUIET_MAX_MS / 1000
    faulty, engine, reads = await _m0_taken_then_the_rest(store, clock, account, seconds)
    assert _reads_of(faulty, 0) == reads  # hint and takes under a second old: no read
    assert await engine.receive(account, "q", 1, 30) == []
    assert _reads_of(faulty, 0) == reads  # skipped: its leases run
    clock.advance(0.5 * QUIET_MAX_MS / 1000)  # 1.1 s after the first take, 0.5 after the seal
    assert await engine.receive(account, "q", 1, 30) == []
    assert _reads_of(faulty, 0) == reads + 1  # what the takes said is too old: read


async def _acked_here_after_a_redelivery_elsewhere(
    store: Store, clock: FakeClock, account: str
) -> tuple[FaultyStore, QueueEngine, QueueDefinition]:
    """Bucket 0 (of 2) known after its seal with m0 and m1 pending at version 2 (this
    server took both: no read); then another server makes m0 visible and delivers it
    again, and this server acks that delivery (at version 4) and m1 (at 2): nothing is
    pending there, and m0 changed after what this server knows of it."""
    faulty, engine, queue, _ = await faulty_queue(store, clock, account, 4, bucket_size=2)
    other = QueueEngine(store, clock, instance_id="other")
    got = await engine.receive(account, "q", 4, 30)
    await engine.settle()
    m0, m1 = sorted(got, key=lambda d: d.receipt.monoton)[:2]
    change = VisibilityChange(receipt=m0.receipt, invisibility_ms=0)
    assert isinstance((await other.change_visibility(account, "q", [change]))[0], PopReceipt)
    again = await other.receive(account, "q", 1, 30)
    assert [d.receipt.monoton for d in again] == [m0.receipt.monoton]
    assert not any(await engine.ack_batch(account, "q", [again[0].receipt, m1.receipt]))
    return faulty, engine, queue


async def test_a_head_changed_after_its_read_is_read_again_to_pass_it(
    store: Store, clock: FakeClock, account: str
) -> None:
    faulty, engine, queue = await _acked_here_after_a_redelivery_elsewhere(store, clock, account)
    before = _reads_of(faulty, 0)
    assert await engine.receive(account, "q", 1, 30) == []
    await engine.settle()
    state = await faulty.read_invisibility(queue.id)
    assert state.bucket >= 1
    # m0 was acked at another version than this server knew: read, counted right.
    assert _reads_of(faulty, 0) == before + 1
    assert state.summary == Counts(published=2, acked=2, delivered=3)


async def test_a_settled_head_is_read_to_pass_it_by_one_get_at_a_time(
    store: Store, clock: FakeClock, account: str
) -> None:
    # Every get of a busy queue joined the read of a settled head that another get made to
    # pass it, then could not pass it (the other was passing): it waited for nothing.
    # Passing the head takes a read (the previous test), and this server knows nothing is
    # pending there.
    faulty, engine, queue = await _acked_here_after_a_redelivery_elsewhere(store, clock, account)
    head = faulty.hold("read_bucket", when=lambda qid, bucket: bucket == 0)
    before = _reads_of(faulty, 0)
    passing = asyncio.ensure_future(engine.receive(account, "q", 1, 30))
    try:
        await asyncio.wait_for(faulty.until(lambda: _reads_of(faulty, 0) > before), 30)
        # Another get goes on while that read is held: no message anywhere, so it answers.
        assert await asyncio.wait_for(engine.receive(account, "q", 1, 30), 30) == []
        assert _reads_of(faulty, 0) == before + 1
    finally:
        head.set()
    assert await passing == []
    await engine.settle()
    assert (await faulty.read_invisibility(queue.id)).bucket >= 1  # the first get passed it


async def test_a_late_write_retired_after_the_read_is_counted_when_the_head_is_passed(
    engine: QueueEngine, store: Store, clock: FakeClock, account: str
) -> None:
    # A late write is not final: a purge retires it, and the pass must count it then. The
    # read after the seal showed it unacked, so passing the head takes a read again.
    queue = await make_queue(engine, account, bucket_size=2, finalize_seconds=15)
    await engine.put(account, "q", "a")  # m0
    slow = await engine.publisher.take_monotons(queue.id)  # m1: a writer that is late
    await engine.put(account, "q", "b")  # m2
    (a,) = await engine.receive(account, "q", 1, 30)
    assert await engine.receive(account, "q", 1, 30) == []
    clock.advance(engine.ctx.tuning.hole_grace_ms / 1000)
    got = await engine.receive(account, "q", 1, 30)  # b: bucket 0 sealed, m1 still a hole
    await engine.settle()  # read after the seal: m0 pending
    assert await write_late(engine, queue, slow, "late")
    assert not any(await engine.ack_batch(account, "q", [a.receipt] + [d.receipt for d in got]))
    assert await engine.purge(account, "q") >= 1  # retires the late write
    assert await engine.receive(account, "q", 1, 30) == []
    await engine.settle()
    state = await store.read_invisibility(queue.id)
    assert state.bucket >= 1
    assert state.summary.published == 2 and state.summary.purged == 1
