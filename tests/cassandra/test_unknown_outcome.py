"""An LWT whose answer is lost (write timeout) is resolved by a SERIAL read, not guessed.

Fault injection around the real store: the next conditional statement really runs on
Cassandra and then its answer is lost, or it times out without running; either way
the caller sees the WriteTimeout a coordinator sends when the outcome is unknown.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

import msgspec
import pytest
from cassandra import Unavailable, WriteTimeout

from cassieq.model import MessageRow, QueueId
from cassieq.store.cassandra import CassandraStore


class LossyStore(CassandraStore):
    lose_next: Literal["after_applying", "before_applying"] | None = None
    error: Exception = WriteTimeout("injected", write_type=5)
    meanwhile: Callable[[], Awaitable[None]] | None = None  # runs between apply and the error

    async def _once(self, statement: Any, params: Sequence[Any] | None) -> list[Any]:  # type: ignore[override]
        # The LWT itself is sent with parameters; the resolving SERIAL read without.
        if self.lose_next is not None and params is not None:
            mode, self.lose_next = self.lose_next, None
            if mode == "after_applying":
                await super()._once(statement, params)
                if self.meanwhile is not None:
                    await self.meanwhile()
            raise self.error
        return await super()._once(statement, params)


def _row(version: int, change: str) -> MessageRow:
    return MessageRow(
        monoton=0, message="m", version=version, delivery_count=0, acked=False,
        next_visible_on=0, tag="t", created_at=0, updated_at=0, change=change,
    )  # fmt: skip


async def test_lost_answers_are_resolved_by_reading_at_serial(
    cassandra_store: CassandraStore,
) -> None:
    plain = cassandra_store
    lossy = LossyStore(plain._session, plain.keyspace)
    queue = QueueId(f"u-{uuid.uuid4().hex[:10]}", "q", 1)

    lossy.lose_next = "after_applying"
    assert await lossy.insert_messages(queue, 0, [_row(1, "c1")], 0) is True

    lossy.lose_next = "after_applying"
    assert await lossy.cas_message(queue, 0, 1, _row(2, "c2")) is True
    lossy.lose_next = "before_applying"
    assert await lossy.cas_message(queue, 0, 2, _row(3, "c3")) is False
    assert (await plain.read_message(queue, 0, 0)).change == "c2"  # type: ignore[union-attr]

    lossy.lose_next = "after_applying"
    assert await lossy.cas_monoton(queue, 0, 5) == (True, 5)
    lossy.lose_next = "before_applying"
    applied, _ = await lossy.cas_monoton(queue, 5, 9)
    assert applied is False and await plain.read_monoton(queue) == 5


@pytest.mark.parametrize(
    "error",
    [WriteTimeout("injected", write_type=5), Unavailable("injected", consistency=6)],
    ids=["write-timeout", "unavailable-after-accept"],
)
async def test_an_insert_whose_answer_is_lost_after_a_consumer_took_it(
    cassandra_store: CassandraStore, error: Exception
) -> None:
    """The write applied and was even consumed before its answer was lost: the put
    succeeded (no second copy), and the consumer's state is not overwritten."""
    plain = cassandra_store
    lossy = LossyStore(plain._session, plain.keyspace)
    queue = QueueId(f"u-{uuid.uuid4().hex[:10]}", "q", 1)
    taken = msgspec.structs.replace(_row(2, "consumer"), delivery_count=1, next_visible_on=10**13)

    async def consumer_takes_it() -> None:
        assert await plain.cas_message(queue, 0, 1, taken)

    lossy.meanwhile, lossy.error, lossy.lose_next = consumer_takes_it, error, "after_applying"
    assert await lossy.insert_messages(queue, 0, [_row(1, "writer")], 0) is True
    # A second try of the same write is a no-op that reports success.
    assert await lossy.insert_messages(queue, 0, [_row(1, "writer")], 0) is True
    stored = await plain.read_message(queue, 0, 0)
    assert stored is not None and stored.change == "consumer" and stored.delivery_count == 1
