"""What a store tells its observers: the outcome of every lightweight transaction it sent.

An engine registers its observers (engine/observe.py: the Prometheus exporter is one, tests
install others); store-level tests register a ``LwtTally``. The names of the primitives that
are an LWT live here too, so counting them needs no knowledge of a store's insides.
"""

from __future__ import annotations

import weakref
from collections import Counter
from typing import Literal, Protocol

# What an observer hears for every LWT sent: its answer ("applied", "lost": the
# condition was false), or, for an answer that did not arrive, what the read back found.
LwtEvent = Literal[
    "applied", "lost", "timeout_applied", "timeout_rejected", "timeout_contended", "undecided"
]

# Primitives that are a lightweight transaction in the Cassandra store.
LWT_PRIMITIVES = frozenset(
    {
        "insert_account",
        "delete_account",
        "add_key",
        "replace_key",
        "insert_secret",
        "replace_secret",
        "insert_queue",
        "replace_queue",
        "cas_monoton",
        "insert_messages",
        "cas_message",
        "ack_message",
        "seal_bucket",
        "finalize_bucket",
        "cas_pointer",
        "cas_invisibility",
        "acquire_lease",
        "cas_messages",  # one call may send several rounds (see batch_lwt)
        "ack_messages",
        "claim_dedup",  # FIFO (schema 0013)
        "replace_dedup",
        "claim_group_dedup",  # FIFO, deduplication by group (schema 0017)
        "replace_group_dedup",
        "insert_subscription",  # subscriptions (schema 0014)
        "cas_subscription_position",
        "cas_subscription",  # shared subscriptions (schema 0015)
        "insert_sub_deliveries",
        "cas_sub_deliveries",
    }
)

# Those of them that run on a bucket partition of the messages table (the rest are on the
# monoton, pointer, invisibility, queue, account and lease rows).
BUCKET_PARTITION_LWTS = frozenset(
    {
        "insert_messages",
        "cas_message",
        "ack_message",
        "seal_bucket",
        "finalize_bucket",
        "cas_messages",
        "ack_messages",
    }
)


class LwtObserver(Protocol):
    def lwt_outcome(self, primitive: str, event: LwtEvent) -> None: ...


class LwtTally:
    """Counts LWT events by primitive (what store-level tests register)."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, LwtEvent]] = Counter()

    def lwt_outcome(self, primitive: str, event: LwtEvent) -> None:
        self.counts[(primitive, event)] += 1


class LwtObservers:
    """A store's observers, each told every outcome. Held weakly: a store outlives the
    engines that come and go on it (tests make hundreds on one session's store), and an
    engine's observers must go with it instead of hearing every later engine's LWTs."""

    def __init__(self) -> None:
        self._observers: weakref.WeakSet[LwtObserver] = weakref.WeakSet()

    def add(self, observer: LwtObserver) -> None:
        self._observers.add(observer)

    def lwt_outcome(self, primitive: str, event: LwtEvent) -> None:
        for observer in list(self._observers):
            observer.lwt_outcome(primitive, event)
