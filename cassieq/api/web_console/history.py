"""Recent statistics of the queues the console shows, for its charts.

Kept in this server's memory only (a console on another server starts its own): a sample
each time a queue's statistics are read for a page, and every SAMPLE_EVERY_S for the
queues viewed in the last WATCH_MS (the sampler, started with the app's background work).
Bounded: MAX_QUEUES queues, each with the samples of the last KEEP_MS.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import OrderedDict, deque
from dataclasses import dataclass

import structlog

from cassieq.engine import QueueEngine
from cassieq.engine.errors import EngineError
from cassieq.model import Statistics
from cassieq.store.base import StoreError

log = structlog.get_logger(__name__)

SAMPLE_EVERY_S = 10.0
KEEP_MS = 15 * 60_000
WATCH_MS = 15 * 60_000
MAX_QUEUES = 200
# Two samples closer than this replace each other (a reloaded page adds no point).
MIN_GAP_MS = 2_000

QueueKey = tuple[str, str]  # account, queue


@dataclass(frozen=True)
class Sample:
    at: int  # ms, engine clock
    size: int
    in_flight: int
    oldest_age_s: float | None
    published: int
    delivered: int
    acked: int


@dataclass(frozen=True)
class Rate:
    at: int
    sent: float  # per second
    delivered: float
    acked: float


class History:
    def __init__(self, engine: QueueEngine) -> None:
        self._engine = engine
        self._samples: OrderedDict[QueueKey, deque[Sample]] = OrderedDict()
        self._viewed: dict[QueueKey, int] = {}

    def record(self, key: QueueKey, stats: Statistics) -> None:
        now = self._engine.now()
        samples = self._samples.setdefault(key, deque())
        self._samples.move_to_end(key)
        while len(self._samples) > MAX_QUEUES:
            dropped, _ = self._samples.popitem(last=False)
            self._viewed.pop(dropped, None)
        if samples and now - samples[-1].at < MIN_GAP_MS:
            samples.pop()
        samples.append(
            Sample(
                now,
                stats.size,
                stats.in_flight,
                stats.oldest_message_age_s,
                stats.published,
                stats.delivered,
                stats.acked,
            )
        )
        while samples and now - samples[0].at > KEEP_MS:
            samples.popleft()

    def viewed(self, key: QueueKey) -> None:
        self._viewed[key] = self._engine.now()

    def samples(self, key: QueueKey) -> list[Sample]:
        return list(self._samples.get(key, ()))

    def rates(self, key: QueueKey) -> list[Rate]:
        """Per second between consecutive samples (counters are cumulative)."""
        s = self.samples(key)
        out = []
        for a, b in itertools.pairwise(s):
            dt = (b.at - a.at) / 1000
            if dt <= 0:
                continue
            out.append(
                Rate(
                    b.at,
                    max(0, b.published - a.published) / dt,
                    max(0, b.delivered - a.delivered) / dt,
                    max(0, b.acked - a.acked) / dt,
                )
            )
        return out

    async def sample_once(self) -> int:
        """Read the statistics of the recently viewed queues; how many were read."""
        now = self._engine.now()
        watched = [k for k, at in self._viewed.items() if now - at <= WATCH_MS]
        for key in [k for k in self._viewed if k not in watched]:
            del self._viewed[key]
        read = 0
        for account, queue in watched:
            try:
                stats = await self._engine.statistics(account, queue)
            except (EngineError, StoreError) as exc:
                # A deleted queue, or a store that does not answer now: no point this round.
                log.debug("console_sample_skipped", account=account, queue=queue, error=str(exc))
                continue
            self.record((account, queue), stats)
            read += 1
        return read

    async def run(self) -> None:
        while True:
            try:
                await self.sample_once()
            except Exception:  # the charts miss a point; the loop must go on
                log.warning("console_sampler_failed", exc_info=True)
            await asyncio.sleep(SAMPLE_EVERY_S)
