"""The Store contract of shared subscriptions (schema 0015), on the memory store and on the
real Cassandra store: the subscription's whole state moved by revision, and its delivery
rows — a first delivery stored once per message, later changes on version and tag (a take
writes the whole state, any other change only its own columns), rows per generation,
deleted per bucket. Registered with the main contract file's ``covers``."""

from __future__ import annotations

import msgspec

from cassieq.model import QueueId
from cassieq.model_subscriptions import SubDelivery, SubscriptionDef
from cassieq.store.base import Store
from tests.store.test_store_contract import covers, store

__all__ = ["store"]  # the recording two-store fixture, used by name


def _row(monoton: int, change: str, *, version: int = 1, count: int = 1) -> SubDelivery:
    return SubDelivery(
        monoton=monoton, version=version, delivery_count=count, next_visible_on=5000,
        tag=f"t{monoton}", updated_at=1000, change=change, first_delivered_at=1000,
    )  # fmt: skip


@covers("cas_subscription")
async def test_a_subscriptions_whole_state_moves_by_revision(store: Store, queue: QueueId) -> None:
    sub = SubscriptionDef(
        queue=queue, name="s", mode="shared", start="earliest", created_at=1000,
        position="p0", revision=1, change="c1", generation=1000, done="p0",
    )  # fmt: skip
    assert await store.insert_subscription(sub) is None
    moved = msgspec.structs.replace(sub, position="p5", done="p2", revision=2, change="c2")
    assert not await store.cas_subscription(queue, "s", 9, moved)
    assert await store.cas_subscription(queue, "s", 1, moved)
    stored = await store.read_subscription(queue, "s")
    assert stored is not None
    assert (stored.position, stored.done, stored.generation, stored.revision, stored.change) == (
        "p5", "p2", 1000, 2, "c2",
    )  # fmt: skip
    sought = msgspec.structs.replace(moved, generation=2000, position="p0", done="p0", change="c3")
    assert not await store.cas_subscription(queue, "s", 1, sought)  # stale revision
    assert await store.cas_subscription(queue, "s", 2, sought)
    stored = await store.read_subscription(queue, "s")
    assert stored is not None and (stored.generation, stored.revision) == (2000, 3)
    assert not await store.cas_subscription(queue, "gone", 1, sought)


@covers(
    "read_sub_deliveries", "insert_sub_deliveries", "cas_sub_deliveries", "delete_sub_deliveries"
)
async def test_delivery_rows_are_stored_once_and_changed_on_version_and_tag(
    store: Store, queue: QueueId
) -> None:
    assert await store.read_sub_deliveries(queue, "s", 0, 7) == []
    assert await store.insert_sub_deliveries(queue, "s", 0, 7, [_row(1, "a"), _row(2, "a")])
    # A second first delivery of 2 is refused; 3's, in the same call, is stored.
    assert await store.insert_sub_deliveries(queue, "s", 0, 7, [_row(2, "b"), _row(3, "b")]) == [
        False, True,
    ]  # fmt: skip
    rows = {r.monoton: r for r in await store.read_sub_deliveries(queue, "s", 0, 7)}
    assert (rows[1], rows[2].change, rows[3].change) == (_row(1, "a"), "a", "b")
    # Another generation's rows are apart (a seek starts afresh).
    assert await store.insert_sub_deliveries(queue, "s", 0, 8, [_row(2, "g")]) == [True]
    assert [r.change for r in await store.read_sub_deliveries(queue, "s", 0, 8)] == ["g"]
    # A take writes the whole state; on a stale version or tag nothing is written.
    again = _row(1, "c", version=2, count=2)
    acked = msgspec.structs.replace(_row(2, "d", version=2, count=0), finished="acked")
    lease = msgspec.structs.replace(_row(3, "e", version=2, count=0), next_visible_on=9000)
    applied = await store.cas_sub_deliveries(
        queue, "s", 0, 7,
        [(1, "t1", again, True), (1, "t2", acked, False), (1, "wrong", lease, False)],
    )  # fmt: skip
    assert applied == [True, True, False]
    rows = {r.monoton: r for r in await store.read_sub_deliveries(queue, "s", 0, 7)}
    assert rows[1] == again
    # An ack (no take): its own columns written, the deliveries and first delivery kept.
    assert (rows[2].version, rows[2].finished, rows[2].change) == (2, "acked", "d")
    assert (rows[2].delivery_count, rows[2].first_delivered_at) == (1, 1000)
    assert rows[3] == _row(3, "b")  # the wrong tag changed nothing
    assert await store.cas_sub_deliveries(queue, "s", 0, 7, [(1, "t9", _row(9, "f"), True)]) == [
        False,
    ]  # fmt: skip  # no row: nothing to change
    await store.delete_sub_deliveries(queue, "s", 0)
    assert await store.read_sub_deliveries(queue, "s", 0, 7) == []
    assert await store.read_sub_deliveries(queue, "s", 0, 8) == []  # every generation's
