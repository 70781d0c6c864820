"""A bucket partition is read in pages: no single response holds a whole large bucket."""

from __future__ import annotations

import uuid
from typing import Any

from cassieq.engine.life.put import new_message
from cassieq.model import QueueId
from cassieq.store.cassandra import CassandraStore
from cassieq.store.cassandra.store import BUCKET_PAGE_ROWS


class _RecordingSession:
    """The real session, noting the page size each request asked for."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.fetch_sizes: list[int | None] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)

    def execute_async(self, statement: Any, *args: Any, **kwargs: Any) -> Any:
        self.fetch_sizes.append(getattr(statement, "fetch_size", None))
        return self.session.execute_async(statement, *args, **kwargs)


async def test_a_bucket_larger_than_a_page_is_read_whole_in_pages(
    cassandra_store: CassandraStore,
) -> None:
    queue = QueueId(f"page-{uuid.uuid4().hex[:10]}", "q", 1)
    count = BUCKET_PAGE_ROWS * 2 + 37  # three pages
    rows = [new_message(m, f"m{m}", 0) for m in range(count)]
    for start in range(0, count, 100):
        assert await cassandra_store.insert_messages(queue, 0, rows[start : start + 100], 0)
    assert await cassandra_store.seal_bucket(queue, 0, 5) == 5

    recording = _RecordingSession(cassandra_store._session)
    store = CassandraStore(recording, cassandra_store.keyspace)
    snap = await store.read_bucket(queue, 0)
    assert [m.monoton for m in snap.messages] == list(range(count))
    assert snap.sealed_at == 5 and snap.finalized_at is None
    assert recording.fetch_sizes == [BUCKET_PAGE_ROWS]  # asked for in pages

    # The coordinator answers one page per response at that size: the rows above took three.
    bound = store._q.bucket_read.bind((str(queue), 0))
    bound.fetch_size = BUCKET_PAGE_ROWS
    first = recording.session.execute(bound)
    assert len(first.current_rows) == BUCKET_PAGE_ROWS and first.has_more_pages


async def test_an_empty_bucket_reads_as_empty(cassandra_store: CassandraStore) -> None:
    queue = QueueId(f"page-{uuid.uuid4().hex[:10]}", "q", 1)
    snap = await cassandra_store.read_bucket(queue, 3)
    assert (snap.bucket, snap.sealed_at, snap.messages) == (3, None, ())
