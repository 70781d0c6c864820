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
from cassieq.engine.life.monotons import Monotons, MonotonStrategy
from cassieq.engine.life.partitions import Rotation
from cassieq.model import MessageRow, OutgoingMessage, QueueDefinition, QueueId
from cassieq.store.base import by_bytes, row_bytes
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
        """Store messages; return their rows as written, in the order given. Concurrent
        puts to one queue share one monoton range and one write per bucket; the messages
        of one call join the waiting puts together, in their order (a v2 batch is one
        call: one group, unless more than MAX_GROUP puts wait)."""
        options = queue.options
        delays: list[int] = []
        for index, m in enumerate(messages):
            # The queue's policy, here because every new message of every API comes here.
            policy.check_message(options, m, index)
            delay = policy.first_delay_ms(options, m)
            if delay < 0:
                raise InvalidArgument("initial invisibility must be >= 0")
            delays.append(delay)
        if not messages:
            return []
        loop = asyncio.get_running_loop()
        puts = [
            _Put(queue, m.body, delay, loop.create_future(), m.attributes, m.attribute_types)
            for m, delay in zip(messages, delays, strict=True)
        ]
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
                retry = [p for p in group if not p.done.done()]
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
        try:
            first = await self._monotons.take(queue.id, len(group))
        except Exception as exc:
            _fail(group, exc)
            return
        now = ctx.clock.now()
        by_bucket: dict[int, list[tuple[_Put, MessageRow]]] = defaultdict(list)
        for offset, put in enumerate(group):
            row = new_message(
                first + offset,
                put.message,
                now,
                put.invisibility_ms,
                attributes=put.attributes,
                attribute_types=put.attribute_types,
            )
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
            elif isinstance(result, BaseException):
                _fail([put for put, _ in items], result)
            else:
                ctx.log.warning("put_into_finalized_bucket", queue=str(queue.id))
                for put, _ in items:
                    put.attempts += 1
                    if put.attempts >= MAX_PUT_ATTEMPTS:
                        _fail([put], Contention(f"could not write a message into {queue.id}"))


def new_message(
    monoton: int,
    message: str,
    now: int,
    invisibility_ms: int = 0,
    delivery_count: int = 0,
    *,
    attributes: dict[str, str] | None = None,
    attribute_types: dict[str, str] | None = None,
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
    )


def _fail(puts: list[_Put], exc: BaseException) -> None:
    for put in puts:
        if not put.done.done():
            put.done.set_exception(exc)
