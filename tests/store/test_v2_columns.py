"""The v2 columns (schema 0005): stored and read back on both stores; rows written before
the migration (the new columns null) read as the defaults."""

from __future__ import annotations

import uuid

from cassieq.model import QueueDefinition, QueueId, QueueOptions
from cassieq.store.base import Store
from cassieq.store.cassandra import CassandraStore
from tests.store.rows import message, taken

V2_OPTIONS = QueueOptions(
    bucket_size=7,
    visibility_timeout_seconds=45,
    delay_seconds=3,
    message_retention_seconds=3600,
    max_message_bytes=1024,
)


def _definition(options: QueueOptions, version: int = 1) -> QueueDefinition:
    return QueueDefinition(
        account=f"v-{uuid.uuid4().hex[:12]}",
        name="q",
        version=version,
        status="active",
        options=options,
        created_at=1234,
    )


async def test_queue_options_round_trip(store: Store) -> None:
    queue = _definition(V2_OPTIONS)
    assert await store.insert_queue(queue) is None
    assert await store.read_queue(queue.account, "q") == queue
    # Inserting it again answers the stored row, v2 options included.
    assert await store.insert_queue(_definition(QueueOptions())) is None  # another account
    assert await store.insert_queue(queue) == queue
    changed = QueueDefinition(
        account=queue.account,
        name="q",
        version=2,
        status="active",
        options=QueueOptions(visibility_timeout_seconds=5, message_retention_seconds=60),
        created_at=1300,
    )
    assert await store.replace_queue(changed, 1)
    assert await store.list_queues(queue.account) == [changed]


async def test_message_columns_round_trip(store: Store, queue: QueueId) -> None:
    row = message(3, attributes={"a": "1", "b": ""})
    assert await store.insert_messages(queue, 0, [row], 1000)
    assert await store.read_message(queue, 0, 3) == row
    delivered = taken(row, now=2500)
    assert delivered.first_delivered_at == 2500
    assert await store.cas_message(queue, 0, 1, delivered, unsealed=True)
    again = taken(delivered, now=4000)  # a redelivery keeps the first delivery time
    assert await store.cas_messages(queue, 0, [(2, again)]) == [True]
    stored = await store.read_message(queue, 0, 3)
    assert stored == again and stored.first_delivered_at == 2500
    assert stored.attributes == {"a": "1", "b": ""}


async def test_rows_written_before_the_migration_read_as_defaults(
    cassandra_store: CassandraStore,
) -> None:
    """Rows as the code before schema 0005 wrote them: its statements, its columns."""
    session, ks = cassandra_store._session, cassandra_store.keyspace
    account = f"old-{uuid.uuid4().hex[:12]}"
    session.execute(
        f"INSERT INTO {ks}.queues (account_name, queue_name, version, status, bucket_size, "
        "max_delivery_count, repair_poll_seconds, finalize_seconds, "
        "delete_buckets_after_finalize, dlq_name, strict_fifo, created_at) "
        "VALUES (%s, 'q', 1, 'active', 20, 5, 5, 15, true, null, true, 99)",
        (account,),
    )
    queue = await cassandra_store.read_queue(account, "q")
    assert queue is not None and queue.options == QueueOptions()
    assert queue.options.visibility_timeout_seconds == 30
    assert queue.options.message_retention_seconds == 14 * 24 * 3600

    qid = str(queue.id)
    session.execute(
        f"INSERT INTO {ks}.messages (queue_id, bucket, monoton, message, version, "
        "delivery_count, acked, dead_lettered, republished_to, next_visible_on, tag, "
        "created_at, updated_at, acked_at, last_change) "
        "VALUES (%s, 0, 0, 'old', 1, 0, false, false, null, 0, 't', 5, 5, null, 'c')",
        (qid,),
    )
    row = await cassandra_store.read_message(queue.id, 0, 0)
    assert row is not None and row.message == "old"
    assert row.attributes == {} and row.first_delivered_at is None
    # And the v2 primitives work on it.
    assert await cassandra_store.cas_messages(queue.id, 0, [(1, taken(row))]) == [True]
    assert await cassandra_store.ack_messages(queue.id, 0, [(0, 2, "nope")], 9) == [False]
