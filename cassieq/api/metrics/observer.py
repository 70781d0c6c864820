"""The engine's events for Prometheus: an observer (engine/observe.py) that counts them as
they happen; its collector reports the counts at scrape time.

The hooks only add to plain counters (they run on the engine's path); the families are
built when /metrics is read. Counts are this server's since it started.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily
from prometheus_client.metrics_core import Metric

from cassieq.engine.observe import Observer
from cassieq.model import QueueDefinition
from cassieq.store.observer import LwtEvent


class MetricsObserver(Observer):
    def __init__(self) -> None:
        self.lwt: Counter[tuple[str, LwtEvent]] = Counter()
        self.deliveries = 0
        self.dead_letters = 0
        self.repair_moves = 0
        self.duplicates = 0
        self.groups_held = 0

    def lwt_outcome(self, primitive: str, event: LwtEvent) -> None:
        self.lwt[(primitive, event)] += 1

    def delivered(self, queue: QueueDefinition, count: int) -> None:
        self.deliveries += count

    def dead_lettered(self, queue: QueueDefinition, count: int) -> None:
        self.dead_letters += count

    def repair_moved(self, queue: QueueDefinition, count: int) -> None:
        self.repair_moves += count

    def deduplicated(self, queue: QueueDefinition, count: int) -> None:
        self.duplicates += count

    def group_held(self, queue: QueueDefinition, count: int) -> None:
        self.groups_held += count


class EngineEventsCollector:
    """The observer's counts: LWTs by primitive and outcome (applied, lost (condition
    false), timeout_applied / timeout_rejected / timeout_contended (no answer; read back at
    SERIAL), undecided (could not be settled)), deliveries, dead letters, repair moves."""

    def __init__(self, observer: MetricsObserver) -> None:
        self._observer = observer

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        seen = self._observer
        lwt = CounterMetricFamily(
            "cassieq_lwt",
            "Lightweight transactions by primitive and outcome.",
            labels=["primitive", "outcome"],
        )
        for (primitive, event), n in sorted(seen.lwt.items()):
            lwt.add_metric([primitive, event], n)
        yield lwt
        yield CounterMetricFamily(
            "cassieq_deliveries",
            "Messages this server delivered (every delivery, redeliveries too).",
            value=seen.deliveries,
        )
        yield CounterMetricFamily(
            "cassieq_dead_letters",
            "Messages this server retired as dead-lettered (moved to the dead-letter queue, "
            "or dropped when the queue names none).",
            value=seen.dead_letters,
        )
        yield CounterMetricFamily(
            "cassieq_repair_moves",
            "Late writes this server's repair re-published at a new monoton.",
            value=seen.repair_moves,
        )
        yield CounterMetricFamily(
            "cassieq_fifo_duplicates",
            "Sends to FIFO queues this server answered as duplicates (a deduplication id, or "
            "body, seen within 5 minutes: answered with the first message).",
            value=seen.duplicates,
        )
        yield CounterMetricFamily(
            "cassieq_fifo_groups_held",
            "Times this server held a FIFO message back because an earlier message of its "
            "group was unretired (in flight, or not yet delivered).",
            value=seen.groups_held,
        )
