"""/metrics over every worker of one `cassieq serve --workers N`: the equal of prometheus-
client's multiprocess mode for figures that are mostly built at scrape time.

Each worker answers its siblings on a Unix socket in the supervisor's private directory
with its process-local families (request latency, the engine's events, the background
loop, its identity) as JSON; the worker Prometheus happens to reach asks the others at
scrape time and adds theirs to its own: counters and histograms are summed per label set,
the few gauges by the rule below. The per-queue figures are read from Cassandra, the same
for every worker, so only the scraped worker reads them (not summed, not read N times).

A worker that does not answer in time (restarting) is left out, and
``cassieq_workers{state="answered"}`` says so; its counts return with it, from 0 after a
restart, which Prometheus takes as a counter reset (as a restarted server's).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Iterable, Iterator

import msgspec
import structlog
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from cassieq.api.workers import WorkerSlot

log = structlog.get_logger("cassieq.metrics")

# How long a scrape waits for a sibling's figures (they are in its memory: milliseconds).
SIBLING_WAIT_S = 2.0

# A gauge of one process is not a sum over processes: how each is combined.
_GAUGE_RULES: dict[str, Callable[[Iterable[float]], float]] = {
    # 1 only while every worker's background loop runs.
    "cassieq_background_running": min,
    # The oldest: one worker's stuck loop must show.
    "cassieq_background_last_success_age_seconds": max,
}


class Family(msgspec.Struct, array_like=True):
    name: str
    documentation: str
    type: str
    samples: list[tuple[str, dict[str, str], float]]


def dump(metrics: Iterable[Metric]) -> list[Family]:
    return [
        Family(m.name, m.documentation, m.type, [(s.name, s.labels, s.value) for s in m.samples])
        for m in metrics
    ]


def merge(workers: list[list[Family]]) -> list[Metric]:
    """The families of every worker, one family per name, samples combined per label set.
    Samples keep the order they are first seen in (a histogram's buckets before its count)."""
    heads: dict[str, Family] = {}
    values: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], list[float]]] = {}
    for families in workers:
        for family in families:
            heads.setdefault(family.name, family)
            samples = values.setdefault(family.name, {})
            for name, labels, value in family.samples:
                samples.setdefault((name, tuple(sorted(labels.items()))), []).append(value)
    merged = []
    for name, head in heads.items():
        metric = Metric(name, head.documentation, head.type)
        for (sample, pairs), seen in values[name].items():
            metric.add_sample(sample, dict(pairs), _combine(head.type, sample, seen))
        merged.append(metric)
    return merged


def _combine(kind: str, sample: str, seen: list[float]) -> float:
    if sample.endswith("_created"):
        return min(seen)  # when the first worker began counting
    if kind == "gauge":
        return float(_GAUGE_RULES.get(sample, sum)(seen))
    return float(sum(seen))


class WorkerMetrics:
    """This worker's side: answers the siblings with ``local``'s families; gathers theirs."""

    def __init__(self, slot: WorkerSlot, local: CollectorRegistry) -> None:
        self.slot = slot
        self._local = local
        self._server: asyncio.Server | None = None

    async def open(self) -> None:
        path = self.slot.metrics_socket(self.slot.index)
        # Left by this slot's previous worker, killed before it could remove it.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        self._server = await asyncio.start_unix_server(self._answer, path=path)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.slot.metrics_socket(self.slot.index))

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            writer.write(msgspec.json.encode(dump(self._local.collect())))
            await writer.drain()
        finally:
            writer.close()

    async def collect(self) -> list[Metric]:
        """Every worker's process-local families, merged, and how many answered."""
        answers = await asyncio.gather(*(self._ask(path) for path in self.slot.siblings))
        others = [a for a in answers if a is not None]
        merged = merge([dump(self._local.collect()), *others])
        workers = GaugeMetricFamily(
            "cassieq_workers",
            "Server processes of this `cassieq serve`: configured, and answering this scrape "
            "(the process-local figures sum those that answered).",
            labels=["state"],
        )
        workers.add_metric(["configured"], self.slot.count)
        workers.add_metric(["answered"], 1 + len(others))
        return [*merged, workers]

    async def _ask(self, path: str) -> list[Family] | None:
        try:
            async with asyncio.timeout(SIBLING_WAIT_S):
                reader, writer = await asyncio.open_unix_connection(path)
                try:
                    body = await reader.read()  # to the end: the sibling closes
                finally:
                    writer.close()
            return msgspec.json.decode(body, type=list[Family])
        except (OSError, TimeoutError, msgspec.DecodeError):
            # Restarting (no socket yet) or stuck: this scrape goes on without it.
            log.info("metrics_worker_unanswered", socket=path)
            return None


class WorkerIdentity:
    """``cassieq_worker_info{worker, pid} 1``: which processes serve (a restart shows as a
    new pid)."""

    def __init__(self, slot: WorkerSlot) -> None:
        self._index = str(slot.index)

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            "cassieq_worker_info", "One per server process of this cassieq serve.",
            labels=["worker", "pid"],
        )  # fmt: skip
        info.add_metric([self._index, str(os.getpid())], 1)
        yield info
