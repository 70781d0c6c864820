"""The engine's events for Prometheus: an observer (engine/observe.py) that counts them as
they happen; its collector reports the counts at scrape time.

The hooks only add to plain counters (they run on the engine's path); the families are
built when /metrics is read. Counts are this server's since it started.

The per-subscription counters carry account, queue and subscription labels. They follow
the per-queue series' bound: /metrics shows them only for the queues its sample labels (the
N deepest and the allow-listed; ``only_labelled``, applied once every worker's counts are
added up, by the worker that read the sample). A process keeps at most
MAX_SUBSCRIPTION_KEYS label sets; past that it forgets them all and counts again from 0 (a
counter reset to Prometheus, which rate() and increase() absorb), rather than growing with
every subscription it ever saw.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator

from prometheus_client.core import CounterMetricFamily
from prometheus_client.metrics_core import Metric

from cassieq.engine.observe import Observer
from cassieq.model import QueueDefinition
from cassieq.store.observer import LwtEvent

MAX_SUBSCRIPTION_KEYS = 10_000
# The families whose series are per queue, shown for the sample's labelled queues only.
SUBSCRIPTION_FAMILIES = frozenset(
    {
        "cassieq_subscription_messages_read",
        "cassieq_subscription_commits",
        "cassieq_subscription_deliveries",
        "cassieq_subscription_acks",
        "cassieq_subscription_expired",
    }
)
# A shared subscription's events (engine/observe.py's hooks): the family and its help.
SHARED_FAMILIES = {
    "delivered": (
        "cassieq_subscription_deliveries",
        "Messages this server delivered in the shared subscription (every delivery, "
        "redeliveries too).",
    ),
    "acked": (
        "cassieq_subscription_acks",
        "Deliveries of the shared subscription this server acked.",
    ),
    "expired": (
        "cassieq_subscription_expired",
        "Messages this server found past the queue's retention before the shared "
        "subscription was done with them (never delivered in it again).",
    ),
}


class MetricsObserver(Observer):
    def __init__(self) -> None:
        self.lwt: Counter[tuple[str, LwtEvent]] = Counter()
        self.deliveries = 0
        self.dead_letters = 0
        self.repair_moves = 0
        self.duplicates = 0
        self.groups_held = 0
        # (account, queue, subscription) -> messages read; (..., outcome) -> commits.
        self.subscription_reads: Counter[tuple[str, str, str]] = Counter()
        self.subscription_commits: Counter[tuple[str, str, str, str]] = Counter()
        # A shared subscription's: (account, queue, subscription, event) -> messages, the
        # event one of SHARED_FAMILIES.
        self.subscription_events: Counter[tuple[str, str, str, str]] = Counter()

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

    def subscription_read(self, queue: QueueDefinition, name: str, count: int) -> None:
        key = (queue.account, queue.name, name)
        if key not in self.subscription_reads:
            self._room()
        self.subscription_reads[key] += count

    def subscription_committed(self, queue: QueueDefinition, name: str, applied: bool) -> None:
        key = (queue.account, queue.name, name, "applied" if applied else "conflict")
        if key not in self.subscription_commits:
            self._room()
        self.subscription_commits[key] += 1

    def subscription_delivered(self, queue: QueueDefinition, name: str, count: int) -> None:
        self._shared(queue, name, "delivered", count)

    def subscription_acked(self, queue: QueueDefinition, name: str, count: int) -> None:
        self._shared(queue, name, "acked", count)

    def subscription_expired(self, queue: QueueDefinition, name: str, count: int) -> None:
        self._shared(queue, name, "expired", count)

    def _shared(self, queue: QueueDefinition, name: str, event: str, count: int) -> None:
        key = (queue.account, queue.name, name, event)
        if key not in self.subscription_events:
            self._room()
        self.subscription_events[key] += count

    def _room(self) -> None:
        """Room for one more label set (see the module's doc)."""
        kept = (
            len(self.subscription_reads)
            + len(self.subscription_commits)
            + len(self.subscription_events)
        )
        if kept >= MAX_SUBSCRIPTION_KEYS:
            self.subscription_reads.clear()
            self.subscription_commits.clear()
            self.subscription_events.clear()


class EngineEventsCollector:
    """The observer's counts: LWTs by primitive and outcome (applied, lost (condition
    false), timeout_applied / timeout_rejected / timeout_contended (no answer; read back at
    SERIAL), undecided (could not be settled)), deliveries, dead letters, repair moves, and
    per subscription: ordered reads and commits, shared deliveries, acks and expired."""

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
        reads = CounterMetricFamily(
            "cassieq_subscription_messages_read",
            "Messages this server answered to ordered reads of the subscription (a message "
            "read again before its commit counts again).",
            labels=["account", "queue", "subscription"],
        )
        for labels, n in sorted(seen.subscription_reads.items()):
            reads.add_metric(list(labels), n)
        yield reads
        commits = CounterMetricFamily(
            "cassieq_subscription_commits",
            "Commits and seeks of the subscription's position this server made: applied, or "
            "conflict (refused: the expected position was not the stored one).",
            labels=["account", "queue", "subscription", "outcome"],
        )
        for labels_, n in sorted(seen.subscription_commits.items()):
            commits.add_metric(list(labels_), n)
        yield commits
        yield from _shared_families(seen.subscription_events)


def _shared_families(events: Counter[tuple[str, str, str, str]]) -> Iterator[Metric]:
    """The shared subscriptions' counters, one family per event, each there (empty) before
    its first event, as the ordered subscriptions' are."""
    families = {
        event: CounterMetricFamily(name, text, labels=["account", "queue", "subscription"])
        for event, (name, text) in SHARED_FAMILIES.items()
    }
    for (account, queue, subscription, event), n in sorted(events.items()):
        families[event].add_metric([account, queue, subscription], n)
    yield from families.values()


def only_labelled(families: Iterable[Metric], queues: Collection[tuple[str, str]]) -> list[Metric]:
    """``families`` with the per-subscription ones keeping only the samples of ``queues``
    ((account, queue): the ones the sample labels)."""
    kept = []
    for family in families:
        if family.name in SUBSCRIPTION_FAMILIES:
            shown = Metric(family.name, family.documentation, family.type)
            for sample in family.samples:
                if (sample.labels.get("account"), sample.labels.get("queue")) in queues:
                    shown.add_sample(sample.name, sample.labels, sample.value)
            family = shown
        kept.append(family)
    return kept
