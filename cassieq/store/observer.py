"""What a store tells an observer: the outcome of every lightweight transaction it sent.

The Prometheus exporter reads a ``LwtTally``; tests install their own observer. Both stores
keep a tally, so nothing above the store has to ask which store it is talking to.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal, Protocol

# What an observer hears for every LWT sent: its answer ("applied", "lost": the
# condition was false), or, for an answer that did not arrive, what the read back found.
LwtEvent = Literal[
    "applied", "lost", "timeout_applied", "timeout_rejected", "timeout_contended", "undecided"
]


class LwtObserver(Protocol):
    def lwt_outcome(self, primitive: str, event: LwtEvent) -> None: ...


class LwtTally:
    """Counts LWT events by primitive (a store's default observer; metrics read it)."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, LwtEvent]] = Counter()

    def lwt_outcome(self, primitive: str, event: LwtEvent) -> None:
        self.counts[(primitive, event)] += 1
