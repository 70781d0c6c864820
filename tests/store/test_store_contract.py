"""The Store contract: every primitive of `cassieq.store.base.Store`, called directly on the
memory store and on the real Cassandra store, for the meaning the protocol documents.

Absent rows read as their zero value; a compare-and-set answers whether *this* call's
change was applied and changes nothing when its condition is false; markers and "set once"
columns are never cleared. Each test names the primitives it covers (``@covers``) and fails
if it never calls one of them; `test_every_primitive_of_the_protocol_has_a_contract_test`
fails when the protocol gains a primitive that no test here covers.

Tests on Cassandra share its keyspace: each uses names of its own (accounts, secrets,
leases, queue ids).
"""

from __future__ import annotations

import gc
import inspect
import uuid
import weakref
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar, cast

import msgspec
import pytest

from cassieq.model import (
    Account,
    BucketState,
    Counts,
    DeletionJob,
    InvisibilityState,
    KeyspaceSecret,
    QueueDefinition,
    QueueId,
    QueueOptions,
    RedriveTask,
    StatsSnapshot,
)
from cassieq.model_subscriptions import SubscriptionDef
from cassieq.store.base import DedupClaim, Store
from cassieq.store.memory import MemoryStore
from cassieq.store.observer import LwtTally
from tests.store.rows import message, taken

F = TypeVar("F", bound=Callable[..., Awaitable[None]])

PRIMITIVES = frozenset(
    name
    for name, value in inspect.getmembers(Store, inspect.isfunction)
    if not name.startswith("_")
)
COVERED: dict[str, list[str]] = {}  # primitive -> the tests that call it
CLAIMS: dict[str, tuple[str, ...]] = {}  # test -> the primitives it covers


def covers(*primitives: str) -> Callable[[F], F]:
    """Names the primitives a test is the contract of (checked: it must call each)."""

    def mark(test: F) -> F:
        for name in primitives:
            COVERED.setdefault(name, []).append(test.__name__)
        CLAIMS[test.__name__] = primitives
        return test

    return mark


class Recording:
    """A store that notes which of its primitives were called."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.called: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.inner, name)
        if name not in PRIMITIVES:
            return value
        if not inspect.iscoroutinefunction(value):

            def sync_call(*args: Any, **kwargs: Any) -> Any:
                self.called.add(name)
                return value(*args, **kwargs)

            return sync_call

        async def call(*args: Any, **kwargs: Any) -> Any:
            self.called.add(name)
            return await value(*args, **kwargs)

        return call


@pytest.fixture
def store(store: Store, request: pytest.FixtureRequest) -> Iterator[Store]:
    """The two-store fixture, recording calls: a test must call what it covers."""
    recording = Recording(store)
    yield cast(Store, recording)
    claimed = set(CLAIMS.get(request.function.__name__, ()))
    assert claimed <= recording.called, f"covered but never called: {claimed - recording.called}"


def uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def test_every_primitive_of_the_protocol_has_a_contract_test() -> None:
    assert len(PRIMITIVES) >= 40  # the protocol was read (not an empty set compared)
    assert sorted(PRIMITIVES - COVERED.keys()) == []
    assert sorted(COVERED.keys() - PRIMITIVES) == []  # no contract of a primitive gone


# ----------------------------------------------------------------------------- schema


@covers("schema_status")
async def test_schema_status_is_complete_on_a_store_the_tests_use(store: Store) -> None:
    status = await store.schema_status()
    assert status.ok, status
    assert status.answers and status.detail


@covers("add_lwt_observer")
async def test_each_observer_added_hears_every_lwt_outcome_while_it_lives(store: Store) -> None:
    tally, gone = LwtTally(), LwtTally()
    store.add_lwt_observer(tally)
    store.add_lwt_observer(tally)  # added twice, told once
    store.add_lwt_observer(gone)
    dropped = weakref.ref(gone)
    del gone
    gc.collect()
    assert dropped() is None  # held weakly: an engine's observers go with it
    account = Account(name=uid("obs"), keys={}, created_at=1)
    assert await store.insert_account(account)
    assert not await store.insert_account(account)
    heard = {e: n for (p, e), n in tally.counts.items() if p == "insert_account"}
    if isinstance(cast(Recording, store).inner, MemoryStore):
        assert heard == {}  # it decides each compare-and-set at once: nothing to report
    else:
        assert heard == {"applied": 1, "lost": 1}


# ----------------------------------------------------------------------------- accounts


def _account(name: str, created_at: int = 1000) -> Account:
    return Account(name=name, keys={"primary": uid("key")}, created_at=created_at)


@covers("insert_account", "read_account", "list_accounts")
async def test_insert_account_first_one_wins(store: Store) -> None:
    first, rival = _account(uid("ct")), None
    assert await store.read_account(first.name) is None
    assert await store.insert_account(first)
    rival = _account(first.name, created_at=2000)
    assert not await store.insert_account(rival)
    assert await store.read_account(first.name) == first
    other = _account(uid("ct"))
    assert await store.insert_account(other)
    listed = {a.name: a for a in await store.list_accounts()}
    assert listed[first.name] == first and listed[other.name] == other


@covers("delete_account")
async def test_delete_account_deletes_only_the_account_created_then(store: Store) -> None:
    account = _account(uid("ct"), created_at=1000)
    assert await store.insert_account(account)
    await store.delete_account(account.name, 999)  # an earlier account of the name
    assert await store.read_account(account.name) == account
    await store.delete_account(account.name, 1000)
    assert await store.read_account(account.name) is None
    await store.delete_account(account.name, 1000)  # gone already: nothing to do
    assert await store.read_account(account.name) is None


@covers("mark_account_deleting", "read_account_deletion", "unmark_account_deleting")
async def test_the_deletion_mark_is_written_read_and_removed(store: Store) -> None:
    name = uid("ct")
    assert await store.read_account_deletion(name) is None
    await store.mark_account_deleting(name, 1000, 5000)
    assert await store.read_account_deletion(name) == (1000, 5000)
    await store.mark_account_deleting(name, 1000, 6000)  # written again: the later time
    assert await store.read_account_deletion(name) == (1000, 6000)
    await store.unmark_account_deleting(name)
    assert await store.read_account_deletion(name) is None
    await store.unmark_account_deleting(name)  # no mark: nothing to do
    assert await store.read_account_deletion(name) is None


@covers("add_key", "remove_key", "replace_key")
async def test_keys_are_added_once_replaced_by_compare_and_set_and_removed(store: Store) -> None:
    account = _account(uid("ct"))
    assert not await store.add_key(account.name, "ci", "k1")  # no such account
    assert await store.insert_account(account)
    assert await store.add_key(account.name, "ci", "k1")
    assert not await store.add_key(account.name, "ci", "k2")  # the name is taken
    assert await store.read_account(account.name) == Account(
        name=account.name, keys={**account.keys, "ci": "k1"}, created_at=account.created_at
    )
    assert not await store.replace_key(account.name, "ci", "not-k1", "k3")
    assert await store.replace_key(account.name, "ci", "k1", "k3")
    stored = await store.read_account(account.name)
    assert stored is not None and stored.keys["ci"] == "k3"
    await store.remove_key(account.name, "ci")
    stored = await store.read_account(account.name)
    assert stored is not None and stored.keys == account.keys
    # A key removed meanwhile is never brought back by a replace.
    assert not await store.replace_key(account.name, "ci", "k3", "k4")
    stored = await store.read_account(account.name)
    assert stored is not None and "ci" not in stored.keys


# ----------------------------------------------------------------------------- secrets


@covers("read_secret", "insert_secret", "replace_secret")
async def test_secrets_first_writer_wins_and_replace_by_version(store: Store) -> None:
    name = uid("secret")
    assert await store.read_secret(name) is None
    first = KeyspaceSecret(name=name, value=uid("v"), created_at=1000)
    assert not await store.replace_secret(first, 1)  # nothing to replace
    assert await store.read_secret(name) is None
    assert await store.insert_secret(first)
    assert not await store.insert_secret(KeyspaceSecret(name=name, value=uid("v")))
    assert await store.read_secret(name) == first
    rotated = KeyspaceSecret(
        name=name,
        value=uid("v"),
        version=2,
        previous=first.value,
        previous_until=9000,
        created_at=1000,
    )
    assert not await store.replace_secret(rotated, 2)  # the stored version is 1
    assert await store.read_secret(name) == first
    assert await store.replace_secret(rotated, 1)
    assert await store.read_secret(name) == rotated


# ----------------------------------------------------------------------------- queues


def _queue(account: str, name: str, version: int = 1, **fields: Any) -> QueueDefinition:
    values: dict[str, Any] = {
        "account": account,
        "name": name,
        "version": version,
        "status": "active",
        "options": QueueOptions(),
        "created_at": 1000,
        **fields,
    }
    return QueueDefinition(**values)


@covers("insert_queue", "read_queue", "list_queues")
async def test_insert_queue_answers_the_row_that_exists(store: Store) -> None:
    account = uid("ct")
    assert await store.read_queue(account, "b") is None
    assert await store.list_queues(account) == []
    b = _queue(account, "b")
    assert await store.insert_queue(b) is None
    assert await store.insert_queue(_queue(account, "b", created_at=2000)) == b
    a = _queue(account, "a", options=QueueOptions(bucket_size=7))
    assert await store.insert_queue(a) is None
    assert await store.read_queue(account, "b") == b
    assert sorted(await store.list_queues(account), key=lambda q: q.name) == [a, b]
    assert await store.list_queues(uid("ct")) == []


@covers("list_queues_page")
async def test_queue_rows_are_listed_a_page_at_a_time_deleted_ones_too(store: Store) -> None:
    account = uid("ct")
    assert await store.list_queues_page(account, None, 2) == []
    a, b, c = (_queue(account, name) for name in ("a", "b", "c"))
    for q in (c, a, b):
        assert await store.insert_queue(q) is None
    gone = _queue(account, "b", version=2, status="deleted")
    assert await store.replace_queue(gone, 1)
    assert await store.list_queues_page(account, None, 2) == [a, gone]
    assert await store.list_queues_page(account, "a", 2) == [gone, c]  # after, not at
    assert await store.list_queues_page(account, "b", 2) == [c]
    assert await store.list_queues_page(account, "c", 2) == []
    assert await store.list_queues_page(account, None, 5) == await store.list_queues(account)


@covers("replace_queue")
async def test_replace_queue_by_version_and_options_rev(store: Store) -> None:
    account = uid("ct")
    first = _queue(account, "q")
    assert await store.insert_queue(first) is None
    updated = _queue(account, "q", options_rev=1, options=QueueOptions(delay_seconds=3))
    assert not await store.replace_queue(updated, 2)  # the stored version is 1
    assert not await store.replace_queue(updated, 1, expected_rev=5)
    assert await store.read_queue(account, "q") == first
    assert await store.replace_queue(updated, 1, expected_rev=0)
    assert await store.read_queue(account, "q") == updated
    again = _queue(account, "q", options_rev=2, options=QueueOptions(delay_seconds=4))
    assert not await store.replace_queue(again, 1, expected_rev=0)  # the rev is 1 now
    assert await store.replace_queue(again, 1, expected_rev=1)
    deleting = _queue(account, "q", version=2, status="deleting", options_rev=2)
    assert await store.replace_queue(deleting, 1)
    assert await store.read_queue(account, "q") == deleting
    assert not await store.replace_queue(again, 1)
    assert await store.read_queue(account, "q") == deleting
    assert not await store.replace_queue(_queue(uid("ct"), "q"), 1)  # no such queue


# ----------------------------------------------------------------------------- monotons


@covers("read_monoton", "cas_monoton")
async def test_the_monoton_starts_at_zero_and_moves_by_compare_and_set(
    store: Store, queue: QueueId
) -> None:
    assert await store.read_monoton(queue) == 0
    assert await store.cas_monoton(queue, 5, 10) == (False, 0)
    assert await store.read_monoton(queue) == 0
    assert await store.cas_monoton(queue, 0, 10) == (True, 10)
    assert await store.cas_monoton(queue, 0, 20) == (False, 10)
    assert await store.cas_monoton(queue, 10, 20) == (True, 20)
    assert await store.read_monoton(queue) == 20


# ----------------------------------------------------------------------------- buckets


def _empty(bucket: int) -> BucketState:
    return BucketState(bucket=bucket, sealed_at=None, finalized_at=None, messages=())


@covers("read_bucket", "read_message", "insert_messages")
async def test_insert_messages_is_idempotent_and_refused_once_finalized(
    store: Store, queue: QueueId
) -> None:
    assert await store.read_bucket(queue, 3) == _empty(3)
    assert await store.read_message(queue, 3, 60) is None
    rows = [message(62), message(60, attributes={"a": "1"}), message(61)]
    assert await store.insert_messages(queue, 3, rows, 1000)
    in_order = tuple(sorted(rows, key=lambda r: r.monoton))
    assert await store.read_bucket(queue, 3) == BucketState(
        bucket=3, sealed_at=None, finalized_at=None, messages=in_order
    )
    assert await store.read_message(queue, 3, 60) == rows[1]
    # A second try of the same write: answered True, nothing changes.
    assert await store.insert_messages(queue, 3, rows, 1100)
    assert (await store.read_bucket(queue, 3)).messages == in_order


@covers("finalize_bucket")
async def test_a_finalized_bucket_takes_no_new_messages(store: Store, queue: QueueId) -> None:
    assert await store.insert_messages(queue, 0, [message(0)], 1000)
    await store.finalize_bucket(queue, 0, 2000)
    stored = await store.read_bucket(queue, 0)
    assert stored.finalized_at is not None and stored.sealed_at is None
    assert not await store.insert_messages(queue, 0, [message(1)], 2100)
    assert await store.read_message(queue, 0, 1) is None
    assert [m.monoton for m in (await store.read_bucket(queue, 0)).messages] == [0]
    # A bucket never written can be finalized too (the deleter closes skipped buckets).
    await store.finalize_bucket(queue, 1, 2000)
    assert (await store.read_bucket(queue, 1)).finalized_at is not None
    assert not await store.insert_messages(queue, 1, [message(20)], 2100)


@covers("seal_bucket")
async def test_the_first_seal_wins_and_is_answered(store: Store, queue: QueueId) -> None:
    assert await store.seal_bucket(queue, 0, 2000) == 2000
    assert await store.seal_bucket(queue, 0, 3000) == 2000
    stored = await store.read_bucket(queue, 0)
    assert stored.sealed_at == 2000 and stored.finalized_at is None
    # A sealed bucket still takes messages (only finalizing closes it).
    assert await store.insert_messages(queue, 0, [message(0)], 3100)


@covers("delete_bucket")
async def test_delete_bucket_removes_messages_and_keeps_the_markers(
    store: Store, queue: QueueId
) -> None:
    assert await store.insert_messages(queue, 0, [message(0), message(1)], 1000)
    assert await store.seal_bucket(queue, 0, 2000) == 2000
    await store.finalize_bucket(queue, 0, 3000)
    before = await store.read_bucket(queue, 0)
    await store.delete_bucket(queue, 0)
    after = await store.read_bucket(queue, 0)
    assert after.messages == () and await store.read_message(queue, 0, 0) is None
    assert (after.sealed_at, after.finalized_at) == (before.sealed_at, before.finalized_at)
    # Still closed to a writer that is very late.
    assert not await store.insert_messages(queue, 0, [message(2)], 4000)
    assert (await store.read_bucket(queue, 0)).messages == ()


@covers("cas_message")
async def test_cas_message_by_version_and_unsealed(store: Store, queue: QueueId) -> None:
    row = message(0, attributes={"a": "1"})
    assert await store.insert_messages(queue, 0, [row], 1000)
    delivered = taken(row, now=2000)
    assert not await store.cas_message(queue, 0, 2, delivered)  # stale version
    assert await store.read_message(queue, 0, 0) == row
    assert not await store.cas_message(queue, 0, 1, taken(message(9)))  # no such message
    assert await store.cas_message(queue, 0, 1, delivered, unsealed=True)
    assert await store.read_message(queue, 0, 0) == delivered
    assert await store.seal_bucket(queue, 0, 2500) == 2500
    again = taken(delivered, now=3000)
    assert not await store.cas_message(queue, 0, 2, again, unsealed=True)  # sealed
    assert await store.read_message(queue, 0, 0) == delivered
    assert await store.cas_message(queue, 0, 2, again)  # without the unsealed condition
    assert await store.read_message(queue, 0, 0) == again


@covers("cas_message")
async def test_cas_message_keeps_attributes_and_sets_ack_time_and_move_once(
    store: Store, queue: QueueId
) -> None:
    row = message(0, attributes={"a": "1"})
    assert await store.insert_messages(queue, 0, [row], 1000)
    acked = message(0, version=2, acked=True, acked_at=5000, republished_to=40)
    assert acked.attributes == {}
    assert await store.cas_message(queue, 0, 1, acked)
    stored = await store.read_message(queue, 0, 0)
    assert stored == msgspec.structs.replace(acked, attributes={"a": "1"})
    # A later row without an ack time or a move target does not clear them.
    later = message(0, version=3, acked=True)
    assert await store.cas_message(queue, 0, 2, later)
    stored = await store.read_message(queue, 0, 0)
    assert stored is not None and stored.version == 3 and stored.change == later.change
    assert (stored.acked_at, stored.republished_to, stored.attributes) == (5000, 40, {"a": "1"})


@covers("ack_message")
async def test_ack_message_by_version_and_tag(store: Store, queue: QueueId) -> None:
    row = message(0)
    assert await store.insert_messages(queue, 0, [row], 1000)
    assert not await store.ack_message(queue, 0, 0, 1, "other-tag", 2000)
    assert not await store.ack_message(queue, 0, 0, 2, row.tag, 2000)
    assert not await store.ack_message(queue, 0, 7, 1, row.tag, 2000)  # no such message
    assert await store.read_message(queue, 0, 0) == row
    assert await store.ack_message(queue, 0, 0, 1, row.tag, 2000)
    stored = await store.read_message(queue, 0, 0)
    assert stored is not None
    assert (stored.version, stored.acked, stored.acked_at) == (2, True, 2000)
    assert (stored.message, stored.tag) == (row.message, row.tag)
    assert not await store.ack_message(queue, 0, 0, 1, row.tag, 3000)  # acked already
    stored_again = await store.read_message(queue, 0, 0)
    assert stored_again is not None and stored_again.acked_at == 2000


# ----------------------------------------------------------------------------- pointers


@covers("read_pointer", "cas_pointer")
async def test_pointers_start_at_zero_and_move_apart(store: Store, queue: QueueId) -> None:
    assert await store.read_pointer(queue, "reader") == 0
    assert await store.read_pointer(queue, "repair") == 0
    assert not await store.cas_pointer(queue, "reader", 1, 2)
    assert await store.read_pointer(queue, "reader") == 0
    assert await store.cas_pointer(queue, "reader", 0, 3)
    assert not await store.cas_pointer(queue, "reader", 0, 4)
    assert (
        await store.read_pointer(queue, "reader"),
        await store.read_pointer(queue, "repair"),
    ) == (
        3,
        0,
    )
    assert await store.cas_pointer(queue, "repair", 0, 1)
    assert await store.cas_pointer(queue, "reader", 3, 5)
    assert (
        await store.read_pointer(queue, "reader"),
        await store.read_pointer(queue, "repair"),
    ) == (
        5,
        1,
    )


@covers("read_invisibility", "cas_invisibility")
async def test_the_invisibility_state_starts_empty_and_moves_by_rev(
    store: Store, queue: QueueId
) -> None:
    assert await store.read_invisibility(queue) == InvisibilityState()
    first = InvisibilityState(
        bucket=2,
        rev=1,
        stragglers={0: 9000, 1: 9500},
        summary=Counts(published=5, acked=3, dead_lettered=1, delivered=6, expired=1, purged=0),
    )
    assert not await store.cas_invisibility(queue, 1, first)  # the rev is 0
    assert await store.read_invisibility(queue) == InvisibilityState()
    assert await store.cas_invisibility(queue, 0, first)
    assert await store.read_invisibility(queue) == first
    second = InvisibilityState(bucket=3, rev=2, summary=Counts(published=5, acked=5))
    assert not await store.cas_invisibility(queue, 0, second)
    assert await store.cas_invisibility(queue, 1, second)
    assert await store.read_invisibility(queue) == second


# ----------------------------------------------------------------------------- leases


@covers("acquire_lease")
async def test_a_lease_is_held_renewed_and_taken_over_when_expired(
    store: Store,
) -> None:
    name = uid("lease")
    assert await store.acquire_lease(name, "a", 1000, 5000)  # held until 6000
    assert not await store.acquire_lease(name, "b", 2000, 5000)
    assert await store.acquire_lease(name, "a", 3000, 5000)  # renewed: until 8000
    assert not await store.acquire_lease(name, "b", 7999, 5000)
    assert await store.acquire_lease(name, "b", 8000, 5000)  # expired: taken over
    assert not await store.acquire_lease(name, "a", 9000, 5000)


# ----------------------------------------------------------------------------- deleted queues


@covers("delete_queue_state")
async def test_delete_queue_state_drops_a_version_to_its_zero_values(
    store: Store, queue: QueueId
) -> None:
    assert await store.cas_monoton(queue, 0, 30) == (True, 30)
    assert await store.cas_pointer(queue, "reader", 0, 2)
    assert await store.cas_pointer(queue, "repair", 0, 1)
    assert await store.cas_invisibility(queue, 0, InvisibilityState(bucket=1, rev=1))
    for bucket in (0, 1, 2):
        assert await store.insert_messages(queue, bucket, [message(bucket * 10)], 1000)
    assert await store.seal_bucket(queue, 0, 2000) == 2000
    await store.finalize_bucket(queue, 0, 3000)
    kept = await store.read_bucket(queue, 2)
    await store.delete_queue_state(queue, 2)  # buckets 0 and 1
    assert await store.read_monoton(queue) == 0
    assert await store.read_pointer(queue, "reader") == 0
    assert await store.read_pointer(queue, "repair") == 0
    assert await store.read_invisibility(queue) == InvisibilityState()
    assert await store.read_bucket(queue, 0) == _empty(0)  # markers too: the whole partition
    assert await store.read_bucket(queue, 1) == _empty(1)
    assert await store.read_bucket(queue, 2) == kept


# ----------------------------------------------------------------------------- statistics


def _snapshot(queue: QueueId, computed_at: int, published: int) -> StatsSnapshot:
    return StatsSnapshot(
        queue=queue,
        computed_at=computed_at,
        published=published,
        acked=1,
        dead_lettered=0,
        in_flight=1,
        backlog=published - 2,
        delivered=3,
        delivery_count_histogram={1: 2, 2: 1},
        oldest_unacked_age_s=1.5,
        ack_latency_p50_ms=10.0,
        ack_latency_p95_ms=20.0,
        ack_latency_p99_ms=None,
        rows_scanned=4,
    )


@covers("write_stats_snapshot", "read_stats_snapshot", "delete_stats_snapshot")
async def test_the_latest_stats_snapshot_of_a_queue_name(store: Store, queue: QueueId) -> None:
    assert await store.read_stats_snapshot(queue.account, queue.queue) is None
    first = _snapshot(queue, 1000, 4)
    await store.write_stats_snapshot(first)
    assert await store.read_stats_snapshot(queue.account, queue.queue) == first
    # A later snapshot replaces it, whichever version of the queue name it describes.
    later = _snapshot(QueueId(queue.account, queue.queue, queue.version + 1), 2000, 6)
    await store.write_stats_snapshot(later)
    assert await store.read_stats_snapshot(queue.account, queue.queue) == later
    assert await store.read_stats_snapshot(queue.account, "other") is None
    await store.delete_stats_snapshot(queue.account, queue.queue)
    assert await store.read_stats_snapshot(queue.account, queue.queue) is None


# ----------------------------------------------------------------------------- redrive tasks


@covers("write_redrive_task", "read_redrive_task", "list_redrive_tasks", "cancel_redrive_task")
async def test_redrive_tasks_are_kept_and_a_cancel_is_never_cleared(
    store: Store, queue: QueueId
) -> None:
    assert await store.read_redrive_task(queue, "t1") is None
    assert await store.list_redrive_tasks(queue) == []
    t1 = RedriveTask(id="t1", status="running", moved=0, total=10, updated_at=1000,
                     started_at=1000, max_per_second=50)  # fmt: skip
    t2 = RedriveTask(id="t2", status="completed", moved=3, total=3, target="elsewhere",
                     updated_at=1500, started_at=1200)  # fmt: skip
    await store.write_redrive_task(queue, t1)
    await store.write_redrive_task(queue, t2)
    assert await store.read_redrive_task(queue, "t1") == t1
    assert {t.id: t for t in await store.list_redrive_tasks(queue)} == {"t1": t1, "t2": t2}
    await store.cancel_redrive_task(queue, "t1")
    cancelled = await store.read_redrive_task(queue, "t1")
    assert cancelled == msgspec.structs.replace(t1, cancel_requested=True)
    progress = msgspec.structs.replace(t1, moved=4, updated_at=2000)
    assert not progress.cancel_requested
    await store.write_redrive_task(queue, progress)  # the runner's write keeps the mark
    assert await store.read_redrive_task(queue, "t1") == msgspec.structs.replace(
        progress, cancel_requested=True
    )
    assert await store.read_redrive_task(queue, "t2") == t2
    other = QueueId(queue.account, queue.queue, queue.version + 1)
    assert await store.list_redrive_tasks(other) == []


# ----------------------------------------------------------------------------- v2 batches


@covers("cas_messages")
async def test_cas_messages_decides_each_entry_on_its_own(store: Store, queue: QueueId) -> None:
    rows = [message(i) for i in range(3)]
    assert await store.insert_messages(queue, 0, rows, 1000)
    first = taken(rows[1])
    assert await store.cas_message(queue, 0, 1, first)
    mine = [taken(r, now=3000) for r in rows] + [taken(message(7), now=3000)]
    assert await store.cas_messages(queue, 0, [(1, r) for r in mine]) == [
        True,
        False,
        True,
        False,
    ]
    stored = {m.monoton: m for m in (await store.read_bucket(queue, 0)).messages}
    assert [stored[i].change for i in range(3)] == [mine[0].change, first.change, mine[2].change]
    assert 7 not in stored
    with pytest.raises(ValueError):
        await store.cas_messages(queue, 0, [(2, mine[0]), (2, mine[0])])
    with pytest.raises(ValueError):
        await store.cas_messages(queue, 0, [(2, msgspec.structs.replace(mine[0], change=""))])


@covers("ack_messages")
async def test_ack_messages_decides_each_entry_on_its_own(store: Store, queue: QueueId) -> None:
    rows = [message(i) for i in range(3)]
    assert await store.insert_messages(queue, 0, rows, 1000)
    entries = [(0, 1, rows[0].tag), (1, 1, "stale-tag"), (2, 1, rows[2].tag), (5, 1, "none")]
    assert await store.ack_messages(queue, 0, entries, 2000) == [True, False, True, False]
    stored = {m.monoton: m for m in (await store.read_bucket(queue, 0)).messages}
    assert [(stored[i].acked, stored[i].acked_at) for i in range(3)] == [
        (True, 2000),
        (False, None),
        (True, 2000),
    ]
    assert await store.ack_messages(queue, 0, entries[:1], 3000) == [False]  # acked already
    with pytest.raises(ValueError):
        await store.ack_messages(queue, 0, [(1, 1, rows[1].tag), (1, 1, rows[1].tag)], 3000)


# ----------------------------------------------------------------------------- deletion jobs


@covers("add_deletion_job", "list_deletion_jobs", "remove_deletion_job")
async def test_deletion_jobs_are_listed_by_queue_id_a_page_at_a_time_until_removed(
    store: Store, queue: QueueId
) -> None:
    account = queue.account

    def ours(jobs: list[DeletionJob]) -> list[DeletionJob]:
        # The keyspace is shared: other tests' jobs are listed too.
        return [j for j in jobs if j.queue.account == account]

    before_ours = QueueId(account, "", 0)  # sorts (as text) before every queue id of ours
    assert ours(await store.list_deletion_jobs(before_ours, 10)) == []
    jobs = [
        DeletionJob(queue=QueueId(account, "c", 1), bucket_size=20, created_at=900),
        DeletionJob(queue=QueueId(account, "a", 2), bucket_size=7, created_at=1000),
        DeletionJob(queue=QueueId(account, "b", 3), bucket_size=20, created_at=800),
    ]
    for job in jobs:
        await store.add_deletion_job(job)
    a, b, c = sorted(jobs, key=lambda j: str(j.queue))
    assert await store.list_deletion_jobs(before_ours, 2) == [a, b]
    assert await store.list_deletion_jobs(b.queue, 1) == [c]  # after is not included
    first = await store.list_deletion_jobs(None, 1)  # None: from the first job
    assert len(first) == 1 and str(first[0].queue) <= str(a.queue)
    await store.remove_deletion_job(b)
    assert ours(await store.list_deletion_jobs(before_ours, 10)) == [a, c]
    await store.remove_deletion_job(b)  # removed already: nothing to do
    await store.remove_deletion_job(a)
    await store.remove_deletion_job(c)
    assert ours(await store.list_deletion_jobs(before_ours, 10)) == []


# ----------------------------------------------------------------------------- FIFO


@covers("add_group_messages", "read_group_messages", "remove_group_messages")
async def test_a_groups_records_are_read_lowest_first_and_removed_one_by_one(
    store: Store, queue: QueueId
) -> None:
    assert await store.read_group_messages(queue, "g", 10) == []
    await store.add_group_messages(queue, "g", [7], 1000, 3600)
    await store.add_group_messages(queue, "g", [3, 12], 1000, 3600)  # several at once
    await store.add_group_messages(queue, "other", [5], 1000, 3600)
    await store.add_group_messages(queue, "g", [3], 1000, 3600)  # again: still one record
    assert await store.read_group_messages(queue, "g", 10) == [3, 7, 12]
    assert await store.read_group_messages(queue, "g", 2) == [3, 7]
    await store.remove_group_messages(queue, "g", [3])
    await store.remove_group_messages(queue, "g", [99])  # none: nothing happens
    await store.add_group_messages(queue, "g", [20, 21], 1000, 3600)
    await store.remove_group_messages(queue, "g", [20, 21, 98])  # several at once
    assert await store.read_group_messages(queue, "g", 10) == [7, 12]
    assert await store.read_group_messages(queue, "other", 10) == [5]


@covers("touch_group", "list_groups")
async def test_a_partitions_groups_are_listed_by_id_a_page_at_a_time(
    store: Store, queue: QueueId
) -> None:
    assert await store.list_groups(queue, "", 10) == []
    for group in ("b", "a", "c", "a"):  # again: still one row
        await store.touch_group(queue, group, 1000, 3600)
    other = QueueId(queue.account, queue.queue, queue.version, queue.partition + 1)
    await store.touch_group(other, "z", 1000, 3600)  # another partition's
    assert await store.list_groups(queue, "", 10) == ["a", "b", "c"]
    assert await store.list_groups(queue, "", 2) == ["a", "b"]
    assert await store.list_groups(queue, "b", 10) == ["c"]
    assert await store.list_groups(queue, "c", 10) == []
    assert await store.list_groups(other, "", 10) == ["z"]


def _claim(key: str, monoton: int, tag: str) -> DedupClaim:
    return DedupClaim(
        key=key, monoton=monoton, partition=1, tag=tag, created_at=1000, row=message(monoton)
    )


@covers("read_dedup", "claim_dedup", "replace_dedup", "mark_dedup_written")
async def test_a_deduplication_key_is_claimed_once_and_replaced_by_its_tag(
    store: Store, queue: QueueId
) -> None:
    assert await store.read_dedup(queue, "k") is None
    first = _claim("k", 4, "t1")
    assert await store.claim_dedup(first, queue, 360) is None  # claimed
    held = await store.claim_dedup(_claim("k", 9, "t2"), queue, 360)
    assert held is not None and (held.monoton, held.tag, held.partition) == (4, "t1", 1)
    assert held.row == first.row and not held.written
    await store.mark_dedup_written(queue, first.key, 360)
    stored = await store.read_dedup(queue, "k")
    assert stored is not None and stored.written and stored.tag == "t1"
    # Replaced only while the stored claim is still the expected one.
    assert not await store.replace_dedup(queue, "t-other", _claim("k", 11, "t3"), 360)
    assert await store.replace_dedup(queue, "t1", _claim("k", 11, "t3"), 360)
    stored = await store.read_dedup(queue, "k")
    assert stored is not None and (stored.monoton, stored.tag, stored.written) == (11, "t3", False)
    assert await store.read_dedup(queue, "another") is None


@covers("read_group_dedup", "claim_group_dedup", "replace_group_dedup", "mark_group_dedup_written")
async def test_a_groups_deduplication_keys_are_claimed_together_once_each(
    store: Store, queue: QueueId
) -> None:
    assert await store.read_group_dedup(queue, "g", ["a", "b"]) == {}
    # Keys of one group claimed in one call: each claimed once.
    first = _claim("a", 4, "t1")
    assert await store.claim_group_dedup(queue, "g", [first], 360) == {}
    mixed = [_claim("a", 5, "t2"), _claim("b", 6, "t2"), _claim("c", 7, "t2")]
    held = await store.claim_group_dedup(queue, "g", mixed, 360)  # a is held, b and c are new
    assert {k: (c.monoton, c.tag, c.partition) for k, c in held.items()} == {"a": (4, "t1", 1)}
    assert held["a"].row == first.row and not held["a"].written
    found = await store.read_group_dedup(queue, "g", ["a", "b", "c", "d"])
    assert {k: (c.monoton, c.tag) for k, c in found.items()} == {
        "a": (4, "t1"), "b": (6, "t2"), "c": (7, "t2"),
    }  # fmt: skip
    # Another group's keys, and the queue-wide table's, are apart.
    assert await store.read_group_dedup(queue, "other", ["a"]) == {}
    assert await store.claim_group_dedup(queue, "other", [_claim("a", 9, "t3")], 360) == {}
    assert await store.read_dedup(queue, "a") is None
    await store.mark_group_dedup_written(queue, "g", ["b", "c"], 360)
    found = await store.read_group_dedup(queue, "g", ["a", "b", "c"])
    assert {k: c.written for k, c in found.items()} == {"a": False, "b": True, "c": True}
    # Replaced only while the stored claim is still the expected one.
    assert not await store.replace_group_dedup(queue, "g", "t-other", _claim("a", 11, "t4"), 360)
    assert await store.replace_group_dedup(queue, "g", "t1", _claim("a", 11, "t4"), 360)
    again = (await store.read_group_dedup(queue, "g", ["a"]))["a"]
    assert (again.monoton, again.tag, again.written) == (11, "t4", False)
    assert (await store.read_group_dedup(queue, "other", ["a"]))["a"].monoton == 9


@covers("write_receive_attempt", "read_receive_attempt")
async def test_a_receive_attempt_is_kept_with_its_time(store: Store, queue: QueueId) -> None:
    assert await store.read_receive_attempt(queue, "a1") is None
    await store.write_receive_attempt(queue, "a1", 1234, b"answer", 360)
    assert await store.read_receive_attempt(queue, "a1") == (1234, b"answer")
    assert await store.read_receive_attempt(queue, "a2") is None


# ----------------------------------------------------------------- subscriptions (0014)


def _subscription(queue: QueueId, name: str, change: str) -> SubscriptionDef:
    return SubscriptionDef(
        queue=queue, name=name, mode="ordered", start="earliest", created_at=1000,
        position="p0", revision=1, change=change,
    )  # fmt: skip


@covers(
    "insert_subscription",
    "read_subscription",
    "read_subscriptions",
    "cas_subscription_position",
    "delete_subscription",
    "delete_subscriptions",
)
async def test_a_subscription_is_created_once_and_its_position_moves_by_revision(
    store: Store, queue: QueueId
) -> None:
    assert await store.read_subscriptions(queue) == []
    first = _subscription(queue, "b", "c1")
    assert await store.insert_subscription(first) is None  # created
    held = await store.insert_subscription(_subscription(queue, "b", "c2"))
    assert held == first  # the name is taken: the stored one answered
    assert await store.insert_subscription(_subscription(queue, "a", "c3")) is None
    assert [s.name for s in await store.read_subscriptions(queue)] == ["a", "b"]
    # The position moves only from the revision read; each move bumps it.
    assert not await store.cas_subscription_position(queue, "b", 7, "p1", "c4")
    assert await store.cas_subscription_position(queue, "b", 1, "p1", "c5")
    stored = await store.read_subscription(queue, "b")
    assert stored is not None and (stored.position, stored.revision, stored.change) == (
        "p1", 2, "c5",
    )  # fmt: skip
    assert not await store.cas_subscription_position(queue, "b", 1, "p2", "c6")
    assert not await store.cas_subscription_position(queue, "gone", 1, "p2", "c7")
    await store.delete_subscription(queue, "b")
    assert await store.read_subscription(queue, "b") is None
    await store.delete_subscriptions(queue)
    assert await store.read_subscriptions(queue) == []


async def test_a_repair_copy_keeps_the_monoton_of_its_original(
    store: Store, queue: QueueId
) -> None:
    copy = msgspec.structs.replace(message(5), republished_from=2)
    assert await store.insert_messages(queue, 0, [copy, message(6)], 1000)
    rows = {r.monoton: r for r in (await store.read_bucket(queue, 0)).messages}
    assert (rows[5].republished_from, rows[6].republished_from) == (2, None)


# The shared subscriptions' primitives (schema 0015) have their contract in a file of their
# own; imported here so this file's completeness test sees them when run alone.
from tests.store import test_store_contract_shared as _shared  # noqa: E402, F401
