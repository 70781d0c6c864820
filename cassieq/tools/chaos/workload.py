"""Producers, consumers and the drain: every loop ends by itself, at the latest at the
deadline.

Consumers work in *lanes*: the queue's own, and one per shared subscription (issue 36),
each with its client (the routes it receives and acks through, the ledger it writes), its
own count of deliveries and its own "empty" answers; the same consumer code runs in each.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from cassieq.tools.chaos.client import ChaosClient
from cassieq.tools.chaos.ledger import ACKED, Ack, Delivery
from cassieq.tools.chaos.options import ChaosOptions
from cassieq.tools.chaos.sub_ledger import SubLedger
from cassieq.tools.chaos.sub_reader import SubscriptionReader

Say = Callable[[str], None]

PUT_ATTEMPTS = 6  # per sequence number, each with a body of its own
ACK_ATTEMPTS = 4
IDLE_S = 0.3  # a consumer's pause after an empty answer
RETRY_S = 0.3  # pause after a failed request, before the next one
ALIVE_S = 5.0  # the drain wants each server's latest "empty" to be this recent
# A v2 consumer's long poll: well inside ALIVE_S, so an idle server still answers "empty"
# often enough for the drain.
WAIT_S = 1


@dataclass
class Progress:
    puts_started: float = 0.0
    puts_done: float | None = None
    drained: float | None = None
    timed_out: bool = False
    last_delivery: float = 0.0  # in any lane
    last_empty: dict[str, float] = field(default_factory=dict)  # the queue's lane's
    deliveries: int = 0  # in every lane
    # Puts answered 201 and deliveries of the queue's lane, per API ("v1", "v2"): a
    # --mixed run shows both were used.
    puts_by_api: Counter[str] = field(default_factory=Counter)
    deliveries_by_api: Counter[str] = field(default_factory=Counter)
    task_errors: list[str] = field(default_factory=list)  # a loop that died: a harness bug


@dataclass
class Lane:
    """Consumers of one thing: the queue (``client`` as given) or a shared subscription
    (``client.shared_subscription(...)``: its routes, its ledger)."""

    name: str
    client: ChaosClient
    batch: int  # 0: v1 get and ack, one message each; N: v2 receive up to N, one ack request
    number: int  # 0 for the queue: the consumers' random seeds stay what they were
    last_empty: dict[str, float] = field(default_factory=dict)  # server -> latest "empty"
    deliveries: int = 0


class Workload:
    def __init__(
        self,
        client: ChaosClient,
        opts: ChaosOptions,
        scenario: str,
        deadline: float,
        say: Say,
        subscriptions: dict[str, SubLedger] | None = None,
        shared: dict[str, ChaosClient] | None = None,
    ) -> None:
        """``subscriptions``: the ordered ones' books (one reader each); ``shared``: a
        client per shared subscription, pointed at it (``opts.consumers`` consumers each)."""
        self._client, self._opts, self._scenario = client, opts, scenario
        self._deadline, self._say = deadline, say
        self._servers = list(client.urls)
        self._next_seq = 0
        self._stop = asyncio.Event()
        self._drained = False  # the drain is over: subscription readers finish catching up
        self._books = subscriptions or {}
        self.progress = Progress()
        self._queue_lane = Lane("queue", client, opts.batch, 0, self.progress.last_empty)
        # v1 has no subscription routes: a subscription's consumers use v2, one message per
        # receive when the queue's use v1.
        self.lanes = [self._queue_lane] + [
            Lane(name, view, max(1, opts.batch), n)
            for n, (name, view) in enumerate((shared or {}).items(), 1)
        ]

    @property
    def put_seconds(self) -> float:
        return self._opts.messages / self._opts.rate

    async def run(self) -> Progress:
        """Put phase and drain; returns when drained or at the deadline."""
        p = self.progress
        p.puts_started = p.last_delivery = time.monotonic()
        producers = [
            asyncio.create_task(
                self._producer(self._servers[i % len(self._servers)], self._v1_among_batches(i))
            )
            for i in range(self._opts.producers)
        ]
        consumers = [
            asyncio.create_task(self._consumer(i, self._servers[i % len(self._servers)], lane))
            for lane in self.lanes
            for i in range(self._opts.consumers)
        ]
        readers = [
            asyncio.create_task(
                SubscriptionReader(
                    self._client,
                    book,
                    self._servers[i % len(self._servers)],
                    over=self._over,
                    finishing=lambda: self._drained,
                ).run()
            )
            for i, book in enumerate(self._books.values())
        ]
        reporter = asyncio.create_task(self._report())
        try:
            await asyncio.wait(producers, timeout=max(0.0, self._deadline - time.monotonic()))
            p.puts_done = time.monotonic()
            self._say(f"puts done after {p.puts_done - p.puts_started:.0f} s; draining")
            await self._drain()
            self._drained = True
            if readers:
                # Each stops once its subscription has caught up (lag 0), or at the deadline.
                await asyncio.wait(readers, timeout=max(0.0, self._deadline - time.monotonic()))
        finally:
            self._stop.set()
            # Each loop finishes the request it is in (bounded by the request timeout).
            tasks = [*producers, *consumers, *readers]
            _, pending = await asyncio.wait(tasks, timeout=self._opts.request_timeout + 5)
            for t in [*pending, reporter]:
                t.cancel()
            await asyncio.gather(*pending, reporter, return_exceptions=True)
            p.task_errors += [
                f"{type(exc).__name__}: {exc}"
                for t in tasks
                if not t.cancelled() and (exc := t.exception()) is not None
            ]
        return p

    def _over(self) -> bool:
        return self._stop.is_set() or time.monotonic() >= self._deadline

    # ------------------------------------------------------------------ producers

    def _v1_among_batches(self, index: int) -> bool:
        """``--mixed``: the odd producers and consumers of the queue use v1."""
        return self._opts.mixes_apis and index % 2 == 1

    async def _producer(self, home: str, v1: bool = False) -> None:
        start, opts = self.progress.puts_started, self._opts
        batch = 0 if v1 else opts.batch
        while not self._over() and self._next_seq < opts.messages:
            first = self._next_seq
            seqs = range(first, min(first + max(1, batch), opts.messages))
            self._next_seq = seqs.stop
            # A shared schedule: put number seq is due at start + seq / rate (a batch goes
            # when its last message is due).
            await asyncio.sleep(max(0.0, start + seqs[-1] / opts.rate - time.monotonic()))
            await self._put(seqs, home, batch)

    async def _put(self, seqs: range, home: str, batch: int) -> None:
        server = home
        for attempt in range(PUT_ATTEMPTS):
            if self._over():
                return
            # A put with no answer may have been stored: the next attempt gets bodies of its
            # own, so that a copy of the first is never taken for a double delivery.
            bodies = [f"{self._scenario}:{seq}:{attempt}" for seq in seqs]
            if batch:
                status = (await self._client.send(server, bodies))[0].status
            else:
                status = (await self._client.put(server, bodies[0])).status
            if status == 201:
                self.progress.puts_by_api["v2" if batch else "v1"] += len(seqs)
                return
            server = self._client.other(server)
            await asyncio.sleep(RETRY_S)

    # ------------------------------------------------------------------ consumers

    async def _consumer(self, index: int, home: str, lane: Lane | None = None) -> None:
        lane = lane or self._queue_lane
        if lane.batch and not (lane is self._queue_lane and self._v1_among_batches(index)):
            await self._batch_consumer(index, home, lane)
            return
        client = lane.client
        rng = random.Random(self._opts.seed * 1000 + 100 * lane.number + index)
        while not self._over():
            server = home
            call, delivery = await client.get(server, self._opts.lease)
            if call.status is None or call.status >= 500:
                # The home server is down or failing: this round goes to the other one.
                server = client.other(home)
                call, delivery = await client.get(server, self._opts.lease)
            if call.status == 204:
                lane.last_empty[server] = call.recv
            if delivery is None:
                await asyncio.sleep(IDLE_S if call.status == 204 else RETRY_S)
                continue
            self._delivered(lane, delivery, "v1")
            if self._leave_unacked(lane, delivery):
                continue
            # Receipts are server-neutral: some acks go to the server that did not deliver.
            other = rng.random() < self._opts.other_server_acks
            await self._ack(delivery, client.other(server) if other else server, client)

    async def _batch_consumer(self, index: int, home: str, lane: Lane | None = None) -> None:
        """v2: receive up to ``batch`` (waiting up to WAIT_S), ack them in one request."""
        lane = lane or self._queue_lane
        client = lane.client
        rng = random.Random(self._opts.seed * 1000 + 100 * lane.number + index)
        lease, batch = self._opts.lease, lane.batch
        while not self._over():
            server = home
            call, got = await client.receive(server, lease, batch, WAIT_S)
            if call.status is None or call.status >= 500:
                server = client.other(home)
                call, got = await client.receive(server, lease, batch, WAIT_S)
            if call.status == 200 and not got:
                lane.last_empty[server] = call.recv
            if not got:
                await asyncio.sleep(IDLE_S if call.status == 200 else RETRY_S)
                continue
            keep = []
            for d in got:
                self._delivered(lane, d, "v2")
                if not self._leave_unacked(lane, d):
                    keep.append(d)
            other = rng.random() < self._opts.other_server_acks
            if keep:
                await self._ack_batch(keep, client.other(server) if other else server, client)

    def _delivered(self, lane: Lane, d: Delivery, api: str) -> None:
        lane.deliveries += 1
        self.progress.deliveries += 1
        if lane is self._queue_lane:
            self.progress.deliveries_by_api[api] += 1
        self.progress.last_delivery = max(self.progress.last_delivery, d.recv)

    def _leave_unacked(self, lane: Lane, d: Delivery) -> bool:
        """Every Nth delivery of the lane, while puts run, on a first delivery only: it
        must come back once its lease has run out, and it is acked then."""
        every = self._opts.unacked_every
        if not every or self.progress.puts_done is not None or self._over():
            return False
        if lane.deliveries % every or d.delivery_count != 1:
            return False
        d.left_unacked = True
        return True

    async def _ack(self, d: Delivery, server: str, client: ChaosClient | None = None) -> None:
        client = client or self._client
        unknown = False  # an attempt that may have applied
        for _ in range(ACK_ATTEMPTS):
            ack = await client.ack(server, d)
            if ack.status == ACKED:
                return
            if ack.status is not None and ack.status < 500:
                if ack.status == 409:
                    # Refused: by right (an earlier attempt of ours applied, or the lease ran
                    # out and the message moved on) or wrongly (an ack that applied, or a
                    # valid receipt refused): the row tells which.
                    await client.read_row(d, ack)
                return
            unknown = unknown or ack.may_have_applied
            if time.monotonic() >= self._deadline:
                break
            server = client.other(server)
            await asyncio.sleep(RETRY_S)
        if unknown:
            await client.read_row(d, ack)

    async def _ack_batch(
        self, ds: list[Delivery], server: str, client: ChaosClient | None = None
    ) -> None:
        """As _ack, entry by entry: an entry refused with a 4xx is done (a 409 has its row
        read); an entry with no answer or a 5xx is sent again, with the others like it."""
        client = client or self._client
        unknown: set[int] = set()  # deliveries with an attempt that may have applied
        last: dict[int, Ack] = {}
        pending = ds
        for _ in range(ACK_ATTEMPTS):
            retry = []
            for d, ack in zip(pending, await client.ack_batch(server, pending), strict=True):
                last[d.id] = ack
                if ack.status == ACKED:
                    continue
                if ack.status is not None and ack.status < 500:
                    if ack.status == 409:
                        await client.read_row(d, ack)
                    continue
                if ack.may_have_applied:
                    unknown.add(d.id)
                retry.append(d)
            pending = retry
            if not pending or time.monotonic() >= self._deadline:
                break
            server = client.other(server)
            await asyncio.sleep(RETRY_S)
        for d in pending:
            if d.id in unknown:
                await client.read_row(d, last[d.id])

    # ------------------------------------------------------------------ drain

    async def _drain(self) -> None:
        """Until both servers have answered empty in every lane (the queue and each shared
        subscription), with no delivery in any, for longer than lease + finalize + 2 s: by
        then a delivery left unacked has come back, and repair has had its chance at every
        bucket."""
        p, window = self.progress, self._opts.quiet_window
        while True:
            now = time.monotonic()
            if now >= self._deadline:
                p.timed_out = True
                self._say("deadline reached before the queue drained")
                return
            quiet_since = max(p.last_delivery, p.puts_done or now)
            if self._all_empty_since(quiet_since, now) and now - quiet_since > window:
                p.drained = now
                return
            await asyncio.sleep(0.5)

    def _all_empty_since(self, quiet_since: float, now: float) -> bool:
        """Every lane has had an "empty" from each server after ``quiet_since``, lately:
        a lane whose consumers get no answer (or only deliveries) holds the drain."""
        return all(
            quiet_since < lane.last_empty.get(s, 0.0) and now - lane.last_empty[s] < ALIVE_S
            for lane in self.lanes
            for s in self._servers
        )

    async def _report(self) -> None:
        while True:
            await asyncio.sleep(15)
            p = self.progress
            lanes = ", ".join(f"{lane.name} {lane.deliveries}" for lane in self.lanes[1:])
            self._say(
                f"{time.monotonic() - p.puts_started:.0f} s: seq {self._next_seq}/"
                f"{self._opts.messages}, deliveries {p.deliveries}"
                f"{f' ({lanes})' if lanes else ''}"
                f"{' (draining)' if p.puts_done else ''}"
            )
