"""An LWT whose answer is lost is resolved by a SERIAL read, never assumed.

Each primitive times out once, before it ran (not applied, condition still holding:
contention, so it is sent again and applies) or after it ran (applied, answer lost: read
back as applied, not applied twice). A timeout on a change whose condition is false is
read back as "not applied"; one that keeps timing out is undecided, never a guess.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest
from cassandra import ConsistencyLevel, ReadTimeout, Unavailable

from cassieq.model import (
    Account,
    InvisibilityState,
    KeyspaceSecret,
    MessageRow,
    QueueDefinition,
    QueueId,
    QueueOptions,
)
from cassieq.store.base import LwtUndecided
from cassieq.store.cassandra import CassandraStore, LwtRetry
from cassieq.store.cassandra.lwt import READ_BACK_TRIES
from tests.lwt_faults import Mode, TimeoutInjectingStore, cas_timeout

MODES: list[Mode] = ["before", "after"]


def _row(version: int, change: str, monoton: int = 0) -> MessageRow:
    return MessageRow(
        monoton=monoton, message="m", version=version, delivery_count=0, acked=False,
        next_visible_on=0, tag="t", created_at=0, updated_at=0, change=change,
    )  # fmt: skip


def _queue() -> QueueId:
    return QueueId(f"u-{uuid.uuid4().hex[:10]}", "q", 1)


@pytest.fixture
def lossy(cassandra_store: CassandraStore) -> TimeoutInjectingStore:
    return TimeoutInjectingStore.beside(cassandra_store, lwt_retry=LwtRetry(base_s=0.001))


def _timed_out_once(lossy: TimeoutInjectingStore, primitive: str) -> None:
    assert lossy.injected[primitive] == 1, f"no timeout was injected into {primitive}"
    lossy.stop()


@pytest.mark.parametrize("mode", MODES)
async def test_message_primitives(lossy: TimeoutInjectingStore, mode: Mode) -> None:
    plain, queue = lossy, _queue()
    lossy.inject("insert_messages", mode, times=1)
    assert await lossy.insert_messages(queue, 0, [_row(1, "c1")], 0) is True
    _timed_out_once(lossy, "insert_messages")

    lossy.inject("cas_message", mode, times=1)
    assert await lossy.cas_message(queue, 0, 1, _row(2, "c2"), unsealed=True) is True
    _timed_out_once(lossy, "cas_message")
    assert (await plain.read_message(queue, 0, 0)).change == "c2"  # type: ignore[union-attr]

    # The condition is false now (version 2): a timeout does not turn that into success.
    lossy.inject("cas_message", mode, times=1)
    assert await lossy.cas_message(queue, 0, 1, _row(2, "c3")) is False
    _timed_out_once(lossy, "cas_message")

    lossy.inject("ack_message", mode, times=1)
    assert await lossy.ack_message(queue, 0, 0, 2, "t", 5) is True
    _timed_out_once(lossy, "ack_message")
    stored = await plain.read_message(queue, 0, 0)
    assert stored is not None and stored.acked and stored.version == 3  # acked once

    # A stale receipt stays stale through a timeout.
    lossy.inject("ack_message", mode, times=1)
    assert await lossy.ack_message(queue, 0, 0, 2, "t", 6) is False
    _timed_out_once(lossy, "ack_message")


@pytest.mark.parametrize("mode", MODES)
async def test_markers_are_stored_before_they_are_reported(
    lossy: TimeoutInjectingStore, mode: Mode
) -> None:
    queue = _queue()
    lossy.inject("seal_bucket", mode, times=1)
    assert await lossy.seal_bucket(queue, 3, 100) == 100
    _timed_out_once(lossy, "seal_bucket")
    assert (await lossy.read_bucket(queue, 3)).sealed_at == 100
    assert await lossy.seal_bucket(queue, 3, 200) == 100  # the first seal wins

    lossy.inject("finalize_bucket", mode, times=1)
    await lossy.finalize_bucket(queue, 3, 300)
    _timed_out_once(lossy, "finalize_bucket")
    assert (await lossy.read_bucket(queue, 3)).finalized_at == 300
    # Finalized: a write into it is refused, through a timeout too.
    lossy.inject("insert_messages", mode, times=1)
    assert await lossy.insert_messages(queue, 3, [_row(1, "late", monoton=12)], 400) is False


@pytest.mark.parametrize("mode", MODES)
async def test_counters_and_state(lossy: TimeoutInjectingStore, mode: Mode) -> None:
    queue = _queue()
    lossy.inject("cas_monoton", mode, times=1)
    assert await lossy.cas_monoton(queue, 0, 5) == (True, 5)
    _timed_out_once(lossy, "cas_monoton")
    lossy.inject("cas_monoton", mode, times=1)
    assert await lossy.cas_monoton(queue, 0, 9) == (False, 5)
    _timed_out_once(lossy, "cas_monoton")

    for expected, new in ((0, 1), (1, 2)):
        lossy.inject("cas_pointer", mode, times=1)
        assert await lossy.cas_pointer(queue, "reader", expected, new) is True
        _timed_out_once(lossy, "cas_pointer")
    assert await lossy.read_pointer(queue, "reader") == 2
    lossy.inject("cas_pointer", mode, times=1)
    assert await lossy.cas_pointer(queue, "reader", 0, 1) is False

    lossy.inject("cas_invisibility", mode, times=1)
    assert await lossy.cas_invisibility(queue, 0, InvisibilityState(bucket=4, rev=1)) is True
    _timed_out_once(lossy, "cas_invisibility")
    assert (await lossy.read_invisibility(queue)).bucket == 4


@pytest.mark.parametrize("mode", MODES)
async def test_leases(lossy: TimeoutInjectingStore, mode: Mode) -> None:
    name = f"lease-{uuid.uuid4().hex[:8]}"
    lossy.inject("acquire_lease", mode, times=1)
    assert await lossy.acquire_lease(name, "a", 0, 1000) is True  # insert
    _timed_out_once(lossy, "acquire_lease")
    lossy.inject("acquire_lease", mode, times=1)
    assert await lossy.acquire_lease(name, "a", 500, 1000) is True  # renew
    _timed_out_once(lossy, "acquire_lease")
    assert await lossy.acquire_lease(name, "b", 600, 1000) is False  # held by a
    lossy.inject("acquire_lease", mode, times=1)
    assert await lossy.acquire_lease(name, "b", 1500, 1000) is True  # a's expired: taken over
    _timed_out_once(lossy, "acquire_lease")


@pytest.mark.parametrize("mode", MODES)
async def test_account_key_replacement(lossy: TimeoutInjectingStore, mode: Mode) -> None:
    name = f"acct-{uuid.uuid4().hex[:8]}"
    # Stored values shaped as sealed keys ("v1:"): the session's API server shares this
    # keyspace, and its background pass re-seals any plaintext key it lists, which would
    # change these rows under the test. The store compares values, whatever their shape.
    assert await lossy.insert_account(Account(name=name, keys={"k": "v1:plain"}, created_at=0))
    lossy.inject("replace_key", mode, times=1)
    assert await lossy.replace_key(name, "k", "v1:plain", "v1:sealed") is True
    _timed_out_once(lossy, "replace_key")
    stored = await lossy.read_account(name)
    assert stored is not None and stored.keys == {"k": "v1:sealed"}
    # The condition is false now: a timeout does not make it true.
    lossy.inject("replace_key", mode, times=1)
    assert await lossy.replace_key(name, "k", "v1:plain", "v1:other") is False
    _timed_out_once(lossy, "replace_key")
    # A deleted key is not brought back.
    await lossy.remove_key(name, "k")
    lossy.inject("replace_key", mode, times=1)
    assert await lossy.replace_key(name, "k", "v1:sealed", "v1:again") is False
    _timed_out_once(lossy, "replace_key")
    stored = await lossy.read_account(name)
    assert stored is not None and stored.keys == {}


@pytest.mark.parametrize("mode", MODES)
async def test_keyspace_secrets(lossy: TimeoutInjectingStore, mode: Mode) -> None:
    name = f"secret-{uuid.uuid4().hex[:8]}"
    first = KeyspaceSecret(name=name, value="v-one", created_at=1)
    lossy.inject("insert_secret", mode, times=1)
    assert await lossy.insert_secret(first) is True
    _timed_out_once(lossy, "insert_secret")
    # Another server's create, through a timeout too: not applied, the first one stays.
    lossy.inject("insert_secret", mode, times=1)
    assert await lossy.insert_secret(KeyspaceSecret(name=name, value="v-two")) is False
    _timed_out_once(lossy, "insert_secret")
    assert await lossy.read_secret(name) == first

    rotated = KeyspaceSecret(
        name=name, value="v-three", version=2, previous="v-one", previous_until=9, created_at=1
    )
    lossy.inject("replace_secret", mode, times=1)
    assert await lossy.replace_secret(rotated, 1) is True
    _timed_out_once(lossy, "replace_secret")
    assert await lossy.read_secret(name) == rotated
    stale = KeyspaceSecret(name=name, value="v-four", version=2, previous="v-one")
    lossy.inject("replace_secret", mode, times=1)
    assert await lossy.replace_secret(stale, 1) is False
    _timed_out_once(lossy, "replace_secret")
    assert await lossy.read_secret(name) == rotated


@pytest.mark.parametrize("mode", MODES)
async def test_account_deletion(lossy: TimeoutInjectingStore, mode: Mode) -> None:
    name = f"acct-{uuid.uuid4().hex[:8]}"
    # Sealed-shaped values, for the reason given in test_account_key_replacement.
    assert await lossy.insert_account(Account(name=name, keys={"k": "v1:one"}, created_at=1_000))
    lossy.inject("delete_account", mode, times=1)
    await lossy.delete_account(name, 1_000)
    _timed_out_once(lossy, "delete_account")
    assert await lossy.read_account(name) is None
    # A later account of the name is left alone by a delete of the earlier one, through a
    # timeout too (read back: another account, so not applied, and not sent again).
    assert await lossy.insert_account(Account(name=name, keys={"k": "v1:two"}, created_at=2_000))
    lossy.inject("delete_account", mode, times=1)
    await lossy.delete_account(name, 1_000)
    _timed_out_once(lossy, "delete_account")
    later = await lossy.read_account(name)
    assert later is not None and later.keys == {"k": "v1:two"} and later.created_at == 2_000


@pytest.mark.parametrize("mode", MODES)
async def test_queue_option_updates(lossy: TimeoutInjectingStore, mode: Mode) -> None:
    queue = QueueDefinition(
        account=f"u-{uuid.uuid4().hex[:10]}", name="q", version=1, status="active",
        options=QueueOptions(), created_at=1_000,
    )  # fmt: skip
    assert await lossy.insert_queue(queue) is None
    first = msgspec.structs.replace(queue, options=QueueOptions(delay_seconds=1), options_rev=1)
    lossy.inject("replace_queue", mode, times=1)
    assert await lossy.replace_queue(first, 1, 0) is True  # from null: the first change
    _timed_out_once(lossy, "replace_queue")
    assert await lossy.read_queue(queue.account, "q") == first
    second = msgspec.structs.replace(first, options=QueueOptions(delay_seconds=2), options_rev=2)
    lossy.inject("replace_queue", mode, times=1)
    assert await lossy.replace_queue(second, 1, 1) is True
    _timed_out_once(lossy, "replace_queue")
    # A racing update read revision 1 too: its condition is false now, through a timeout too.
    loser = msgspec.structs.replace(first, options=QueueOptions(delay_seconds=3), options_rev=2)
    lossy.inject("replace_queue", mode, times=1)
    assert await lossy.replace_queue(loser, 1, 1) is False
    _timed_out_once(lossy, "replace_queue")
    assert await lossy.read_queue(queue.account, "q") == second


@pytest.mark.parametrize("mode", MODES)
async def test_sqs_queue_columns_and_tag_changes(lossy: TimeoutInjectingStore, mode: Mode) -> None:
    """The SQS columns (schema 0009) take part in the read-back that resolves a lost answer:
    a tag change whose answer is lost is read back as applied, and a removal of the last tag
    clears the stored tags."""
    options = QueueOptions(
        receive_wait_seconds=20, redrive_allow_policy='{"redrivePermission":"allowAll"}'
    )
    queue = QueueDefinition(
        account=f"u-{uuid.uuid4().hex[:10]}", name="q", version=1, status="active",
        options=options, created_at=1_000, tags={"team": "a"},
    )  # fmt: skip
    lossy.inject("insert_queue", mode, times=1)
    assert await lossy.insert_queue(queue) is None
    _timed_out_once(lossy, "insert_queue")
    assert await lossy.read_queue(queue.account, "q") == queue
    tagged = msgspec.structs.replace(queue, tags={"team": "b", "env": "x"}, options_rev=1)
    lossy.inject("replace_queue", mode, times=1)
    assert await lossy.replace_queue(tagged, 1, 0) is True
    _timed_out_once(lossy, "replace_queue")
    assert await lossy.read_queue(queue.account, "q") == tagged
    cleared = msgspec.structs.replace(tagged, tags={}, options_rev=2, modified_at=5_000)
    lossy.inject("replace_queue", mode, times=1)
    assert await lossy.replace_queue(cleared, 1, 1) is True
    _timed_out_once(lossy, "replace_queue")
    assert await lossy.read_queue(queue.account, "q") == cleared


@pytest.mark.parametrize("mode", MODES)
async def test_sqs_attribute_types_through_a_lost_insert(
    lossy: TimeoutInjectingStore, mode: Mode
) -> None:
    """The attribute types (schema 0010) are written with the message: an insert whose
    answer is lost reads back as applied with them, and a change of the row keeps them."""
    queue = _queue()
    typed = msgspec.structs.replace(
        _row(1, "typed"),
        attributes={"n": "1.5", "b": "AAE="},
        attribute_types={"n": "Number.float", "b": "Binary"},
    )
    lossy.inject("insert_messages", mode, times=1)
    assert await lossy.insert_messages(queue, 0, [typed], 0) is True
    _timed_out_once(lossy, "insert_messages")
    assert await lossy.read_message(queue, 0, 0) == typed
    changed = msgspec.structs.replace(typed, version=2, change="c2", attribute_types={})
    lossy.inject("cas_message", mode, times=1)
    assert await lossy.cas_message(queue, 0, 1, changed) is True
    _timed_out_once(lossy, "cas_message")
    stored = await lossy.read_message(queue, 0, 0)
    assert stored is not None and stored.change == "c2"
    assert stored.attribute_types == typed.attribute_types  # never changed after the insert


async def test_contention_that_outlasts_every_try_is_undecided(
    cassandra_store: CassandraStore,
) -> None:
    lossy = TimeoutInjectingStore.beside(
        cassandra_store, lwt_retry=LwtRetry(attempts=3, base_s=0.001)
    )
    queue = _queue()
    lossy.inject("seal_bucket", "before")  # every try times out unapplied
    with pytest.raises(LwtUndecided):
        await lossy.seal_bucket(queue, 0, 100)
    assert lossy.injected["seal_bucket"] == 3
    assert (await lossy.read_bucket(queue, 0)).sealed_at is None  # and it was not assumed
    assert lossy.lwt_tally.counts[("seal_bucket", "undecided")] == 1
    assert lossy.lwt_tally.counts[("seal_bucket", "timeout_contended")] == 3


@pytest.mark.parametrize(
    "error", [cas_timeout(), Unavailable("injected", consistency=6)], ids=["timeout", "unavail"]
)
async def test_an_insert_whose_answer_is_lost_after_a_consumer_took_it(
    cassandra_store: CassandraStore, error: Exception
) -> None:
    """The write applied and was even consumed before its answer was lost: the put
    succeeded (no second copy), and the consumer's state is not overwritten."""
    plain = cassandra_store
    lossy = TimeoutInjectingStore.beside(plain)
    queue = _queue()
    taken = msgspec.structs.replace(_row(2, "consumer"), delivery_count=1, next_visible_on=10**13)

    async def consumer_takes_it() -> None:
        assert await plain.cas_message(queue, 0, 1, taken)
        raise error

    lossy.inject("insert_messages", "after", times=1, meanwhile=consumer_takes_it)
    assert await lossy.insert_messages(queue, 0, [_row(1, "writer")], 0) is True
    # A second try of the same write is a no-op that reports success.
    assert await lossy.insert_messages(queue, 0, [_row(1, "writer")], 0) is True
    stored = await plain.read_message(queue, 0, 0)
    assert stored is not None and stored.change == "consumer" and stored.delivery_count == 1


class _FailingReadBacks(TimeoutInjectingStore):
    """Its next ``failures`` SERIAL reads (the read backs of unknown outcomes) time out."""

    failures = 0
    reads = 0

    async def _read_serial(self, statement: Any, params: Sequence[Any]) -> list[Any]:
        self.reads += 1
        if self.failures > 0:
            self.failures -= 1
            raise ReadTimeout("injected", consistency=ConsistencyLevel.SERIAL)
        return await super()._read_serial(statement, params)


@pytest.mark.parametrize("mode", MODES)
async def test_a_read_back_that_fails_is_read_again_not_guessed(
    cassandra_store: CassandraStore, mode: Mode
) -> None:
    # While a node dies, the read after a timed-out LWT often fails too: it is read again
    # (never sent again unread, never assumed), and only a read that keeps failing is
    # undecided.
    store = _FailingReadBacks.beside(cassandra_store, lwt_retry=LwtRetry(base_s=0.001))
    queue = _queue()
    assert await store.insert_messages(queue, 0, [_row(1, "c1")], 0) is True
    store.inject("ack_message", mode, times=1)
    store.failures = READ_BACK_TRIES - 1
    assert await store.ack_message(queue, 0, 0, 1, "t", 5) is True
    _timed_out_once(store, "ack_message")
    assert store.failures == 0 and store.reads >= READ_BACK_TRIES
    assert store.seen["ack_message"] == (1 if mode == "after" else 2)  # not re-sent if applied
    row = await store.read_message(queue, 0, 0)
    assert row is not None and row.acked and row.version == 2

    other = _queue()
    assert await store.insert_messages(other, 0, [_row(1, "c2")], 0) is True
    store.inject("ack_message", mode, times=1)
    store.failures = READ_BACK_TRIES
    with pytest.raises(LwtUndecided):
        await store.ack_message(other, 0, 0, 1, "t", 5)
    _timed_out_once(store, "ack_message")
    assert store.seen["ack_message"] == 1  # undecided: not sent again
    row = await store.read_message(other, 0, 0)
    assert row is not None and row.acked is (mode == "after")
