"""Prometheus metrics: registries per app (several apps in one process, as in tests,
never share series), filled by collectors at scrape time and by the request timer.

Two registries: the per-queue figures, read from the store (the same on every server), and
this process's own (requests, engine events, background loop), which a worker of
`cassieq serve --workers N` adds up with its siblings' (cassieq.api.metrics.workers)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric

from cassieq.api.metrics.collectors import BackgroundCollector, LongPollCollector, QueueCollector
from cassieq.api.metrics.http import RequestTimer, request_histogram
from cassieq.api.metrics.observer import EngineEventsCollector, MetricsObserver, only_labelled
from cassieq.api.metrics.sampler import QueueSampler
from cassieq.api.metrics.workers import WorkerIdentity, WorkerMetrics
from cassieq.api.workers import WorkerSlot
from cassieq.config import Settings
from cassieq.engine import QueueEngine
from cassieq.engine.worker import LoopHealth


class Metrics:
    """``events``: the observer the engine was built with (its LWT outcomes, deliveries,
    dead letters and repair moves)."""

    def __init__(
        self,
        settings: Settings,
        engine: QueueEngine,
        health: LoopHealth,
        events: MetricsObserver,
        worker: WorkerSlot | None = None,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=False)  # the queues'
        self.local = CollectorRegistry(auto_describe=False)  # this process's
        self.sampler = QueueSampler(
            engine,
            top=settings.metrics_top_queues,
            allow=settings.metrics_queues,
            cache_ms=round(settings.metrics_cache_seconds * 1000),
            wait_s=settings.metrics_scrape_wait_seconds,
        )
        self.requests = request_histogram(self.local)
        self.registry.register(QueueCollector(self.sampler))
        self.local.register(EngineEventsCollector(events))
        self.local.register(BackgroundCollector(health, engine.now))
        self.local.register(LongPollCollector(engine.long_polls_waiting))
        self.workers: WorkerMetrics | None = None
        if worker is not None:
            self.local.register(WorkerIdentity(worker))
            self.workers = WorkerMetrics(worker, self.local)

    async def open(self) -> None:
        if self.workers is not None:
            await self.workers.open()

    async def close(self) -> None:
        await self.sampler.close()  # a refresh still running
        if self.workers is not None:
            await self.workers.close()

    async def render(self) -> bytes:
        sample = await self.sampler.refresh()
        every = list(self.local.collect()) if self.workers is None else await self.workers.collect()
        # Per-subscription counts only for the queues the sample labels (observer.py).
        labelled = {(q.account, q.queue) for q in sample.queues}
        return generate_latest(self.registry) + generate_latest(
            _Families(only_labelled(every, labelled))
        )


class _Families:
    """Families already collected, shaped as a registry for generate_latest."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> list[Metric]:
        return self._families


__all__ = ["Metrics", "MetricsObserver", "RequestTimer"]
