"""What every engine part shares: the store, the clock, tuning and a logger."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import structlog

from cassieq.engine.clock import Clock
from cassieq.engine.observe import Observers
from cassieq.store.base import Store


@dataclass(frozen=True)
class Tuning:
    # Finalized buckets whose only unacked messages are deliveries in force, kept aside
    # (with their due time) so that they do not hold the invisibility pointer back.
    max_stragglers: int = 256
    # Buckets behind the reader that one get may read looking for expired messages.
    invisibility_scan_buckets: int = 8
    # The same for a FIFO queue. Its groups' heads are found by the groups' records
    # (life/fifo.py next_heads), not by this scan: it only passes the pointer and meets the
    # groups missing from the list. (At 64, when the scan looked for the heads, one scan of
    # a long window took a receive more than half a second under load.)
    fifo_scan_buckets: int = 8
    # Buckets one walk of a FIFO queue's reader goes through at most (its heads are found
    # by their records too: the walk moves the pointer and meets unlisted groups). The
    # statistics count the buckets far past the reader as never delivered: at 8 a walk a
    # second, the reader of a busy FIFO queue fell 58 buckets behind what its groups had
    # delivered (a three-node fifo-check ended showing 1,161 messages left in an empty
    # queue); 32 buckets (640 messages) a second per server keeps up.
    fifo_walk_buckets: int = 32
    # A repair or dead-letter claim hides a message this long while it is moved.
    claim_ms: int = 60_000
    # How long a queue definition is trusted without re-reading it.
    queue_cache_ms: int = 2_000
    # How long an account (its keys) is trusted for authentication without re-reading it.
    account_cache_ms: int = 2_000
    # How many accounts, and apart from them how many names found missing, are remembered.
    account_cache_entries: int = 10_000
    lease_ttl_ms: int = 30_000
    # Deletion jobs wait this long (well past queue_cache_ms) before removing rows.
    deletion_grace_ms: int = 10_000
    # The engine's own queue of deletion jobs (engine/upkeep/deletion_jobs.py): every server
    # of a keyspace must use the same one. Tests whose clock is not the wall clock use one of
    # their own: beside a server on the wall clock, the two would judge each other's jobs
    # written long after a seal (a late write, repair's) or not visible for weeks.
    deletion_jobs_queue: str = "deletion-jobs"
    # How long the reader waits for a taken monoton's row before calling it a hole.
    hole_grace_ms: int = 2_000
    # How long a server trusts its last read of a queue's reader pointer and invisibility
    # state before reading them again (saves two reads per get). Only hints: a stale value
    # costs a lost compare-and-set or an extra bucket read, never a wrong delivery, and
    # this server's own moves update them at once.
    state_cache_ms: int = 250
    # Snapshots of reader buckets kept as hints (puts of this server are added to them).
    bucket_cache_entries: int = 1024
    max_cas_attempts: int = 64
    # The partitions of a queue created without saying (Settings.default_partitions).
    default_partitions: int = 1
    # Active queues an account may have (CASSIEQ_MAX_QUEUES_PER_ACCOUNT): every server's
    # background pass lists every queue, so one tenant's thousands delay everyone's repair.
    max_queues_per_account: int = 1_000
    # A message past maxDeliveryCount whose dead-letter queue does not exist is kept this
    # long before it is looked at again (then moved, if the queue exists by then).
    dead_letter_hold_ms: int = 30_000
    # Long polling (engine/life/long_poll.py): how often a queue with waiting receives on this
    # server is looked at (one monoton read: puts of other servers), and every how many of
    # those looks a waiter tries a real receive instead (messages visible again).
    long_poll_check_ms: int = 1_000
    long_poll_probe_ticks: int = 2
    # Receives waiting at once on this server, in all and per account (life/long_poll_slots):
    # beyond, a receive answers at once instead of waiting.
    long_poll_max_waiting: int = 800
    long_poll_max_waiting_per_account: int = 200


@dataclass(frozen=True)
class EngineContext:
    store: Store
    clock: Clock
    tuning: Tuning = field(default_factory=Tuning)
    instance_id: str = field(default_factory=lambda: secrets.token_hex(8))
    # The engine's observers' hooks (observe.py), called where each event happens.
    observers: Observers = field(default_factory=Observers)
    log: structlog.typing.FilteringBoundLogger = field(
        default_factory=lambda: structlog.get_logger("cassieq.engine")
    )
