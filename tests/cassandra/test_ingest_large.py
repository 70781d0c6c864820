"""The pipeline's bulk ingest writes a bucket of large messages in parts (a task runs on a
Spark executor; here its write step runs directly, on the real node)."""

from __future__ import annotations

import uuid

from cassieq.engine import QueueEngine
from cassieq.model import QueueOptions
from cassieq.pipeline.ingest import _write_all
from cassieq.store.cassandra import CassandraStore
from tests.conftest import CassandraNode

SIZE = 250_000
COUNT = 100  # one bucket of 100: 25 MB as one batch, over Cassandra's 16 MiB request limit


async def test_a_bucket_of_large_messages_is_ingested_whole(
    cassandra_node: CassandraNode, cassandra_store: CassandraStore
) -> None:
    engine = QueueEngine(cassandra_store)
    account = f"t-{uuid.uuid4().hex[:12]}"
    await engine.accounts.create(account)
    queue, _ = await engine.create_queue(account, "q", QueueOptions(bucket_size=COUNT))
    payloads = [f"{i:03d}".ljust(SIZE, "x") for i in range(COUNT)]
    # Before the parts: InvalidRequest ("CQL Message of size 25022... bytes exceeds allowed
    # maximum of 16777216 bytes") on every try, and the task failed.
    result = await _write_all(cassandra_node.settings, queue, payloads)
    assert (result.rows, result.reservations) == (COUNT, 1)
    assert result.batches == 4  # 8 MiB parts of 250 KB messages: 33, 33, 33, 1
    stored = await cassandra_store.read_bucket(queue.id, 0)
    assert sorted(m.message for m in stored.messages) == payloads
