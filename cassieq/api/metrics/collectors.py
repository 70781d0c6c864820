"""prometheus-client collectors reading what the app already keeps: the queue sample
(refreshed by the /metrics route before the registry is rendered: collectors are
synchronous, the statistics are not) and the background loop's health (the engine's events:
observer.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from cassieq.api.metrics.sampler import QueueSample, QueueSampler
from cassieq.engine.worker import LoopHealth

QUEUE_LABELS = ["account", "queue"]
SUBSCRIPTION_LABELS = [*QUEUE_LABELS, "subscription"]

# (name, help, figure of a queue's sample)
_GAUGES: list[tuple[str, str, Callable[[QueueSample], float]]] = [
    ("cassieq_queue_depth", "Messages visible now (deliverable).", lambda s: s.stats.visible),
    (
        "cassieq_queue_size",
        "Messages in the queue (published - acked - gone).",
        lambda s: s.stats.size,
    ),
    (
        "cassieq_queue_in_flight",
        "Messages delivered and in their lease.",
        lambda s: s.stats.in_flight,
    ),
    (
        "cassieq_queue_delayed",
        "Messages not yet visible, never delivered.",
        lambda s: s.stats.delayed,
    ),
    (
        "cassieq_queue_oldest_message_age_seconds",
        "Age of the oldest message still in the queue (0: none).",
        lambda s: s.stats.oldest_message_age_s or 0.0,
    ),
    (
        "cassieq_queue_invisibility_lag_buckets",
        "Reader pointer minus invisibility pointer, in buckets (the largest of the queue's "
        "partitions).",
        lambda s: s.invisibility_lag,
    ),
    (
        "cassieq_queue_repair_lag_buckets",
        "Reader pointer minus repair pointer, in buckets (a growing lag: a stalled queue; the "
        "largest of the queue's partitions).",
        lambda s: s.repair_lag,
    ),
]

# Cumulative per queue, over every server (from the queue's own statistics): a queue
# deleted and made again starts from 0, which Prometheus reads as a counter reset.
_COUNTERS: list[tuple[str, str, Callable[[QueueSample], float]]] = [
    ("cassieq_queue_messages_published", "Messages put.", lambda s: s.stats.published),
    ("cassieq_queue_messages_delivered", "Deliveries (receives).", lambda s: s.stats.delivered),
    ("cassieq_queue_messages_acked", "Messages acked.", lambda s: s.stats.acked),
    (
        "cassieq_queue_messages_dead_lettered",
        "Messages moved to the dead-letter queue.",
        lambda s: s.stats.dead_lettered,
    ),
    (
        "cassieq_queue_messages_expired",
        "Messages past retention or purged.",
        lambda s: s.stats.expired,
    ),
]


class QueueCollector:
    def __init__(self, sampler: QueueSampler) -> None:
        self._sampler = sampler

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        sample = self._sampler.sample
        for name, text, figure in _GAUGES:
            gauge = GaugeMetricFamily(name, text, labels=QUEUE_LABELS)
            for s in sample.queues:
                gauge.add_metric([s.account, s.queue], figure(s))
            yield gauge
        for name, text, figure in _COUNTERS:
            counter = CounterMetricFamily(name, text, labels=QUEUE_LABELS)
            for s in sample.queues:
                counter.add_metric([s.account, s.queue], figure(s))
            yield counter
        partition_lag = GaugeMetricFamily(
            "cassieq_queue_partition_lag_buckets",
            "Pointer lag behind the reader of each partition of a queue of many partitions.",
            labels=[*QUEUE_LABELS, "partition", "pointer"],
        )
        for s in sample.queues:
            for partition, (invisibility, repair) in enumerate(s.partition_lags):
                labels = [s.account, s.queue, str(partition)]
                partition_lag.add_metric([*labels, "invisibility"], invisibility)
                partition_lag.add_metric([*labels, "repair"], repair)
        yield partition_lag
        yield from _subscription_gauges(sample.queues)
        yield GaugeMetricFamily(
            "cassieq_queues", "Active queues read by the last sample.", value=sample.total_queues
        )
        yield GaugeMetricFamily(
            "cassieq_queues_depth", "Visible messages of every queue.", value=sample.total_depth
        )
        lag = GaugeMetricFamily(
            "cassieq_pointer_lag_max_buckets",
            "Largest pointer lag behind the reader over every queue.",
            labels=["pointer"],
        )
        lag.add_metric(["invisibility"], sample.max_invisibility_lag)
        lag.add_metric(["repair"], sample.max_repair_lag)
        yield lag
        yield GaugeMetricFamily(
            "cassieq_metrics_queue_read_errors",
            "Queues whose statistics, or subscriptions, could not be read by the last sample.",
            value=sample.errors,
        )
        yield GaugeMetricFamily(
            "cassieq_metrics_sample_seconds",
            "How long the last refresh of the per-queue figures took.",
            value=sample.seconds,
        )
        yield GaugeMetricFamily(
            "cassieq_metrics_queues_listed",
            "1 when the last sample could list the queues, 0 when the store did not answer.",
            value=1 if sample.listed else 0,
        )


def _subscription_gauges(queues: list[QueueSample]) -> Iterator[Metric]:
    """Each subscription of the labelled queues: its lag and its oldest unread message's
    age (0 when it has none, as cassieq_queue_oldest_message_age_seconds)."""
    lag = GaugeMetricFamily(
        "cassieq_subscription_lag_messages",
        "Messages after the subscription's committed position (every partition's).",
        labels=SUBSCRIPTION_LABELS,
    )
    age = GaugeMetricFamily(
        "cassieq_subscription_oldest_unread_age_seconds",
        "Age of the oldest message after the subscription's committed position (0: none).",
        labels=SUBSCRIPTION_LABELS,
    )
    for s in queues:
        for sub in s.subscriptions:
            labels = [s.account, s.queue, sub.name]
            lag.add_metric(labels, sub.lag)
            age.add_metric(labels, sub.oldest_unread_age_s or 0.0)
    yield lag
    yield age


class BackgroundCollector:
    def __init__(self, health: LoopHealth, now_ms: Callable[[], int]) -> None:
        self._health = health
        self._now_ms = now_ms

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        h = self._health
        yield GaugeMetricFamily(
            "cassieq_background_running", "1 while the background loop runs.", value=int(h.running)
        )
        yield CounterMetricFamily(
            "cassieq_background_ticks", "Background passes completed.", value=h.ticks
        )
        yield CounterMetricFamily(
            "cassieq_background_failures", "Background passes that failed.", value=h.failures
        )
        if h.last_success_ms is not None:
            yield GaugeMetricFamily(
                "cassieq_background_last_success_age_seconds",
                "Seconds since the last background pass completed.",
                value=max(0, self._now_ms() - h.last_success_ms) / 1000,
            )


class LongPollCollector:
    """Receives waiting now (long polls) on this server: summed over the workers."""

    def __init__(self, waiting: Callable[[], int]) -> None:
        self._waiting = waiting

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "cassieq_long_poll_waiting",
            "Receives (v2 waitSeconds, SQS WaitTimeSeconds) waiting now on this server.",
            value=self._waiting(),
        )
