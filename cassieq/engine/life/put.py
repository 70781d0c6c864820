"""Put: take a monoton, write the message into its bucket.

Two strategies (the benchmark compares them):
- ``per_put``: each put takes its own monoton (one compare-and-set) and writes its own row
  (one conditional batch): the original design's two LWTs per put;
- ``grouped`` (default): puts that arrive while a group is being written wait for the next
  group; a group takes one contiguous monoton range (one compare-and-set) and writes one
  conditional batch per bucket partition it spans.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from cassieq.engine import policy
from cassieq.engine.context import EngineContext
from cassieq.engine.errors import Contention, InvalidArgument
from cassieq.engine.hints import BucketHints
from cassieq.engine.life import fifo
from cassieq.engine.life.fifo import Fifo
from cassieq.engine.life.monotons import Monotons, MonotonStrategy
from cassieq.engine.life.partitions import Rotation
from cassieq.model import MessageRow, OutgoingMessage, QueueDefinition, QueueId
from cassieq.store.batches import by_bytes, row_bytes
from cassieq.tokens import new_token

MAX_PUT_ATTEMPTS = 8
MAX_GROUP = 512


@dataclass
class _Put:
    queue: QueueDefinition
    message: str
    invisibility_ms: int
    done: asyncio.Future[MessageRow]
    attributes: dict[str, str] = field(default_factory=dict)
    attribute_types: dict[str, str] = field(default_factory=dict)
    attempts: int = field(default=0)
    # FIFO queues: the message's group and deduplication key; a duplicate's answer is the
    # first send's message, of this partition.
    group: str | None = None
    dedup_key: str | None = None
    duplicate_of: int | None = None
    # A put of the key another put in its group claims: answered as that one is.
    follows: _Put | None = None


class Publisher:
    def __init__(
        self,
        ctx: EngineContext,
        strategy: MonotonStrategy,
        hints: BucketHints,
    ) -> None:
        self._ctx = ctx
        self._hints = hints
        self._monotons = Monotons(ctx)
        self.fifo = Fifo(ctx)
        self._grouped = strategy == "grouped"
        self._waiting: dict[QueueId, list[_Put]] = {}
        self._flushing: set[QueueId] = set()
        self._tasks: set[asyncio.Task[None]] = set()  # held: the loop keeps only weak refs
        # Told of every successful write (long polling wakes this server's waiters with it).
        self.on_written: Callable[[QueueId, list[MessageRow]], None] | None = None

    def pick_partition(self, queue: QueueDefinition, rotation: Rotation) -> int:
        """Where this server's next put without a key goes (life/partitions.py): a
        partition with a group gathering behind a write (joined: no LWT of its own), else
        one this server writes nothing to now, else the rotation's next."""
        partitions = queue.options.partitions
        ids = [queue.in_partition(p).id for p in range(partitions)]  # views: made once
        for p, qid in enumerate(ids):
            if self._waiting.get(qid):
                return p
        start = rotation.next(partitions)
        for i in range(partitions):
            p = (start + i) % partitions
            if ids[p] not in self._flushing:
                return p
        return start

    async def take_monotons(self, queue: QueueId, count: int = 1) -> int:
        """Reserve ``count`` consecutive monotons (one compare-and-set); the first."""
        return await self._monotons.take(queue, count)

    async def put(
        self,
        queue: QueueDefinition,
        message: str,
        initial_invisibility_ms: int | None = None,
    ) -> int:
        """Store a message; return its monoton (no delay given: the queue's delaySeconds)."""
        sent = OutgoingMessage(body=message, delay_ms=initial_invisibility_ms)
        return (await self.put_rows(queue, [sent]))[0].monoton

    async def put_rows(
        self, queue: QueueDefinition, messages: Sequence[OutgoingMessage]
    ) -> list[MessageRow]:
        """Store messages; return their rows as written, in the order given."""
        return [row for row, _ in await self.send_rows(queue, messages)]

    async def send_rows(
        self, queue: QueueDefinition, messages: Sequence[OutgoingMessage]
    ) -> list[tuple[MessageRow, int | None]]:
        """Store messages; return their rows as written, in the order given, each with the
        partition of the message it duplicates (FIFO deduplication; None: stored now).
        Concurrent puts to one queue share one monoton range and one write per bucket; the
        messages of one call join the waiting puts together, in their order (a v2 batch is
        one call: one group, unless more than MAX_GROUP puts wait)."""
        options = queue.options
        delays: list[int] = []
        for index, m in enumerate(messages):
            # The queue's policy, here because every new message of every API comes here.
            policy.check_message(options, m, index)
            fifo.check_message(options, m, index)
            delay = policy.first_delay_ms(options, m)
            if delay < 0:
                raise InvalidArgument("initial invisibility must be >= 0")
            delays.append(delay)
        if not messages:
            return []
        # The keys' claims are read first (a plain read): a retry found so takes no monoton.
        # Without the read a retry's monoton was left a hole, and the reader waits out a
        # hole's grace (2 s) at each: a three-node fifo-check's reader fell 75 buckets
        # behind on its 5 % of retries (the statistics of its empty queue showed 1,487).
        keys = [fifo.dedup_key(options, m) for m in messages]
        groups = [m.group for m in messages]
        known = (
            await self.fifo.claims.find(queue, keys, groups) if any(keys) else [None] * len(keys)
        )
        answers: dict[int, tuple[MessageRow, int | None]] = {}
        for index, claim in enumerate(known):
            if claim is not None:
                done = await self.fifo.answer_duplicate(queue, claim, self.take_monotons)
                answers[index] = (done.row, done.partition)
        # A key repeated within the call: its first message is the one sent, in order.
        first_of: dict[str, int] = {}
        repeats: dict[int, int] = {}
        for index, key in enumerate(keys):
            if key is not None and index not in answers:
                repeats[index] = first_of.setdefault(key, index)
        loop = asyncio.get_running_loop()
        sending = [i for i in range(len(messages)) if i not in answers and repeats.get(i, i) == i]
        puts = [
            _Put(
                queue, messages[i].body, delays[i], loop.create_future(), messages[i].attributes,
                messages[i].attribute_types, group=messages[i].group, dedup_key=keys[i],
            )
            for i in sending
        ]  # fmt: skip
        rows = await self._put_all(queue, puts)
        for i, put, row in zip(sending, puts, rows, strict=True):
            answers[i] = _outcome(put, row)
        for i, first in repeats.items():
            if first != i:
                row, of = answers[first]
                answers[i] = (row, queue.partition if of is None else of)
        return [answers[i] for i in range(len(messages))]

    async def _put_all(self, queue: QueueDefinition, puts: list[_Put]) -> list[MessageRow]:
        if not puts:
            return []
        loop = asyncio.get_running_loop()
        if not self._grouped:
            return list(await asyncio.gather(*(self._write_alone(put) for put in puts)))
        qid = queue.id
        self._waiting.setdefault(qid, []).extend(puts)
        if qid not in self._flushing:
            self._flushing.add(qid)
            task = loop.create_task(self._flush(qid))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        # The futures themselves, not a task per put: gather wraps no future in a task.
        # The first failure is raised, as the puts' own would be (gather marks the rest
        # retrieved).
        return list(await asyncio.gather(*(put.done for put in puts)))

    async def _write_alone(self, put: _Put) -> MessageRow:
        await self._write([put])
        while not put.done.done():  # its bucket was finalized: again, with a new monoton
            await self._write([put])
        return put.done.result()

    async def _flush(self, queue: QueueId) -> None:
        try:
            while waiting := self._waiting.pop(queue, []):
                group, rest = waiting[:MAX_GROUP], waiting[MAX_GROUP:]
                if rest:
                    self._waiting.setdefault(queue, [])[:0] = rest
                await self._write(group)
                # Puts whose bucket was finalized under them join the next group.
                retry = [p for p in group if not p.done.done() and p.follows is None]
                if retry:
                    self._waiting.setdefault(queue, [])[:0] = retry
        finally:
            self._flushing.discard(queue)

    async def _write(self, group: list[_Put]) -> None:
        """Take monotons for the group and write it, one conditional batch per bucket.

        A put whose batch was refused (its bucket finalized: a very slow writer) is left
        undone for the caller to retry; its monoton is a hole.
        """
        ctx, queue = self._ctx, group[0].queue
        if queue.options.fifo:
            group = _lead(group, queue.partition)
        try:
            first = await self._monotons.take(queue.id, len(group))
        except Exception as exc:
            _fail(group, exc)
            return
        now = ctx.clock.now()
        pairs = [
            (
                put,
                new_message(
                    first + offset,
                    put.message,
                    now,
                    put.invisibility_ms,
                    attributes=put.attributes,
                    attribute_types=put.attribute_types,
                    group=put.group,
                ),
            )
            for offset, put in enumerate(group)
        ]
        if queue.options.fifo:
            pairs = await self._claim_and_record(queue, pairs)
        by_bucket: dict[int, list[tuple[_Put, MessageRow]]] = defaultdict(list)
        for put, row in pairs:
            by_bucket[queue.bucket_of(row.monoton)].append((put, row))
        # Large messages go in parts (each part's puts decided on their own): one batch
        # over Cassandra's request limit failed every put in it.
        writes = [
            (bucket, part)
            for bucket, items in by_bucket.items()
            for part in by_bytes(items, lambda item: row_bytes(item[1]))
        ]
        results = await asyncio.gather(
            *(
                ctx.store.insert_messages(queue.id, bucket, [row for _, row in items], now)
                for bucket, items in writes
            ),
            return_exceptions=True,
        )
        for (bucket, items), result in zip(writes, results, strict=True):
            if result is True:
                written = [row for _, row in items]
                self._hints.add_written(queue.id, bucket, written)
                if self.on_written is not None:
                    self.on_written(queue.id, written)
                for put, row in items:
                    if not put.done.done():
                        put.done.set_result(row)
                if queue.options.fifo:
                    await self._claims_written(queue, items)
            elif isinstance(result, BaseException):
                _fail([put for put, _ in items], result)
            else:
                ctx.log.warning("put_into_finalized_bucket", queue=str(queue.id))
                for put, _ in items:
                    put.attempts += 1
                    if put.attempts >= MAX_PUT_ATTEMPTS:
                        _fail([put], Contention(f"could not write a message into {queue.id}"))

    async def _claim_and_record(
        self, queue: QueueDefinition, pairs: list[tuple[_Put, MessageRow]]
    ) -> list[tuple[_Put, MessageRow]]:
        """FIFO: claim each keyed put's deduplication key (a put that finds a fresh claim is
        answered with that claim's message, its own monoton left a hole) and record the rest
        in their groups, before anything is written (engine/life/fifo.py); the pairs left."""
        keyed = [(put, row) for put, row in pairs if put.dedup_key is not None]
        dropped: set[int] = set()
        claims = await self.fifo.claims.claim(
            queue, [(put.dedup_key or "", row) for put, row in keyed], queue.partition
        )
        for (put, _), held in zip(keyed, claims, strict=True):
            if held is None:
                continue
            dropped.add(id(put))
            try:
                if isinstance(held, BaseException):
                    raise held
                done = await self.fifo.answer_duplicate(queue, held, self.take_monotons)
            except Exception as exc:
                _fail([put], exc)
                continue
            if not put.done.done():  # (its caller may have given up: cancelled)
                put.duplicate_of = done.partition
                put.done.set_result(done.row)
        left = [(put, row) for put, row in pairs if id(put) not in dropped]
        try:
            await self.fifo.add_entries(queue, [row for _, row in left])
        except Exception as exc:
            _fail([put for put, _ in left], exc)
            return []
        return left

    async def _claims_written(
        self, queue: QueueDefinition, items: list[tuple[_Put, MessageRow]]
    ) -> None:
        keyed = [(put.dedup_key, put.group) for put, _ in items if put.dedup_key is not None]
        if keyed:
            await self.fifo.claims.written(queue, keyed)


def _lead(group: list[_Put], partition: int) -> list[_Put]:
    """The group's puts but those of a key another put of the group has (two sends of it at
    once, from two calls): such a put takes no monoton (a hole the reader would wait out)
    and claims nothing (a group's claims are one batch, which must not hold a key twice);
    it is answered as the first put of its key is."""
    firsts: dict[str, _Put] = {}
    leading: list[_Put] = []
    for put in group:
        first = put if put.dedup_key is None else firsts.setdefault(put.dedup_key, put)
        if first is put:
            leading.append(put)
        else:
            put.follows = first
            _answer_with(put, first, partition)
    return leading


def _answer_with(put: _Put, first: _Put, partition: int) -> None:
    """``put`` is answered as ``first`` is: a duplicate of its message, or its failure."""

    def answer(done: asyncio.Future[MessageRow]) -> None:
        if put.done.done():
            return
        if done.cancelled():
            # The first's caller gave up; this one did not: it is told to send again.
            put.done.set_exception(
                Contention(f"a send of the same deduplication id to {put.queue.id} was cancelled")
            )
        elif (exc := done.exception()) is not None:
            put.done.set_exception(exc)
        else:
            put.duplicate_of = partition if first.duplicate_of is None else first.duplicate_of
            put.done.set_result(done.result())

    first.done.add_done_callback(answer)


def _outcome(put: _Put, row: MessageRow) -> tuple[MessageRow, int | None]:
    return row, put.duplicate_of


def new_message(
    monoton: int,
    message: str,
    now: int,
    invisibility_ms: int = 0,
    delivery_count: int = 0,
    *,
    attributes: dict[str, str] | None = None,
    attribute_types: dict[str, str] | None = None,
    group: str | None = None,
) -> MessageRow:
    """A message as a put writes it (the pipeline's ingest writes the very same rows)."""
    return MessageRow(
        monoton=monoton,
        message=message,
        version=1,
        delivery_count=delivery_count,
        acked=False,
        next_visible_on=now + invisibility_ms,
        tag=new_token(),
        created_at=now,
        updated_at=now,
        change=new_token(),
        attributes=attributes or {},
        attribute_types=attribute_types or {},
        group=group,
    )


def _fail(puts: list[_Put], exc: BaseException) -> None:
    for put in puts:
        if not put.done.done():
            put.done.set_exception(exc)
