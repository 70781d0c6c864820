"""The store's background rows: leases, deletion jobs, statistics snapshots, redrive tasks."""

from __future__ import annotations

import asyncio
from typing import Any

from cassieq.model import (
    DeletionJob,
    QueueId,
    RedriveTask,
    StatsSnapshot,
)
from cassieq.store.cassandra.execution import (
    APPLIED,
    CONTENDED,
    REJECTED,
    CassandraBase,
)
from cassieq.store.cassandra.lwt import (
    Outcome,
)
from cassieq.store.cassandra.rows import (
    redrive_task_of,
)


class UpkeepRows(CassandraBase):
    # ----------------------------------------------------------------- leases

    async def acquire_lease(self, name: str, owner: str, now: int, ttl_ms: int) -> bool:
        # The TTL only clears rows of owners long gone; expiry is decided by expires_at,
        # on the engine's clock, so tests can move time.
        ttl_s = max(60, ttl_ms * 10 // 1000)
        expires = now + ttl_ms
        current = await self._read_serial(self._q.lease_read, (name,))
        held = current[0] if current else None
        if held is not None and held.owner != owner and held.expires_at > now:
            return False

        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.lease_read, (name,))
            row = rows[0] if rows else None
            if row is not None and row.owner == owner and row.expires_at == expires:
                return APPLIED
            if held is None:
                return CONTENDED if row is None else REJECTED
            unchanged = row is not None and (row.owner, row.expires_at) == (
                held.owner,
                held.expires_at,
            )
            return CONTENDED if unchanged else REJECTED

        params: tuple[Any, ...]
        if held is None:
            statement, params = self._q.lease_insert, (name, owner, expires, ttl_s)
        else:
            statement = self._q.lease_take
            params = (ttl_s, owner, expires, name, held.owner, held.expires_at)
        applied, _ = await self._lwt("acquire_lease", statement, params, resolve)
        return applied

    # ----------------------------------------------------------------- deletion

    async def add_deletion_job(self, job: DeletionJob) -> None:
        q = job.queue
        await self._run(
            self._q.job_insert,
            (str(q), q.account, q.queue, q.version, job.bucket_size, job.created_at),
        )

    async def list_deletion_jobs(self, after: QueueId | None, limit: int) -> list[DeletionJob]:
        if after is None:
            rows = await self._run(self._q.job_page_first, (limit,))
        else:
            rows = await self._run(self._q.job_page_after, (str(after), limit))
        return [
            DeletionJob(
                queue=QueueId(r.account_name, r.queue_name, r.version),
                bucket_size=r.bucket_size,
                created_at=r.created_at,
            )
            for r in rows
        ]

    async def remove_deletion_job(self, job: DeletionJob) -> None:
        await self._run(self._q.job_delete, (str(job.queue),))

    async def delete_queue_state(self, queue: QueueId, buckets: int) -> None:
        qid = str(queue)
        for start in range(0, buckets, 64):
            await asyncio.gather(
                *(
                    self._run(self._q.bucket_drop, (qid, b))
                    for b in range(start, min(start + 64, buckets))
                )
            )
        # Side by side: a deletion job's latency is most of what a deletion pass waits for.
        await asyncio.gather(
            self._run(self._q.monoton_delete, (qid,)),
            self._run(self._q.invisibility_delete, (qid,)),
            *(
                self._run(self._q.pointer_delete, (qid, kind))
                for kind in ("reader", "repair", "retention")
            ),
        )

    # ----------------------------------------------------------------- statistics

    async def write_stats_snapshot(self, snapshot: StatsSnapshot) -> None:
        s, q = snapshot, snapshot.queue
        await self._run(
            self._q.stats_write,
            (
                q.version, s.computed_at, s.published, s.acked, s.dead_lettered, s.in_flight,
                s.backlog, s.delivered, s.delivery_count_histogram, s.oldest_unacked_age_s,
                s.ack_latency_p50_ms, s.ack_latency_p95_ms, s.ack_latency_p99_ms,
                s.rows_scanned, q.account, q.queue,
            ),
        )  # fmt: skip

    async def delete_stats_snapshot(self, account: str, queue: str) -> None:
        await self._run(self._q.stats_delete, (account, queue))

    # ----------------------------------------------------------------- redrive tasks
    async def write_redrive_task(self, queue: QueueId, task: RedriveTask) -> None:
        t = task
        await self._run(
            self._q.redrive_task_write,
            (
                str(queue), t.id, t.status, t.moved, t.total, t.failed, t.target, t.updated_at,
                t.started_at, t.max_per_second,
            ),
        )  # fmt: skip

    async def read_redrive_task(self, queue: QueueId, task_id: str) -> RedriveTask | None:
        rows = await self._run(self._q.redrive_task_read, (str(queue), task_id))
        return redrive_task_of(rows[0]) if rows else None

    async def list_redrive_tasks(self, queue: QueueId) -> list[RedriveTask]:
        rows = await self._run(self._q.redrive_task_list, (str(queue),))
        return [redrive_task_of(r) for r in rows]

    async def cancel_redrive_task(self, queue: QueueId, task_id: str) -> None:
        await self._run(self._q.redrive_task_cancel, (str(queue), task_id))

    async def read_stats_snapshot(self, account: str, queue: str) -> StatsSnapshot | None:
        rows = await self._run(self._q.stats_read, (account, queue))
        if not rows:
            return None
        r = rows[0]
        return StatsSnapshot(
            queue=QueueId(account, queue, int(r.version)),
            computed_at=r.computed_at,
            published=r.published,
            acked=r.acked,
            dead_lettered=r.dead_lettered,
            in_flight=r.in_flight,
            backlog=r.backlog,
            delivered=r.delivered,
            delivery_count_histogram=dict(r.delivery_count_histogram or {}),
            oldest_unacked_age_s=r.oldest_unacked_age_s,
            ack_latency_p50_ms=r.ack_latency_p50_ms,
            ack_latency_p95_ms=r.ack_latency_p95_ms,
            ack_latency_p99_ms=r.ack_latency_p99_ms,
            rows_scanned=r.rows_scanned,
        )
