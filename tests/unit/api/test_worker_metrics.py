"""How the workers' process-local /metrics families are combined (cassieq.api.metrics.workers):
counters and histograms summed per label set, a histogram's creation time the earliest, the
background loop's gauges by their own rule; and a sibling's answer read back as sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from cassieq.api.metrics.workers import WorkerMetrics, dump, merge
from cassieq.api.workers import WorkerSlot


def _worker(puts: int, latency: float, running: int, age: float) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    counter = Counter("cassieq_puts", "puts", ["route"], registry=registry)
    counter.labels("a").inc(puts)
    histogram = Histogram("cassieq_latency_seconds", "x", buckets=(0.1, 1), registry=registry)
    histogram.observe(latency)

    class Health:
        def collect(self) -> list[Metric]:
            return [
                GaugeMetricFamily("cassieq_background_running", "r", value=running),
                GaugeMetricFamily("cassieq_background_last_success_age_seconds", "a", value=age),
                GaugeMetricFamily("cassieq_long_poll_waiting", "w", value=2),
            ]

    registry.register(Health())
    return registry


def _values(metrics: list[Metric]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for m in metrics for s in m.samples}


def test_counters_and_histograms_add_up_and_gauges_follow_their_rule() -> None:
    one, two = _worker(3, 0.05, 1, 4.0), _worker(4, 0.5, 0, 9.0)
    merged = merge([dump(one.collect()), dump(two.collect())])
    values = _values(merged)
    assert values[("cassieq_puts_total", (("route", "a"),))] == 7
    assert values[("cassieq_latency_seconds_bucket", (("le", "0.1"),))] == 1
    assert values[("cassieq_latency_seconds_bucket", (("le", "1.0"),))] == 2
    assert values[("cassieq_latency_seconds_count", ())] == 2
    assert abs(values[("cassieq_latency_seconds_sum", ())] - 0.55) < 1e-9
    created = [s.value for m in (*one.collect(), *two.collect()) for s in m.samples
               if s.name == "cassieq_latency_seconds_created"]  # fmt: skip
    assert values[("cassieq_latency_seconds_created", ())] == min(created)
    assert values[("cassieq_background_running", ())] == 0  # one loop is not running
    assert values[("cassieq_background_last_success_age_seconds", ())] == 9.0
    assert values[("cassieq_long_poll_waiting", ())] == 4
    # What is rendered parses back as Prometheus reads it, one family per name.
    text = generate_latest(_Registry(merged)).decode()
    names = [f.name for f in text_string_to_metric_families(text)]
    assert sorted(names) == sorted(set(names))


class _Registry:
    def __init__(self, metrics: list[Metric]) -> None:
        self._metrics = metrics

    def collect(self) -> list[Metric]:
        return self._metrics


def test_a_sibling_answers_its_families_and_a_missing_one_is_left_out(tmp_path: Path) -> None:
    async def scenario() -> tuple[dict[str, float], dict[str, float]]:
        slots = [WorkerSlot(i, 3, str(tmp_path), 1) for i in range(3)]
        first = WorkerMetrics(slots[0], _worker(3, 0.05, 1, 1.0))
        second = WorkerMetrics(slots[1], _worker(4, 0.05, 1, 1.0))
        await first.open()
        await second.open()  # worker 2 never opens: restarting
        try:
            collected = await first.collect()
        finally:
            await first.close()
            await second.close()
        values = _values(collected)
        workers = {k[1][0][1]: v for k, v in values.items() if k[0] == "cassieq_workers"}
        return {"puts": values[("cassieq_puts_total", (("route", "a"),))]}, workers

    puts, workers = asyncio.run(scenario())
    assert puts == {"puts": 7}
    assert workers == {"configured": 3, "answered": 2}
    assert list(tmp_path.iterdir()) == []  # each removed its socket on close
