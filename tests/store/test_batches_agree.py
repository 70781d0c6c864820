"""The two stores answer alike: random sequences of batch changes, acks and seals, run on
the memory store and the real Cassandra store side by side, get the same answers and
leave the same rows (the memory store is what dev mode and the fast tests trust)."""

from __future__ import annotations

import random
import uuid

import msgspec
import pytest

from cassieq.model import MessageRow, QueueId
from cassieq.store.base import Store
from cassieq.store.cassandra import CassandraStore
from cassieq.store.memory import MemoryStore
from tests.store.rows import message, taken

MESSAGES = 6
STEPS = 25


def _comparable(row: MessageRow) -> MessageRow:
    # An ack's change token is the store's own (Cassandra draws one per call).
    return msgspec.structs.replace(row, change="")


async def _rows(store: Store, queue: QueueId) -> list[MessageRow]:
    return [_comparable(m) for m in (await store.read_bucket(queue, 0)).messages]


def _batch_change(
    rng: random.Random, current: dict[int, MessageRow]
) -> list[tuple[int, MessageRow]]:
    """Some messages, each expected at its current version or at a stale one."""
    chosen = rng.sample(sorted(current), rng.randint(1, MESSAGES))
    entries = []
    for monoton in chosen:
        row = current[monoton]
        expected = row.version if rng.random() < 0.7 else row.version - rng.randint(1, 2)
        entries.append((expected, taken(row, now=rng.randint(2000, 9000))))
    return entries


def _batch_ack(rng: random.Random, current: dict[int, MessageRow]) -> list[tuple[int, int, str]]:
    chosen = rng.sample(sorted(current), rng.randint(1, MESSAGES))
    return [
        (
            m,
            current[m].version if rng.random() < 0.8 else current[m].version + 1,
            current[m].tag if rng.random() < 0.8 else "other-tag",
        )
        for m in chosen
    ]


@pytest.mark.parametrize("seed", range(6))
async def test_random_sequences_agree(cassandra_store: CassandraStore, seed: int) -> None:
    rng = random.Random(seed)
    memory = MemoryStore()
    stores: tuple[Store, Store] = (memory, cassandra_store)
    queue = QueueId(f"agree-{uuid.uuid4().hex[:10]}", "q", 1)
    rows = [message(m, attributes={"n": str(m)} if m % 2 else {}) for m in range(MESSAGES)]
    for store in stores:
        assert await store.insert_messages(queue, 0, rows, 1000)
    applied = mixed = 0
    for step in range(STEPS):
        current = {m.monoton: m for m in (await memory.read_bucket(queue, 0)).messages}
        kind = rng.choices(["cas", "cas_unsealed", "ack", "seal"], weights=[4, 4, 3, 1])[0]
        # Drawn once: both stores get the very same entries (change tokens included).
        changes = _batch_change(rng, current)
        acks = _batch_ack(rng, current)
        answers: list[list[bool] | list[int]] = []
        for store in stores:
            if kind == "seal":
                answers.append([await store.seal_bucket(queue, 0, 1500 + step)])
            elif kind == "ack":
                answers.append(await store.ack_messages(queue, 0, acks, 3000 + step))
            else:
                unsealed = kind == "cas_unsealed"
                answers.append(await store.cas_messages(queue, 0, changes, unsealed=unsealed))
        assert answers[0] == answers[1], f"step {step} ({kind}): memory and Cassandra differ"
        applied += sum(a is True for a in answers[0])
        mixed += kind != "seal" and True in answers[0] and False in answers[0]
        assert await _rows(memory, queue) == await _rows(cassandra_store, queue), f"step {step}"
    # The sequence did change something, and some batch had both kinds of entries.
    assert applied > 0 and mixed > 0
