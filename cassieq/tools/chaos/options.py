"""What one chaos run does: the workload's shape, the queue's options, where the cluster is."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Scenario = Literal["baseline", "node-kill", "server-kill", "both"]
SCENARIOS: tuple[Scenario, ...] = ("baseline", "node-kill", "server-kill", "both")
# Scenarios that kill a Cassandra node: they need the three-node cluster.
NODE_SCENARIOS: frozenset[str] = frozenset({"node-kill", "both"})


@dataclass(frozen=True, kw_only=True)
class ChaosOptions:
    # The workload that found the three-node bugs is the default.
    messages: int = 3000
    rate: float = 15.0  # puts per second, all producers together
    producers: int = 8
    consumers: int = 12
    lease: int = 30  # invisibilityTimeSeconds of every get
    bucket_size: int = 20
    finalize: int = 5  # repairWorkerBucketFinalizeTimeSeconds
    repair_poll: int = 1  # repairWorkerPollSeconds
    # Every Nth delivery (a first delivery of its message) is left unacked on purpose: it
    # must come back once its lease has run out. 0 turns this off.
    unacked_every: int = 50
    # Share of acks sent to the server that did not deliver (receipts are server-neutral).
    other_server_acks: float = 0.25
    # High enough that dead-lettering never removes a message from the ledger's view: a
    # dead-lettered message would otherwise look lost.
    max_delivery_count: int = 1000
    seed: int = 1
    # 0: v1, one message per request (CassieQ's API). N: v2 batches through /api/v2:
    # producers send N messages per request, consumers receive up to N (long polling) and
    # ack what they got in one request.
    batch: int = 0
    # With ``batch``: every other producer and consumer of the queue uses v1 instead, one
    # message per request, so that one run (one set of faults) covers both APIs at once.
    mixed: bool = False
    # The queue's partitions (the servers' CASSIEQ_DEFAULT_PARTITIONS: the v1 create makes
    # it so) and each server's processes (CASSIEQ_WORKERS): issue 35.
    partitions: int = 1
    workers: int = 1
    # Ordered subscriptions (issue 36) made on the queue before the puts, each read by one
    # reader through the put phase and the drain, until it has caught up. 0: none.
    subscriptions: int = 0
    # Shared subscriptions (issue 36) made on the queue before the puts (start earliest),
    # each consumed by ``consumers`` consumers of its own and judged with a ledger of its
    # own, as the queue is. 0: none.
    shared_subscriptions: int = 0
    # Hard bound on a scenario from its set-up to the end of its drain.
    deadline: float = 360.0
    request_timeout: float = 45.0
    server_restart_delay: float = 5.0
    node: int = 2  # the cluster node the node faults kill
    hosts: tuple[str, ...] = ("127.0.0.1",)
    native_port: int = 9042
    replication: str = "{'class': 'SimpleStrategy', 'replication_factor': 1}"
    single_node: bool = False
    keep_keyspace: bool = False
    log_dir: Path | None = None

    @property
    def mixes_apis(self) -> bool:
        """``mixed`` in effect: only beside v2 batches (without them every client is v1)."""
        return self.mixed and self.batch > 0

    @property
    def quiet_window(self) -> float:
        """How long both servers must have answered empty before the drain ends: a delivery
        left unacked comes back after its lease, and repair acts after its finalize time."""
        return float(self.lease + self.finalize + 2)
