"""Consuming messages: the LWT that makes deliveries (one conditional batch on the bucket
partition for all taken at once). Messages that used up their deliveries go to
dead_letter.py instead.

Shared by the reader (its bucket) and the invisibility side (buckets behind it).
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.life.bucket_groups import BucketGroups, Write
from cassieq.engine.life.dead_letter import DeadLetters
from cassieq.engine.life.expire import expiring
from cassieq.engine.life.fifo import Fifo, sequence_number
from cassieq.engine.life.put import Publisher
from cassieq.engine.recent import Recent
from cassieq.engine.tenancy.queues import QueueDirectory
from cassieq.model import Delivery, MessageRow, PopReceipt, QueueDefinition, QueueId
from cassieq.tokens import new_token

CasEntry = tuple[int, MessageRow]  # cas_messages' entry: (the version expected, the new row)

TAKEN_CACHE_SIZE = 65_536
# How long the rows this server's reader wrote into a bucket are kept for the bucket's seal
# (ReaderWrites); the invisibility side uses them only while younger than its quiet entries.
READER_WRITES_MAX_MS = 5_000
# Buckets whose reader writes are kept: a few per busy queue are being emptied at a time.
READER_WRITES_BUCKETS = 1_024


@dataclass(slots=True)
class ReaderWrites:
    """The rows of a bucket as this server's reader's writes left them (monoton -> the
    latest such row, without its body), since ``since`` (the first of those writes)."""

    since: int
    rows: dict[int, MessageRow] = field(default_factory=dict)


# (account, queue, queue version, partition, monoton)
_TakenKey = tuple[str, str, int, int, int]


def _taken_key(queue: QueueDefinition, monoton: int) -> _TakenKey:
    return (queue.account, queue.name, queue.version, queue.partition, monoton)


class Deliverer:
    def __init__(self, ctx: EngineContext, publisher: Publisher, queues: QueueDirectory) -> None:
        self._ctx = ctx
        self._publisher = publisher
        self._queues = queues
        # Readers of this server never race each other for one message: each skips the
        # messages another is trying right now, and the versions this server has already
        # moved past (a stale snapshot would only spend an LWT to lose). Only a hint: the
        # LWT still decides every delivery.
        self._trying: dict[tuple[QueueId, int], asyncio.Future[None]] = {}
        # Keyed by plain tuples of text and numbers: the garbage collector stops tracking
        # such a tuple, while one holding a QueueId (a GC type) stays tracked, and each
        # full collection walked all 65,536 keys.
        self._taken: OrderedDict[_TakenKey, int] = OrderedDict()
        # (queue, bucket) -> what the writes of this server's reader (its takes, conditioned
        # on the bucket not being sealed) left of the rows.
        self._reader_writes: Recent[tuple[QueueId, int], ReaderWrites] = Recent(
            ctx, READER_WRITES_MAX_MS, READER_WRITES_BUCKETS
        )
        # What becomes of a message that used up its deliveries (and of redrives found
        # half done among the rows taken).
        self.dead_letters = DeadLetters(ctx, publisher, queues, self.note_version)
        # Told when the leases given end (long polling wakes a waiter then).
        self.on_leased: Callable[[QueueId, int], None] | None = None
        # Takes (and retirements) of one bucket that come while one is being written go
        # together: concurrent readers' single takes are one conditional batch then.
        self._takes: BucketGroups[CasEntry] = BucketGroups(lambda entry: entry[1].monoton)

    async def take(
        self,
        queue: QueueDefinition,
        bucket: int,
        candidates: list[MessageRow],
        want: int,
        invisibility_ms: int,
        *,
        unsealed: bool = False,
        heads: bool = False,
    ) -> list[Delivery]:
        """Up to ``want`` deliveries of the candidates (oldest first when strict FIFO, else
        in random order), ``want`` at a time in one conditional batch; the ones lost to
        another reader are made up from the candidates left. With ``unsealed`` (the
        reader's bucket), only while the bucket is not sealed. ``heads``: FIFO candidates
        found as their groups' heads just now (Fifo.next_heads), not asked again."""
        if queue.options.fifo and heads:
            candidates = sorted(candidates, key=lambda r: r.monoton)
        elif queue.options.fifo:
            # Only each group's head, and only while nothing earlier of it is unretired
            # (life/fifo.py); lowest monoton first.
            fresh = [r for r in candidates if not self.busy(queue, r)]
            candidates = await self._publisher.fifo.admit(queue, fresh)
        elif not queue.options.strict_fifo:
            # Random order spreads concurrent readers over the bucket: fewer lost CAS.
            candidates = random.sample(candidates, len(candidates))
        rest = iter(candidates)
        got: list[Delivery] = []
        while len(got) < want:
            # Checked as they are picked: another reader of this server may have taken
            # some while this one waited for its last batch.
            # (Heads and the messages right after them were judged just now: a group
            # another reader found held since, by this very take, is not theirs to skip.)
            batch = list(
                itertools.islice(
                    (r for r in rest if not self.busy(queue, r, held=not heads)), want - len(got)
                )
            )
            if not batch:
                break
            got += await self._try(queue, bucket, batch, invisibility_ms, unsealed=unsealed)
        return got

    async def take_runs(
        self,
        queue: QueueDefinition,
        bucket: int,
        runs: list[list[MessageRow]],
        invisibility_ms: int,
    ) -> list[Delivery]:
        """FIFO: each run (a group's head and messages right after it, of this bucket)
        delivered whole or not at all, all in one conditional batch; a run is cut before
        a message another reader of this server is taking, or one half redriven (consume
        finishes its move first: a move is no delivery)."""
        kept: list[list[MessageRow]] = []
        for run in runs:
            cut = next((i for i, r in enumerate(run) if self.busy(queue, r, held=False)), len(run))
            if run and run[0].redrive_to is not None:
                cut = min(cut, 1)  # a head half redriven is finished alone (consume)
            else:  # a message after the head half redriven: the run stops before it
                cut = next((i for i, r in enumerate(run[:cut]) if r.redrive_to is not None), cut)
            if cut:
                kept.append(run[:cut])
        rows = [row for run in kept for row in run]
        units = {row.monoton: n for n, run in enumerate(kept) for row in run}
        if not rows:
            return []
        return await self._try(queue, bucket, rows, invisibility_ms, unsealed=False, units=units)

    async def _try(
        self,
        queue: QueueDefinition,
        bucket: int,
        rows: list[MessageRow],
        invisibility_ms: int,
        *,
        unsealed: bool,
        units: dict[int, int] | None = None,
    ) -> list[Delivery]:
        """Consume ``rows``, marked as being tried meanwhile: concurrent readers of this
        server pick others (every candidate of a batch is marked, not only the first)."""
        loop = asyncio.get_running_loop()
        keys = [(queue.id, row.monoton) for row in rows]
        tries = [loop.create_future() for _ in keys]
        self._trying.update(zip(keys, tries, strict=True))
        try:
            return await self.consume(
                queue, bucket, rows, invisibility_ms, unsealed=unsealed, units=units
            )
        finally:
            for key, trying in zip(keys, tries, strict=True):
                del self._trying[key]
                trying.set_result(None)

    def busy(self, queue: QueueDefinition, row: MessageRow, *, held: bool = True) -> bool:
        """Another reader of this server is taking it, or took this version of it already
        (or, FIFO, its group was found held a moment ago)."""
        if (queue.id, row.monoton) in self._trying:
            return True
        if self._taken.get(_taken_key(queue, row.monoton), 0) > row.version:
            return True
        return held and self.blocked(queue, row)

    @property
    def fifo(self) -> Fifo:
        return self._publisher.fifo

    def blocked(self, queue: QueueDefinition, row: MessageRow) -> bool:
        """FIFO: its group was found held a moment ago (an earlier message unretired)."""
        return queue.options.fifo and self._publisher.fifo.blocked(queue, row)

    def any_trying(self, queue: QueueDefinition, rows: list[MessageRow]) -> bool:
        return any((queue.id, r.monoton) in self._trying for r in rows)

    async def wait_for_tries(self, queue: QueueDefinition, rows: list[MessageRow]) -> None:
        """Wait until one of this server's tries on these messages has an outcome."""
        waits = [
            self._trying[k] for k in ((queue.id, r.monoton) for r in rows) if k in self._trying
        ]
        if waits:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)

    async def wait_for_all_tries(self, queue: QueueDefinition, first: int, end: int) -> None:
        """Wait until no reader of this server is taking a message in ``first..end-1``."""
        while waits := [
            f for (q, m), f in self._trying.items() if q == queue.id and first <= m < end
        ]:
            await asyncio.wait(waits)

    def note_version(self, queue: QueueDefinition, monoton: int, version: int) -> None:
        """Remember that a message is at ``version`` now (this server changed it)."""
        key = _taken_key(queue, monoton)
        self._taken[key] = version
        self._taken.move_to_end(key)
        while len(self._taken) > TAKEN_CACHE_SIZE:
            self._taken.popitem(last=False)

    def pop_reader_writes(self, queue: QueueId, bucket: int) -> ReaderWrites | None:
        """What this server's reader's writes left of the bucket's rows, forgotten from now
        on (its seal is stored or failed: no more of them can come)."""
        writes = self._reader_writes.get((queue, bucket))
        self._reader_writes.drop((queue, bucket))
        return writes

    def forget_reader_writes(self, queue: QueueId, bucket: int) -> None:
        """Another write of this server changed a row of the bucket after its reader's."""
        self._reader_writes.drop((queue, bucket))

    def _note_reader_writes(self, queue: QueueId, bucket: int, rows: list[MessageRow]) -> None:
        writes = self._reader_writes.get((queue, bucket))
        if writes is None:
            self._reader_writes.put((queue, bucket), writes := ReaderWrites(self._ctx.clock.now()))
        for row in rows:
            known = writes.rows.get(row.monoton)
            if known is None or known.version < row.version:
                writes.rows[row.monoton] = without_body(row)

    def _write_takes(
        self, queue: QueueId, bucket: int, unsealed: bool, units: list[int] | None = None
    ) -> Write[CasEntry]:
        async def write(entries: list[CasEntry]) -> list[bool]:
            return await self._ctx.store.cas_messages(
                queue,
                bucket,
                entries,
                unsealed=unsealed,
                keep_body=True,  # takes and retirements: only the state changes
                units=units,
            )

        return write

    async def consume(
        self,
        queue: QueueDefinition,
        bucket: int,
        rows: list[MessageRow],
        invisibility_ms: int,
        *,
        unsealed: bool = False,
        units: dict[int, int] | None = None,
    ) -> list[Delivery]:
        """Deliver rows of one bucket with one conditional batch (each row conditioned on
        its version); the deliveries made, in row order. Rows that used up their
        deliveries are dead-lettered instead. ``units`` (monoton -> unit): rows of one
        unit are delivered together or not at all (FIFO runs: take_runs)."""
        ctx = self._ctx
        if any(r.redrive_to is not None for r in rows):
            rows = await self.dead_letters.finish_redrives(queue, bucket, rows)
        now = ctx.clock.now()
        if units is not None:
            rows = _cut_at_expiring(queue, rows, units, now)
        # Outliving the retention is not a failed delivery: such rows are retired as
        # expired (in the same conditional batch as the takes), never dead-lettered.
        expiring_rows = [r for r in rows if expiring(queue, r, now)]
        live = [r for r in rows if not expiring(queue, r, now)]
        spent = [r for r in live if r.delivery_count >= queue.options.max_delivery_count]
        if spent:
            await self.dead_letters.dead_letter_all(queue, bucket, spent, unsealed=unsealed)
        now = ctx.clock.now()
        writes = [(row, row.retired(now, expired=True), False) for row in expiring_rows] + [
            (row, _taken(row, now, invisibility_ms), True)
            for row in live
            if row.delivery_count < queue.options.max_delivery_count
        ]
        if not writes:
            return []
        entries = [(row.version, new) for row, new, _ in writes]
        if units is None:
            write = self._write_takes(queue.id, bucket, unsealed)
            applied = await self._takes.run((queue.id, bucket, unsealed), entries, write)
        else:  # FIFO runs: a unit all or nothing, never merged with other calls' entries
            unit_of = [units[row.monoton] for row, _, _ in writes]
            applied = await self._write_takes(queue.id, bucket, unsealed, unit_of)(entries)
        if unsealed:
            won_rows = [new for (_, new, _), won in zip(writes, applied, strict=True) if won]
            self._note_reader_writes(queue.id, bucket, won_rows)
        got: list[Delivery] = []
        for (row, new, deliver), won in zip(writes, applied, strict=True):
            if won:
                self.note_version(queue, row.monoton, new.version)
                if deliver:
                    got.append(delivery_of(queue, row, new))
                    if queue.options.fifo:
                        self._publisher.fifo.delivered(queue, [row])
            elif not unsealed and units is None:
                # Then someone won it: it is at least at the next version. (Not in a unit:
                # a row refused because another row of its unit lost is unchanged, and
                # noting it as taken would keep this server's readers off it for good.)
                self.note_version(queue, row.monoton, row.version + 1)
            # else another reader won it, or (unsealed) the bucket was sealed
        if expired := sum(
            won for (_, _, deliver), won in zip(writes, applied, strict=True) if not deliver
        ):
            ctx.log.info("messages_expired", queue=str(queue.id), bucket=bucket, count=expired)
        if got:  # every delivery is made here, by the reader and the invisibility side
            ctx.observers.delivered(queue, len(got))
            if self.on_leased is not None:
                self.on_leased(queue.id, now + invisibility_ms)
        return got


def _cut_at_expiring(
    queue: QueueDefinition, rows: list[MessageRow], units: dict[int, int], now: int
) -> list[MessageRow]:
    """A unit's rows up to the first that outlived the retention (retired as expired in
    the batch, it answers nothing): the ones after it would be leased and never answered."""
    cut: set[int] = set()
    kept: list[MessageRow] = []
    for row in sorted(rows, key=lambda r: r.monoton):
        if units[row.monoton] in cut:
            continue
        kept.append(row)
        if expiring(queue, row, now):
            cut.add(units[row.monoton])
    return kept


def latest_only(got: list[Delivery]) -> list[Delivery]:
    """One delivery per message in an answer. A receive slower than its leases (a loaded
    cluster's LWTs) may take a message again once its first lease is over: the answer keeps
    the message in its first place (a FIFO group's order) with its latest receipt (the
    earlier one is stale)."""
    where: dict[tuple[int, int], int] = {}
    answer: list[Delivery] = []
    for d in got:
        key = (d.receipt.partition, d.receipt.monoton)
        if key in where:
            answer[where[key]] = d
        else:
            where[key] = len(answer)
            answer.append(d)
    return answer


def candidate(queue: QueueDefinition, row: MessageRow, now: int) -> bool:
    """Whether a row may be delivered now (the reader and the invisibility side both ask
    here; what else makes a row undeliverable belongs here too)."""
    return row.visible(now)


def _taken(row: MessageRow, now: int, invisibility_ms: int) -> MessageRow:
    """The row as a delivery leaves it: leased for ``invisibility_ms``, one more delivery."""
    return msgspec.structs.replace(
        row,
        version=row.version + 1,
        delivery_count=row.delivery_count + 1,
        next_visible_on=now + invisibility_ms,
        updated_at=now,
        change=new_token(),
        first_delivered_at=now if row.first_delivered_at is None else row.first_delivered_at,
    )


def without_body(row: MessageRow) -> MessageRow:
    """The row's state without its body and attributes (which never change after the
    insert): what a server keeps of rows it only needs to pass or redeliver later."""
    return msgspec.structs.replace(row, message="", attributes={}, attribute_types={})


def delivery_of(queue: QueueDefinition, row: MessageRow, taken: MessageRow) -> Delivery:
    """The delivery that ``taken`` (the row as the consuming write left it) made of ``row``."""
    return Delivery(
        receipt=PopReceipt(queue.version, row.monoton, taken.version, row.tag, queue.partition),
        message=row.message,
        # The deliveries before this one (0 on the first), as CassieQ counts them; the
        # row keeps the deliveries made, and max_delivery_count is judged on the count
        # before a delivery (in consume), i.e. on this same number.
        delivery_count=row.delivery_count,
        attributes=row.attributes,
        sent_at=row.created_at,
        first_delivered_at=taken.first_delivered_at,
        attribute_types=row.attribute_types,
        group=row.group,
        sequence_number=(
            sequence_number(queue.partition, row.monoton) if queue.options.fifo else None
        ),
    )
