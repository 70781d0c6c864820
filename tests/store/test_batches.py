"""The v2 batch primitives, on both stores: each entry decided on its own.

``cas_messages`` and ``ack_messages`` change several messages of one bucket (on
Cassandra: one conditional batch on the bucket partition, sent again without the entries
whose condition is false). A stale entry is reported False and does not hold back the
others; nothing is applied twice.
"""

from __future__ import annotations

import msgspec
import pytest
from cassandra.query import UNSET_VALUE

from cassieq.model import MessageRow, QueueId
from cassieq.store.base import Store
from cassieq.store.cassandra import CassandraStore
from cassieq.store.cassandra.rows import (
    message_retire_values,
    message_set_values,
    message_take_values,
)
from cassieq.store.cassandra.statements import MESSAGE_SET
from tests.conftest import CassandraNode
from tests.store.rows import message, taken


async def _bucket(store: Store, queue: QueueId, count: int, bucket: int = 0) -> list[MessageRow]:
    rows = [message(bucket * 100 + i) for i in range(count)]
    assert await store.insert_messages(queue, bucket, rows, 1000)
    return rows


async def _stored(store: Store, queue: QueueId, bucket: int = 0) -> dict[int, MessageRow]:
    return {m.monoton: m for m in (await store.read_bucket(queue, bucket)).messages}


async def test_every_entry_applied(store: Store, queue: QueueId) -> None:
    rows = await _bucket(store, queue, 4)
    changed = [taken(r) for r in rows]
    result = await store.cas_messages(queue, 0, [(1, c) for c in changed], unsealed=True)
    assert result == [True, True, True, True]
    stored = await _stored(store, queue)
    for c in changed:
        assert stored[c.monoton].change == c.change
        assert stored[c.monoton].version == 2 and stored[c.monoton].delivery_count == 1
        assert stored[c.monoton].first_delivered_at == 2000


async def test_a_stale_entry_does_not_hold_back_the_others(store: Store, queue: QueueId) -> None:
    rows = await _bucket(store, queue, 4)
    # Another consumer took message 2 first: our expected version 1 is stale for it.
    other = taken(rows[2])
    assert await store.cas_message(queue, 0, 1, other)
    mine = [taken(r, now=3000) for r in rows]
    result = await store.cas_messages(queue, 0, [(1, c) for c in mine])
    assert result == [True, True, False, True]
    stored = await _stored(store, queue)
    assert stored[2].change == other.change and stored[2].version == 2  # not overwritten
    assert [stored[i].change for i in (0, 1, 3)] == [mine[i].change for i in (0, 1, 3)]


async def test_a_unit_goes_whole_or_not_at_all(store: Store, queue: QueueId) -> None:
    """``units``: a FIFO group's run (its head and the messages right after it) is taken
    together or not at all; a stale entry takes its unit out, not the other units."""
    rows = await _bucket(store, queue, 5)
    other = taken(rows[1])  # another consumer took message 1 first
    assert await store.cas_message(queue, 0, 1, other)
    mine = [taken(r, now=3000) for r in rows]
    result = await store.cas_messages(
        queue, 0, [(1, c) for c in mine], keep_body=True, units=[0, 0, 1, 1, 2]
    )
    assert result == [False, False, True, True, True]
    stored = await _stored(store, queue)
    assert stored[0].version == 1 and stored[0].change == rows[0].change  # unit 0: nothing
    assert stored[1].change == other.change
    assert [stored[i].change for i in (2, 3, 4)] == [mine[i].change for i in (2, 3, 4)]
    with pytest.raises(ValueError, match="one unit per entry"):
        await store.cas_messages(queue, 0, [(2, taken(rows[4]))], units=[0, 1])


async def test_every_entry_stale_changes_nothing(store: Store, queue: QueueId) -> None:
    rows = await _bucket(store, queue, 3)
    before = await _stored(store, queue)
    result = await store.cas_messages(queue, 0, [(7, taken(r)) for r in rows])
    assert result == [False, False, False]
    assert await _stored(store, queue) == before


async def test_an_entry_without_a_message_is_false(store: Store, queue: QueueId) -> None:
    rows = await _bucket(store, queue, 2)
    ghost = taken(message(55))
    result = await store.cas_messages(queue, 0, [(1, taken(rows[0])), (1, ghost)])
    assert result == [True, False]
    assert 55 not in await _stored(store, queue)  # no row made up for it


async def test_unsealed_refuses_every_entry_of_a_sealed_bucket(
    store: Store, queue: QueueId
) -> None:
    rows = await _bucket(store, queue, 3)
    assert await store.seal_bucket(queue, 0, 1500) == 1500
    result = await store.cas_messages(queue, 0, [(1, taken(r)) for r in rows], unsealed=True)
    assert result == [False, False, False]
    assert all(m.version == 1 for m in (await _stored(store, queue)).values())
    # Without the condition (repair, an update of a held message) the sealed bucket is fine.
    assert await store.cas_messages(queue, 0, [(1, taken(rows[0]))]) == [True]


async def test_a_repeated_call_applies_nothing_twice(store: Store, queue: QueueId) -> None:
    rows = await _bucket(store, queue, 3)
    entries = [(1, taken(r)) for r in rows]
    assert await store.cas_messages(queue, 0, entries) == [True, True, True]
    after_first = await _stored(store, queue)
    assert await store.cas_messages(queue, 0, entries) == [False, False, False]
    assert await _stored(store, queue) == after_first


async def test_attributes_are_written_once_and_kept(store: Store, queue: QueueId) -> None:
    row = message(0, attributes={"kind": "order", "é": "ü"})
    plain = message(1)
    assert await store.insert_messages(queue, 0, [row, plain], 1000)
    stored = await _stored(store, queue)
    assert stored[0].attributes == {"kind": "order", "é": "ü"}
    assert stored[1].attributes == {} and stored[1].first_delivered_at is None
    # A change that carries other attributes does not alter them (they never change).
    edited = msgspec.structs.replace(taken(stored[0]), attributes={"kind": "forged"})
    assert await store.cas_messages(queue, 0, [(1, edited)]) == [True]
    again = msgspec.structs.replace(taken(edited), attributes={})
    assert await store.cas_message(queue, 0, 2, again)
    assert (await _stored(store, queue))[0].attributes == {"kind": "order", "é": "ü"}


async def test_keep_body_leaves_the_stored_body(store: Store, queue: QueueId) -> None:
    rows = await _bucket(store, queue, 3)
    # The entries' bodies are not written: even a different one leaves the stored body.
    entries = [(1, msgspec.structs.replace(taken(r), message="not written")) for r in rows]
    assert await store.cas_messages(queue, 0, entries, keep_body=True) == [True] * 3
    stored = await _stored(store, queue)
    for r in rows:
        assert stored[r.monoton].message == r.message
        assert stored[r.monoton].version == 2 and stored[r.monoton].delivery_count == 1
    # Without it the body is written (a visibility change with a new body).
    edited = msgspec.structs.replace(taken(stored[0]), message="new body")
    assert await store.cas_messages(queue, 0, [(2, edited)]) == [True]
    assert (await _stored(store, queue))[0].message == "new body"


async def test_keep_body_writes_only_a_takes_or_a_retirements_state(
    store: Store, queue: QueueId
) -> None:
    rows = await _bucket(store, queue, 2)
    # Entries that carry other changes too: only the state of their kind is written.
    take = msgspec.structs.replace(taken(rows[0]), created_at=5, message="not written")
    retired = rows[1].retired(3000, expired=True)
    retire = msgspec.structs.replace(retired, tag="other", delivery_count=7, next_visible_on=9)
    entries = [(1, take), (1, retire)]
    assert await store.cas_messages(queue, 0, entries, keep_body=True) == [True, True]
    stored = await _stored(store, queue)
    t, r = stored[0], stored[1]
    assert (t.version, t.delivery_count, t.next_visible_on, t.updated_at, t.change) == (
        2, 1, take.next_visible_on, take.updated_at, take.change
    )  # fmt: skip
    assert t.first_delivered_at == take.first_delivered_at is not None
    assert (t.tag, t.created_at, t.message, t.acked) == (rows[0].tag, 1000, rows[0].message, False)
    assert (r.version, r.acked, r.acked_at, r.updated_at, r.change) == (
        2,
        True,
        3000,
        3000,
        retire.change,
    )
    assert r.expired and not r.purged and not r.dead_lettered
    assert (r.tag, r.delivery_count, r.next_visible_on) == (rows[1].tag, 0, 0)
    # A later take's row without a first delivery time does not clear the stored one.
    again = msgspec.structs.replace(taken(t), first_delivered_at=None)
    assert await store.cas_messages(queue, 0, [(2, again)], keep_body=True) == [True]
    assert (await _stored(store, queue))[0].first_delivered_at == take.first_delivered_at


async def test_keep_body_changes_rows_of_large_bodies(store: Store, queue: QueueId) -> None:
    # Their bodies together pass a batch's size limit; a change that keeps them does not
    # send them (on Cassandra: one conditional batch for all four).
    big = "x" * 200_000
    rows = [msgspec.structs.replace(message(i), message=big) for i in range(4)]
    for r in rows:  # one insert each: together they pass a batch's size limit
        assert await store.insert_messages(queue, 0, [r], 1000)
    entries = [(1, taken(r)) for r in rows]
    assert await store.cas_messages(queue, 0, entries, keep_body=True) == [True] * 4
    stored = await _stored(store, queue)
    assert all(stored[r.monoton].message == big and stored[r.monoton].version == 2 for r in rows)


async def test_batch_ack(store: Store, queue: QueueId) -> None:
    rows = await _bucket(store, queue, 4)
    held = [taken(r) for r in rows]
    assert await store.cas_messages(queue, 0, [(1, h) for h in held]) == [True] * 4
    entries = [
        (held[0].monoton, 2, held[0].tag),
        (held[1].monoton, 2, "another-tag"),  # a receipt of another delivery
        (held[2].monoton, 1, held[2].tag),  # a receipt of an older version
        (held[3].monoton, 2, held[3].tag),
    ]
    assert await store.ack_messages(queue, 0, entries, 5000) == [True, False, False, True]
    stored = await _stored(store, queue)
    for i in (0, 3):
        assert stored[i].acked and stored[i].acked_at == 5000 and stored[i].version == 3
    assert not stored[1].acked and not stored[2].acked and stored[1].version == 2


async def test_acking_acked_messages_again_is_false(store: Store, queue: QueueId) -> None:
    rows = await _bucket(store, queue, 2)
    assert await store.ack_message(queue, 0, rows[0].monoton, 1, rows[0].tag, 4000)
    entries = [(r.monoton, 1, r.tag) for r in rows]
    assert await store.ack_messages(queue, 0, entries, 5000) == [False, True]
    assert await store.ack_messages(queue, 0, entries, 6000) == [False, False]
    stored = await _stored(store, queue)
    assert stored[0].acked_at == 4000 and stored[1].acked_at == 5000  # each acked once


async def test_an_ack_of_a_missing_message_is_false(store: Store, queue: QueueId) -> None:
    rows = await _bucket(store, queue, 1)
    entries = [(rows[0].monoton, 1, rows[0].tag), (42, 1, "tag-42")]
    assert await store.ack_messages(queue, 0, entries, 5000) == [True, False]


async def test_entries_of_a_deleted_bucket_are_false(store: Store, queue: QueueId) -> None:
    # A bucket is deleted once finished while another server may still hold rows it read
    # from it (a straggler's redelivery, a late ack). On Cassandra the batch then meets a
    # partition with no row at all, whose "not applied" answer carries no columns but
    # [applied]: this once failed a receive with a 500 in the chaos soak.
    rows = await _bucket(store, queue, 3)
    await store.delete_bucket(queue, 0)
    for unsealed in (False, True):
        entries = [(1, taken(r)) for r in rows]
        assert await store.cas_messages(queue, 0, entries, unsealed=unsealed) == [False] * 3
        assert await store.cas_messages(queue, 0, entries, keep_body=True) == [False] * 3
    acks = [(r.monoton, 1, r.tag) for r in rows]
    assert await store.ack_messages(queue, 0, acks, 5000) == [False] * 3
    assert not (await store.read_bucket(queue, 0)).messages  # nothing made up


async def test_entries_of_a_bucket_never_written_are_false(store: Store, queue: QueueId) -> None:
    ghosts = [message(700 + i) for i in range(2)]
    assert await store.cas_messages(queue, 7, [(1, taken(g)) for g in ghosts]) == [False] * 2
    assert await store.ack_messages(queue, 7, [(700, 1, "tag-700")], 5000) == [False]
    assert not (await store.read_bucket(queue, 7)).messages


async def test_a_monoton_moved_from_a_deleted_queue_state_is_not_applied(
    store: Store, queue: QueueId
) -> None:
    # A put that races the queue's deletion: the monoton row is gone ("not applied" with
    # no value column on Cassandra), which reads as 0.
    assert await store.cas_monoton(queue, 0, 5) == (True, 5)
    await store.delete_queue_state(queue, 1)
    assert await store.cas_monoton(queue, 5, 10) == (False, 0)
    assert await store.read_monoton(queue) == 0


async def test_empty_and_malformed_batches(store: Store, queue: QueueId) -> None:
    rows = await _bucket(store, queue, 2)
    assert await store.cas_messages(queue, 0, []) == []
    assert await store.ack_messages(queue, 0, [], 5000) == []
    with pytest.raises(ValueError, match="at most once"):
        await store.cas_messages(queue, 0, [(1, taken(rows[0])), (1, taken(rows[0]))])
    with pytest.raises(ValueError, match="at most once"):
        await store.ack_messages(queue, 0, [(0, 1, "tag-0"), (0, 1, "tag-0")], 5000)
    with pytest.raises(ValueError, match="change token"):
        await store.cas_messages(queue, 0, [(1, msgspec.structs.replace(rows[0], change=""))])
    assert all(m.version == 1 for m in (await _stored(store, queue)).values())


async def test_a_take_on_cassandra_writes_no_body_and_no_nulls(
    cassandra_node: CassandraNode, cassandra_store: CassandraStore, queue: QueueId
) -> None:
    rows = await _bucket(cassandra_store, queue, 2)
    # The cells a take leaves alone (the body, tag, sent time, ack flags) are not rewritten.
    kept = ("message", "tag", "created_at", "acked", "dead_lettered")
    select = (
        f"SELECT monoton, WRITETIME(version) AS written, "
        f"{', '.join(f'WRITETIME({c}) AS {c}' for c in kept)} "
        f"FROM {cassandra_node.settings.keyspace}.messages WHERE queue_id = %s AND bucket = 0"
    )
    before = {r.monoton: r for r in cassandra_node.session.execute(select, (str(queue),))}
    changed = [(1, taken(r)) for r in rows]
    assert await cassandra_store.cas_messages(queue, 0, changed, keep_body=True) == [True, True]
    after = {r.monoton: r for r in cassandra_node.session.execute(select, (str(queue),))}
    for r in rows:
        assert after[r.monoton].written > before[r.monoton].written  # the take was written
        for column in kept:
            assert getattr(after[r.monoton], column) == getattr(before[r.monoton], column)
    # Columns never set are left unset, not written null (a tombstone cell in every read):
    # by a full change, a take's and a retirement's.
    values = message_set_values(taken(rows[0]))
    positions = [c.strip().split(" ")[0] for c in MESSAGE_SET.split(" SET ")[1].split(",")]
    unset = {name for name, v in zip(positions, values, strict=False) if v is UNSET_VALUE}
    assert {"republished_to", "acked_at", "dlq_version", "dlq_monoton"} <= unset
    assert None not in values
    again = msgspec.structs.replace(taken(rows[0]), first_delivered_at=None)
    assert message_take_values(again)[-1] is UNSET_VALUE
    for short in (message_take_values(again), message_retire_values(rows[1].retired(5))):
        assert None not in short
