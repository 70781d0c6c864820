"""add_prepared builds the very batch the driver's own ``BatchStatement.add`` builds."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from cassandra.query import UNSET_VALUE, BatchStatement, BatchType, PreparedStatement

from cassieq.engine.life.put import new_message
from cassieq.store.cassandra import CassandraStore
from cassieq.store.cassandra.binding import add_prepared
from cassieq.store.cassandra.rows import (
    insert_values,
    message_retire_values,
    message_set_values,
    message_take_values,
    message_values,
)
from cassieq.store.cassandra.statements import MESSAGE_COLUMNS, NEW_MESSAGE_COLUMNS
from tests.store.rows import taken


def _cases(store: CassandraStore) -> list[tuple[PreparedStatement, tuple[Any, ...]]]:
    q = store._q
    row = new_message(41, "body é", 1000, attributes={"k": "v"}, attribute_types={"k": "S"})
    held = taken(row)
    acked = held.retired(3000)
    return [
        (q.bucket_guard, (1000, "a:q:1", 2)),
        (q.message_insert, ("a:q:1", 2, *message_values(row))),
        (q.message_cas, (*message_set_values(held), "a:q:1", 2, held.monoton, 1)),
        (q.message_insert_new, ("a:q:1", 2, *insert_values(row)[1])),
        (q.message_take_unsealed, (*message_take_values(held), "a:q:1", 2, 41, 1)),
        (q.message_retire, (*message_retire_values(acked), "a:q:1", 2, 41, 2)),
        (q.message_cas_unsealed, (*message_set_values(held), "a:q:1", 2, held.monoton, 1)),
        (q.message_ack, (3, 3000, 3000, "token", "a:q:1", 2, 41, 2, held.tag)),
        # A None is written as null; a short sequence is padded with unset values.
        (q.message_ack, (3, None, 3000, "token", "a:q:1", 2, 41)),
    ]


def _batch() -> BatchStatement:
    return BatchStatement(batch_type=BatchType.UNLOGGED)


def test_the_same_batch_as_the_driver_builds(cassandra_store: CassandraStore) -> None:
    cases = _cases(cassandra_store)
    ours, theirs = _batch(), _batch()
    for statement, values in cases + cases:
        add_prepared(ours, statement, values)
        theirs.add(statement, values)
    assert ours._statements_and_parameters == theirs._statements_and_parameters
    assert ours.routing_key == theirs.routing_key and ours.routing_key is not None
    assert ours.keyspace == theirs.keyspace
    # The unset values are the driver's marker itself (it writes no cell for them).
    assert any(v is UNSET_VALUE for _, _, vs in ours._statements_and_parameters for v in vs)


def test_bad_values_get_the_drivers_errors(cassandra_store: CassandraStore) -> None:
    q = cassandra_store._q
    batch = _batch()
    add_prepared(batch, q.bucket_guard, (1000, "a:q:1", 2))
    with pytest.raises(TypeError, match="bucket"):
        add_prepared(batch, q.bucket_guard, (1000, "a:q:1", "not a number"))
    with pytest.raises(ValueError, match="Too many arguments"):
        add_prepared(batch, q.bucket_guard, (1000, "a:q:1", 2, 3))
    assert len(batch) == 1


def test_a_plain_new_message_leaves_out_only_columns_the_full_insert_leaves_unset() -> None:
    plain = new_message(41, "body", 1000, attributes={"k": "v"}, attribute_types={"k": "S"})
    bare = new_message(42, "body", 1000)
    copy = msgspec.structs.replace(plain, dead_letter_source="source")
    assert insert_values(plain)[0] and insert_values(bare)[0] and not insert_values(copy)[0]
    full = [c.strip() for c in MESSAGE_COLUMNS.split(",")]
    short = [c.strip() for c in NEW_MESSAGE_COLUMNS.split(",")]
    for row in (plain, bare):
        values = dict(zip(full, message_values(row), strict=True))
        assert {c for c in full if c not in short} <= {
            c for c, v in values.items() if v is UNSET_VALUE
        }
        # The columns it keeps carry the same values, in its own order.
        assert list(insert_values(row)[1]) == [values[c] for c in short]
