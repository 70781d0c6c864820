"""Tenants' queue churn keeps the background pass's reads bounded on a real node (#40
finding 1): what Cassandra read for each request, traced (tests/cassandra/traced_reads.py).

Before: every deleted queue left a row, then a row tombstone, in the one deletion_jobs
partition that every server listed whole on every pass (1,037 to 2,037 tombstones read a
pass, Cassandra's warning each time; at 100,000 the pass fails, /ready 503 everywhere),
and every queue row deleted or re-created held four null cells, each a tombstone in every
listing of its account's directory.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.engine import FakeClock, QueueEngine
from cassieq.model import QueueOptions
from cassieq.store.cassandra import CassandraStore, apply_schema, connect, default_schema_dir
from tests.cassandra.traced_reads import ReadCost, TracedReads
from tests.conftest import TEST_KEYSPACE, CassandraNode
from tests.engine.jobs import pending_jobs

# The most a single request of a pass may read: a page of a bucket read (BUCKET_PAGE_ROWS),
# and a handful of tombstones (a dropped bucket's range tombstone is two markers).
MAX_LIVE_ROWS = 256
MAX_TOMBSTONES = 16
# The old layout's passes read a tombstone per deletion not yet compacted (1,037 to 2,037
# a pass over 5,000): at 2,000 the bound is still crossed a hundred times over, in a
# third of the 2 minutes 5,000 took in CI.
DELETIONS = 2_000
NAMES = 20  # each name deleted DELETIONS / NAMES times: the directory stays 20 rows
ROUND = 500  # deletions between two looks at /ready
TOKEN = "tombstones-operator-token"
PASS_WAIT_S = 120.0


@pytest.fixture
def traced_store(cassandra_store: CassandraStore) -> Iterator[tuple[CassandraStore, TracedReads]]:
    s = Settings.from_env(keyspace=cassandra_store.keyspace)
    cluster, session = connect(s.cassandra_hosts, s.cassandra_port)
    traced = TracedReads(session)
    try:
        yield CassandraStore(session, cassandra_store.keyspace), traced
    finally:
        cluster.shutdown()


async def test_queue_rows_hold_no_tombstone_cells_whatever_their_changes(
    cassandra_store: CassandraStore, traced_store: tuple[CassandraStore, TracedReads]
) -> None:
    engine = QueueEngine(cassandra_store, FakeClock())
    account = f"tomb-{uuid.uuid4().hex[:10]}"
    await engine.accounts.create(account)
    await engine.create_queue(account, "dlq", QueueOptions())
    for i in range(40):
        name = f"q{i:02}"
        await engine.create_queue(account, name, QueueOptions(dlq_name="dlq"), tags={"t": "x"})
        await engine.update_queue(account, name, {"dlq_name": None})  # the dlq cleared
        await engine.retag_queue(account, name, {}, ["t"])  # the last tag removed
        await engine.delete_queue(account, name)
        if i % 2:
            await engine.create_queue(account, name, QueueOptions())  # re-created

    store, traced = traced_store
    rows = await store.list_queues(account)
    assert len(rows) == 41
    (cost,) = traced.costs()
    assert (cost.live_rows, cost.tombstones) == (41, 0), cost
    # What the rows say is what was written: none is none.
    again = {q.name: q for q in await cassandra_store.list_queues(account)}
    assert again["q01"].options.dlq_name is None and again["q01"].tags == {}
    assert again["q02"].status == "deleted" and again["q02"].options.dlq_name is None


@pytest.fixture
def quiet_keyspace(cassandra_node: CassandraNode) -> str:
    """A keyspace of this test's own, empty: its passes read this test's rows only (on the
    shared one they would repair every queue every other test left)."""
    keyspace = f"{TEST_KEYSPACE}_bg"[:48]
    s = cassandra_node.settings
    cassandra_node.session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=120)
    apply_schema(cassandra_node.session, keyspace, s.replication, default_schema_dir())
    return keyspace


def _worst(costs: list[ReadCost]) -> dict[str, Any]:
    by_rows = max(costs, key=lambda c: c.live_rows)
    by_tombstones = max(costs, key=lambda c: c.tombstones)
    return {
        "reads": len(costs),
        "most_rows": (by_rows.live_rows, by_rows.cql),
        "most_tombstones": (by_tombstones.tombstones, by_tombstones.cql),
    }


async def test_2000_queue_deletions_keep_every_background_read_bounded_and_ready(
    cassandra_node: CassandraNode, quiet_keyspace: str
) -> None:
    s = cassandra_node.settings
    app_cluster, app_session = connect(s.cassandra_hosts, s.cassandra_port)
    tenant_cluster, tenant_session = connect(s.cassandra_hosts, s.cassandra_port)
    traced = TracedReads(app_session)
    clock = FakeClock()
    settings = Settings(admin_token=TOKEN, ready_background_max_age_seconds=30.0)
    app = create_app(
        settings,
        CassandraStore(app_session, quiet_keyspace),
        clock=clock,
        background=True,
        background_tick_seconds=0.05,
    )
    tenant = QueueEngine(CassandraStore(tenant_session, quiet_keyspace), clock, instance_id="t")
    account = "churner"
    await tenant.accounts.create(account)
    gate = asyncio.Semaphore(16)
    started = time.monotonic()
    costs: list[ReadCost] = []
    try:
        with TestClient(app=app) as client:
            health = app.state.cassieq.background

            def passes_since(ticks: int) -> None:
                """Wait for two passes after ``ticks`` were counted (the first may have
                begun before): bounded, a loop that stops passing fails the test."""
                deadline = time.monotonic() + PASS_WAIT_S
                while health.ticks < ticks + 2:
                    assert time.monotonic() < deadline, "the background loop stopped passing"
                    time.sleep(0.02)

            async def churn(name: str, times: int) -> None:
                async with gate:
                    for _ in range(times):
                        await tenant.create_queue(account, name, QueueOptions())
                        await tenant.delete_queue(account, name)

            # Each round's jobs become visible when the clock moves past their grace, and
            # the passes take them while the next round churns.
            moved = health.ticks
            for _ in range(DELETIONS // ROUND):
                await asyncio.gather(*(churn(f"q{n:03}", ROUND // NAMES) for n in range(NAMES)))
                passes_since(moved)
                answer = client.get("/ready")
                assert answer.status_code == 200, answer.text
                assert health.failures == 0
                clock.advance(tenant.ctx.tuning.deletion_grace_ms / 1000 + 1)
                moved = health.ticks
                costs += traced.costs()
            churned = time.monotonic() - started
            for _ in range(60):  # the jobs left, a few passes each at most
                if not await pending_jobs(tenant):
                    break
                moved = health.ticks
                passes_since(moved)
                assert client.get("/ready").status_code == 200
            assert await pending_jobs(tenant) == []
            assert health.failures == 0
            costs += traced.costs()
    finally:
        app_cluster.shutdown()
        tenant_cluster.shutdown()

    worst, took = _worst(costs), time.monotonic() - started
    print(f"\n{DELETIONS} deletions: churn {churned:.1f} s, all done {took:.1f} s;")
    print(f"traced reads of the passes: {worst}")
    assert all(c.live_rows <= MAX_LIVE_ROWS for c in costs), worst
    assert all(c.tombstones <= MAX_TOMBSTONES for c in costs), worst
    assert traced.warnings == []
    # The churn was what it says: each name deleted DELETIONS / NAMES times.
    rows = await CassandraStore(cassandra_node.session, quiet_keyspace).list_queues(account)
    assert {(q.status, q.version) for q in rows} == {("deleted", 1 + DELETIONS // NAMES)}
    assert len(rows) == NAMES
