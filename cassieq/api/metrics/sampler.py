"""Per-queue figures for /metrics, read at scrape time and kept for a short while.

Ranking queues by depth needs every queue's statistics, so a scrape reads them all (a
bounded number of reads each, cassieq.engine.stats), a few queues at a time; the result
is kept for CASSIEQ_METRICS_CACHE_SECONDS and concurrent scrapes share one refresh, so
any number of Prometheus servers costs Cassandra one pass per period. A scrape waits for a
refresh at most CASSIEQ_METRICS_SCRAPE_WAIT_SECONDS: with many queues (or a slow cluster)
a pass can outlast Prometheus's scrape timeout (10 s by default), and then the scrape
answers the previous sample while the pass goes on for the next one. Only the top N by
depth and the allow-listed queues become labelled series (bounded cardinality: one
tenant's thousands of queues cannot blow up the time-series database); the sums cover
every queue.

Subscriptions (issue 36) are read for those labelled queues only, once ranked: one listing
of a queue's subscriptions each (the engine's ``subscriptions.list``, which reads each
one's lag and oldest unread message), under the same limit of reads at once. A queue has
at most MAX_SUBSCRIPTIONS_PER_QUEUE of them, so their series are bounded as the queues'.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field, replace

import structlog

from cassieq.engine import QueueEngine
from cassieq.engine.errors import QueueNotFound
from cassieq.model import QueueDefinition, Statistics

log = structlog.get_logger("cassieq.metrics")

READS_AT_ONCE = 8
# CASSIEQ_METRICS_SCRAPE_WAIT_SECONDS's default.
WAIT_S = 5.0


@dataclass(frozen=True)
class SubscriptionSample:
    name: str
    lag: int  # messages after its committed position (every partition's)
    oldest_unread_age_s: float | None  # of the first of them still stored; None: none


@dataclass(frozen=True)
class QueueSample:
    account: str
    queue: str
    stats: Statistics
    # Buckets between the reader pointer and the invisibility pointer, and the repair
    # pointer: a lag that keeps growing is a stalled queue.
    invisibility_lag: int
    repair_lag: int
    # A queue of many partitions: each partition's (invisibility, repair) lags; the two
    # above are their largest (a stall in any partition shows).
    partition_lags: tuple[tuple[int, int], ...] = ()
    subscriptions: tuple[SubscriptionSample, ...] = ()


@dataclass(frozen=True)
class AccountLoad:
    """An account's messages over all its queues, as the sample read them (the quotas'
    figures: cassieq.api.quotas)."""

    stored: int = 0  # visible, in flight, delayed, awaiting their dead-letter move
    in_flight: int = 0


@dataclass(frozen=True)
class Sample:
    queues: list[QueueSample] = field(default_factory=list)
    # Every queue read, its figures summed (labelled series are only for ``queues``).
    total_queues: int = 0
    total_depth: int = 0
    max_invisibility_lag: int = 0
    max_repair_lag: int = 0
    # Queues whose statistics could not be read this time; False: the listing failed.
    errors: int = 0
    listed: bool = True
    # How long reading it took (what a refresh costs a scrape).
    seconds: float = 0.0
    # Every account's sums over the queues read (no series: the per-account quotas' figures).
    accounts: dict[str, AccountLoad] = field(default_factory=dict)


class QueueSampler:
    def __init__(
        self,
        engine: QueueEngine,
        *,
        top: int,
        allow: tuple[str, ...],
        cache_ms: int,
        wait_s: float = WAIT_S,
    ) -> None:
        self._engine = engine
        self._top = top
        self._allow = frozenset(allow)
        self._cache_ms = cache_ms
        self._wait_s = wait_s
        self._refreshing: asyncio.Task[None] | None = None
        self._taken_at: int | None = None
        self.sample = Sample(listed=False)

    async def refresh(self) -> Sample:
        """The sample, read again when older than the cache period (engine clock); the
        previous one when the pass takes longer than ``wait_s`` (it goes on meanwhile)."""
        now = self._engine.now()
        if self._taken_at is not None and now - self._taken_at < self._cache_ms:
            return self.sample
        if self._refreshing is None:
            self._refreshing = asyncio.get_running_loop().create_task(self._refresh())
        # Shielded: a scrape that stops waiting (or is cancelled) leaves the pass running.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._refreshing), self._wait_s)
        return self.sample

    async def settle(self) -> None:
        """Wait for the pass under way, if any, to end."""
        if self._refreshing is not None:
            await asyncio.shield(self._refreshing)

    async def close(self) -> None:
        if self._refreshing is not None:
            self._refreshing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refreshing

    async def _refresh(self) -> None:
        try:
            began = time.perf_counter()
            sample = await self._read()
            self.sample = replace(sample, seconds=time.perf_counter() - began)
            self._taken_at = self._engine.now()
        finally:
            self._refreshing = None

    async def _read(self) -> Sample:
        try:
            queues = [
                q
                for account in await self._engine.account_names()
                for q in await self._engine.list_queues(account)
            ]
        except Exception:
            # The store does not answer: no queue series this time (the rest of /metrics,
            # the LWT and request figures, still says why).
            log.warning("metrics_queue_listing_failed", exc_info=True)
            return Sample(listed=False)
        limit = asyncio.Semaphore(READS_AT_ONCE)
        read = await asyncio.gather(*(self._one(q, limit) for q in queues))
        samples = [s for s in read if s is not None]
        ranked = sorted(samples, key=lambda s: (-s.stats.visible, s.account, s.queue))
        chosen = {(s.account, s.queue) for s in ranked[: self._top]}
        chosen |= {(s.account, s.queue) for s in samples if f"{s.account}/{s.queue}" in self._allow}
        shown = [s for s in ranked if (s.account, s.queue) in chosen]
        subscribed = await asyncio.gather(*(self._subscriptions(s, limit) for s in shown))
        return Sample(
            queues=[s for s, _ in subscribed],
            total_queues=len(samples),
            total_depth=sum(s.stats.visible for s in samples),
            max_invisibility_lag=max((s.invisibility_lag for s in samples), default=0),
            max_repair_lag=max((s.repair_lag for s in samples), default=0),
            errors=len(read) - len(samples) + sum(1 for _, read_ok in subscribed if not read_ok),
            accounts=_by_account(samples),
        )

    async def _one(self, queue: QueueDefinition, limit: asyncio.Semaphore) -> QueueSample | None:
        async with limit:
            try:
                stats, pointers = await asyncio.gather(
                    self._engine.queue_statistics(queue),
                    self._engine.inspect_partition_pointers(queue),
                )
            except Exception:
                # A queue deleted meanwhile, or a read that failed: the others still count.
                log.warning(
                    "metrics_queue_read_failed",
                    account=queue.account,
                    queue=queue.name,
                    exc_info=True,
                )
                return None
        return QueueSample(
            account=queue.account,
            queue=queue.name,
            stats=stats,
            invisibility_lag=max(p.invisibility_lag for p in pointers),
            repair_lag=max(p.repair_lag for p in pointers),
            partition_lags=tuple((p.invisibility_lag, p.repair_lag) for p in pointers)
            if len(pointers) > 1
            else (),
        )

    async def _subscriptions(
        self, sample: QueueSample, limit: asyncio.Semaphore
    ) -> tuple[QueueSample, bool]:
        """``sample`` with its queue's subscriptions, and False when they could not be read
        (its queue's own figures stay; it counts as a read error)."""
        async with limit:
            try:
                found = await self._engine.subscriptions.list(sample.account, sample.queue)
            except QueueNotFound:
                return sample, True  # deleted since its statistics were read: none left
            except Exception:
                log.warning(
                    "metrics_subscriptions_read_failed",
                    account=sample.account,
                    queue=sample.queue,
                    exc_info=True,
                )
                return sample, False
        now = self._engine.now()
        return replace(
            sample,
            subscriptions=tuple(
                SubscriptionSample(
                    name=info.definition.name,
                    lag=info.lag,
                    oldest_unread_age_s=None
                    if info.oldest_unread_at is None
                    else max(0, now - info.oldest_unread_at) / 1000,
                )
                for info in found
            ),
        ), True


def _by_account(samples: list[QueueSample]) -> dict[str, AccountLoad]:
    stored: dict[str, int] = {}
    in_flight: dict[str, int] = {}
    for s in samples:
        stored[s.account] = stored.get(s.account, 0) + max(0, s.stats.size)
        in_flight[s.account] = in_flight.get(s.account, 0) + s.stats.in_flight
    return {a: AccountLoad(stored[a], in_flight[a]) for a in stored}
