"""Prometheus metrics: one registry per app (several apps in one process, as in tests,
never share series), filled by collectors at scrape time and by the request timer."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from cassieq.api.metrics.collectors import BackgroundCollector, QueueCollector
from cassieq.api.metrics.http import RequestTimer, request_histogram
from cassieq.api.metrics.observer import EngineEventsCollector, MetricsObserver
from cassieq.api.metrics.sampler import QueueSampler
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
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.sampler = QueueSampler(
            engine,
            top=settings.metrics_top_queues,
            allow=settings.metrics_queues,
            cache_ms=round(settings.metrics_cache_seconds * 1000),
            wait_s=settings.metrics_scrape_wait_seconds,
        )
        self.requests = request_histogram(self.registry)
        self.registry.register(QueueCollector(self.sampler))
        self.registry.register(EngineEventsCollector(events))
        self.registry.register(BackgroundCollector(health, engine.now))

    async def render(self) -> bytes:
        await self.sampler.refresh()
        return generate_latest(self.registry)


__all__ = ["Metrics", "MetricsObserver", "RequestTimer"]
