"""Producers, consumers and the drain: every loop ends by itself, at the latest at the
deadline."""

from __future__ import annotations

import asyncio
import random
import time
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
    last_delivery: float = 0.0
    last_empty: dict[str, float] = field(default_factory=dict)
    deliveries: int = 0
    task_errors: list[str] = field(default_factory=list)  # a loop that died: a harness bug


class Workload:
    def __init__(
        self,
        client: ChaosClient,
        opts: ChaosOptions,
        scenario: str,
        deadline: float,
        say: Say,
        subscriptions: dict[str, SubLedger] | None = None,
    ) -> None:
        self._client, self._opts, self._scenario = client, opts, scenario
        self._deadline, self._say = deadline, say
        self._servers = list(client.urls)
        self._next_seq = 0
        self._stop = asyncio.Event()
        self._drained = False  # the drain is over: subscription readers finish catching up
        self._books = subscriptions or {}
        self.progress = Progress()

    @property
    def put_seconds(self) -> float:
        return self._opts.messages / self._opts.rate

    async def run(self) -> Progress:
        """Put phase and drain; returns when drained or at the deadline."""
        p = self.progress
        p.puts_started = p.last_delivery = time.monotonic()
        producers = [
            asyncio.create_task(self._producer(self._servers[i % len(self._servers)]))
            for i in range(self._opts.producers)
        ]
        consumers = [
            asyncio.create_task(self._consumer(i, self._servers[i % len(self._servers)]))
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

    async def _producer(self, home: str) -> None:
        start, opts = self.progress.puts_started, self._opts
        while not self._over() and self._next_seq < opts.messages:
            first = self._next_seq
            seqs = range(first, min(first + max(1, opts.batch), opts.messages))
            self._next_seq = seqs.stop
            # A shared schedule: put number seq is due at start + seq / rate (a batch goes
            # when its last message is due).
            await asyncio.sleep(max(0.0, start + seqs[-1] / opts.rate - time.monotonic()))
            await self._put(seqs, home)

    async def _put(self, seqs: range, home: str) -> None:
        server = home
        for attempt in range(PUT_ATTEMPTS):
            if self._over():
                return
            # A put with no answer may have been stored: the next attempt gets bodies of its
            # own, so that a copy of the first is never taken for a double delivery.
            bodies = [f"{self._scenario}:{seq}:{attempt}" for seq in seqs]
            if self._opts.batch:
                status = (await self._client.send(server, bodies))[0].status
            else:
                status = (await self._client.put(server, bodies[0])).status
            if status == 201:
                return
            server = self._client.other(server)
            await asyncio.sleep(RETRY_S)

    # ------------------------------------------------------------------ consumers

    async def _consumer(self, index: int, home: str) -> None:
        if self._opts.batch:
            await self._batch_consumer(index, home)
            return
        rng = random.Random(self._opts.seed * 1000 + index)
        while not self._over():
            server = home
            call, delivery = await self._client.get(server, self._opts.lease)
            if call.status is None or call.status >= 500:
                # The home server is down or failing: this round goes to the other one.
                server = self._client.other(home)
                call, delivery = await self._client.get(server, self._opts.lease)
            if call.status == 204:
                self.progress.last_empty[server] = call.recv
            if delivery is None:
                await asyncio.sleep(IDLE_S if call.status == 204 else RETRY_S)
                continue
            self.progress.deliveries += 1
            self.progress.last_delivery = max(self.progress.last_delivery, delivery.recv)
            if self._leave_unacked(delivery):
                continue
            # Receipts are server-neutral: some acks go to the server that did not deliver.
            other = rng.random() < self._opts.other_server_acks
            await self._ack(delivery, self._client.other(server) if other else server)

    async def _batch_consumer(self, index: int, home: str) -> None:
        """v2: receive up to ``batch`` (waiting up to WAIT_S), ack them in one request."""
        rng = random.Random(self._opts.seed * 1000 + index)
        lease, batch = self._opts.lease, self._opts.batch
        while not self._over():
            server = home
            call, got = await self._client.receive(server, lease, batch, WAIT_S)
            if call.status is None or call.status >= 500:
                server = self._client.other(home)
                call, got = await self._client.receive(server, lease, batch, WAIT_S)
            if call.status == 200 and not got:
                self.progress.last_empty[server] = call.recv
            if not got:
                await asyncio.sleep(IDLE_S if call.status == 200 else RETRY_S)
                continue
            keep = []
            for d in got:
                self.progress.deliveries += 1
                self.progress.last_delivery = max(self.progress.last_delivery, d.recv)
                if not self._leave_unacked(d):
                    keep.append(d)
            other = rng.random() < self._opts.other_server_acks
            if keep:
                await self._ack_batch(keep, self._client.other(server) if other else server)

    def _leave_unacked(self, d: Delivery) -> bool:
        """Every Nth delivery, while puts run, on a first delivery only: it must come back
        once its lease has run out, and it is acked then."""
        every = self._opts.unacked_every
        if not every or self.progress.puts_done is not None or self._over():
            return False
        if self.progress.deliveries % every or d.delivery_count != 1:
            return False
        d.left_unacked = True
        return True

    async def _ack(self, d: Delivery, server: str) -> None:
        unknown = False  # an attempt that may have applied
        for _ in range(ACK_ATTEMPTS):
            ack = await self._client.ack(server, d)
            if ack.status == ACKED:
                return
            if ack.status is not None and ack.status < 500:
                if ack.status == 409:
                    # Refused: by right (an earlier attempt of ours applied, or the lease ran
                    # out and the message moved on) or wrongly (an ack that applied, or a
                    # valid receipt refused): the row tells which.
                    await self._client.read_row(d, ack)
                return
            unknown = unknown or ack.may_have_applied
            if time.monotonic() >= self._deadline:
                break
            server = self._client.other(server)
            await asyncio.sleep(RETRY_S)
        if unknown:
            await self._client.read_row(d, ack)

    async def _ack_batch(self, ds: list[Delivery], server: str) -> None:
        """As _ack, entry by entry: an entry refused with a 4xx is done (a 409 has its row
        read); an entry with no answer or a 5xx is sent again, with the others like it."""
        unknown: set[int] = set()  # deliveries with an attempt that may have applied
        last: dict[int, Ack] = {}
        pending = ds
        for _ in range(ACK_ATTEMPTS):
            retry = []
            for d, ack in zip(pending, await self._client.ack_batch(server, pending), strict=True):
                last[d.id] = ack
                if ack.status == ACKED:
                    continue
                if ack.status is not None and ack.status < 500:
                    if ack.status == 409:
                        await self._client.read_row(d, ack)
                    continue
                if ack.may_have_applied:
                    unknown.add(d.id)
                retry.append(d)
            pending = retry
            if not pending or time.monotonic() >= self._deadline:
                break
            server = self._client.other(server)
            await asyncio.sleep(RETRY_S)
        for d in pending:
            if d.id in unknown:
                await self._client.read_row(d, last[d.id])

    # ------------------------------------------------------------------ drain

    async def _drain(self) -> None:
        """Until both servers have answered empty, with no delivery anywhere, for longer
        than lease + finalize + 2 s: by then a delivery left unacked has come back, and
        repair has had its chance at every bucket."""
        p, window = self.progress, self._opts.quiet_window
        while True:
            now = time.monotonic()
            if now >= self._deadline:
                p.timed_out = True
                self._say("deadline reached before the queue drained")
                return
            quiet_since = max(p.last_delivery, p.puts_done or now)
            alive = all(
                quiet_since < p.last_empty.get(s, 0.0) and now - p.last_empty[s] < ALIVE_S
                for s in self._servers
            )
            if alive and now - quiet_since > window:
                p.drained = now
                return
            await asyncio.sleep(0.5)

    async def _report(self) -> None:
        while True:
            await asyncio.sleep(15)
            p = self.progress
            self._say(
                f"{time.monotonic() - p.puts_started:.0f} s: seq {self._next_seq}/"
                f"{self._opts.messages}, deliveries {p.deliveries}"
                f"{' (draining)' if p.puts_done else ''}"
            )
