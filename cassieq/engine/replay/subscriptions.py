"""The subscriptions' façade: what the API calls (``QueueEngine.subscriptions``).

A subscription names a queue and keeps its own position in it (ordered mode: read by
position, commit, seek), over the queue's own message rows: a put costs the same with any
number of subscriptions. How positions, reads, holes and retention work:
docs/guides/subscriptions.md.
"""

from __future__ import annotations

import builtins

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import (
    EngineError,
    InvalidArgument,
    PositionConflict,
    SubscriptionExists,
    SubscriptionLimitReached,
    SubscriptionNotFound,
)
from cassieq.engine.life.long_poll import Waiters
from cassieq.engine.life.long_poll_slots import LongPollSlots
from cassieq.engine.life.put import Publisher
from cassieq.engine.policy import check_seconds
from cassieq.engine.replay import positions
from cassieq.engine.replay.ordered import OrderedReader, ReadBudget
from cassieq.engine.replay.retention import Retention
from cassieq.engine.replay.shared import SharedConsumer
from cassieq.engine.replay.shared_acks import SharedAcks
from cassieq.engine.replay.shared_rows import drop_deliveries
from cassieq.engine.tenancy.queues import QueueDirectory
from cassieq.model import (
    Delivery,
    MessageRow,
    PopReceipt,
    QueueDefinition,
    VisibilityChange,
)
from cassieq.model_subscriptions import (
    MAX_READ_LIMIT,
    MAX_SUBSCRIPTIONS_PER_QUEUE,
    MODES,
    ReadBatch,
    ReadMessage,
    SeekTarget,
    SubscriptionDef,
    SubscriptionInfo,
    SubscriptionMode,
    rfc3339_ms,
)
from cassieq.tokens import new_token
from cassieq.wire_limits import name_problem

# A shared subscription's receive, as the queue's (v2 maxMessages).
MAX_RECEIVE = 100
_OTHER_MODE = {
    "shared": "subscription {name!r} is shared: receive from it (POST .../receive), "
    "it has no position to read or commit",
    "ordered": "subscription {name!r} is ordered: read it by position (GET .../messages)",
}


def parse_time(text: str, what: str) -> int:
    """An RFC 3339 time with its offset, as ms since the epoch, a fraction of a millisecond
    rounded up (the first message sent at or after it; InvalidArgument if not a time)."""
    try:
        return rfc3339_ms(text, what, "an RFC 3339 time with its time zone offset (Z, +hh:mm)")
    except ValueError as bad:
        raise InvalidArgument(str(bad)) from None


class Subscriptions:
    def __init__(
        self,
        ctx: EngineContext,
        queues: QueueDirectory,
        publisher: Publisher,
        waiters: Waiters,
        slots: LongPollSlots,
    ) -> None:
        self._ctx = ctx
        self._queues = queues
        self._reader = OrderedReader(ctx)
        self._retention = Retention(ctx)
        self._shared = SharedConsumer(ctx, self._reader, publisher, queues)
        self._acks = SharedAcks(ctx)
        self._waiters = waiters
        self._slots = slots

    # ------------------------------------------------------------------ definitions
    async def create(
        self, account: str, queue: str, name: str, mode: SubscriptionMode, start: str
    ) -> tuple[SubscriptionDef, bool]:
        """The subscription and whether this call created it (False: it existed with these
        options). ``start``: "earliest", "latest" or an RFC 3339 time. Raises
        QueueNotFound, SubscriptionExists (other options: 409), InvalidArgument (a bad name,
        mode or start; "shared" is refused until shared subscriptions exist),
        SubscriptionLimitReached (409)."""
        problem = name_problem("a subscription name", name)
        if problem is not None:
            raise InvalidArgument(problem)
        if mode not in MODES:
            raise InvalidArgument(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        start_ms = None if start in ("earliest", "latest") else parse_time(start, "start")
        q = await self._queues.get(account, queue)
        store = self._ctx.store
        existing = await store.read_subscription(q.id, name)
        if existing is None:
            if len(await store.read_subscriptions(q.id)) >= MAX_SUBSCRIPTIONS_PER_QUEUE:
                raise SubscriptionLimitReached(
                    f"queue {queue!r} has {MAX_SUBSCRIPTIONS_PER_QUEUE} subscriptions already"
                )
            # Kept from here on before the start is looked up: nothing it finds is dropped.
            await self._retention.mark(q)
            if start == "latest":
                target = SeekTarget(to="latest")
            else:
                target = (
                    SeekTarget(to="earliest") if start_ms is None else SeekTarget(time=start_ms)
                )
            now = self._ctx.clock.now()
            position = await self._position_of(q, target)
            sub = SubscriptionDef(
                queue=q.id,
                name=name,
                mode=mode,
                start=start,
                created_at=now,
                position=position,
                revision=1,
                change=new_token(),
                # Shared: its deliveries' generation, new at every seek (a time: one of a
                # subscription deleted and created again under the same name differs).
                generation=now if mode == "shared" else 0,
                done=position if mode == "shared" else "",
            )
            existing = await store.insert_subscription(sub)
            if existing is None:
                self._ctx.log.info("subscription_created", queue=str(q.id), name=name, mode=mode)
                return sub, True
        if (existing.mode, existing.start) != (mode, start):
            raise SubscriptionExists(
                f"subscription {name!r} of queue {queue!r} exists with mode "
                f"{existing.mode!r} and start {existing.start!r}"
            )
        return existing, False

    async def list(self, account: str, queue: str) -> list[SubscriptionInfo]:
        q = await self._queues.get(account, queue)
        return [await self._info(q, d) for d in await self._ctx.store.read_subscriptions(q.id)]

    async def get(self, account: str, queue: str, name: str) -> SubscriptionInfo:
        """Raises QueueNotFound, SubscriptionNotFound."""
        q = await self._queues.get(account, queue)
        return await self._info(q, await self._definition(q, name))

    async def delete(self, account: str, queue: str, name: str) -> None:
        """Raises QueueNotFound, SubscriptionNotFound. The buckets kept for it go with the
        next sweep when it was the queue's last."""
        q = await self._queues.get(account, queue)
        sub = await self._definition(q, name)
        await self._ctx.store.delete_subscription(q.id, name)
        if sub.mode == "shared":  # its delivery rows, every bucket that may hold some
            await drop_deliveries(self._ctx, q, [name], self._retention)
        self._ctx.log.info("subscription_deleted", queue=str(q.id), name=name)

    # ------------------------------------------------------------------ ordered reads
    async def read(self, account: str, queue: str, name: str, limit: int) -> ReadBatch:
        """Up to ``limit`` (1..1000) messages after the committed position, in id order
        within each partition. Does not move the position (commit does). Raises
        QueueNotFound, SubscriptionNotFound, InvalidArgument (limit)."""
        if not 1 <= limit <= MAX_READ_LIMIT:
            raise InvalidArgument(f"limit must be 1 to {MAX_READ_LIMIT}, not {limit}")
        q = await self._queues.get(account, queue)
        sub = await self._definition(q, name, "ordered")
        views = q.partition_views()
        at = positions.decode(sub.position, len(views))
        # Each partition its share first, then what the others left to the ones that had
        # more: one partition's backlog does not hide the others'.
        share = -(-limit // len(views))
        budget = ReadBudget()  # bytes, over every partition
        found: builtins.list[tuple[int, builtins.list[MessageRow]]] = []
        ends = list(at)
        for rounds_left in (share, limit):
            for view in views:
                room = min(rounds_left, limit - sum(len(rows) for _, rows in found))
                if room <= 0:
                    break
                rows, ends[view.partition] = await self._reader.read(
                    view, ends[view.partition], room, budget
                )
                if rows:
                    found.append((view.partition, rows))
            if sum(len(rows) for _, rows in found) >= limit:
                break
        moving = list(at)
        messages = []
        for partition, rows in found:
            for row in rows:
                moving = positions.advanced(moving, partition, row.monoton + 1)
                messages.append(_read_message(partition, row, positions.encode(moving)))
        self._ctx.observers.subscription_read(q, name, len(messages))
        return ReadBatch(messages=messages, next=positions.encode(ends))

    async def commit(
        self, account: str, queue: str, name: str, position: str, expected: str | None
    ) -> SubscriptionDef:
        """Store ``position`` as the committed one (compare-and-set on ``expected`` when
        given: PositionConflict, 409, when it is not the stored one). Raises
        InvalidArgument for a position that is not one of this queue's."""
        q = await self._queues.get(account, queue)
        await self._definition(q, name, "ordered")
        canonical = await self._valid_position(q, position)
        count = len(q.partition_views())
        wanted = None if expected is None else positions.decode(expected, count)
        return await self._store_position(q, name, canonical, wanted)

    async def _valid_position(self, q: QueueDefinition, position: str) -> str:
        """``position``'s canonical text; InvalidArgument when it is not one of this queue's
        (or past the end of a partition)."""
        monotons = positions.decode(position, len(q.partition_views()))
        for view, monoton in zip(q.partition_views(), monotons, strict=True):
            if monoton > await self._ctx.store.read_monoton(view.id):
                raise InvalidArgument(
                    f"position {position[:80]!r} is past the end of partition {view.partition}"
                )
        return positions.encode(monotons)

    async def seek(
        self, account: str, queue: str, name: str, target: SeekTarget
    ) -> SubscriptionDef:
        """Move the committed position to ``target`` (replay): the next read starts there."""
        q = await self._queues.get(account, queue)
        sub = await self._definition(q, name)
        if sub.mode == "shared":
            return await self._seek_shared(q, sub, target)
        if target.position is not None:
            return await self.commit(account, queue, name, target.position, None)
        return await self._store_position(q, name, await self._position_of(q, target), None)

    # ------------------------------------------------------------------ shared consumption
    async def receive(
        self,
        account: str,
        queue: str,
        name: str,
        max_messages: int = 1,
        invisibility_s: int | None = None,
        wait_s: int = 0,
    ) -> builtins.list[Delivery]:
        """Up to ``max_messages`` deliveries of shared subscription ``name`` (leases,
        maxDeliveryCount and the dead-letter queue as the queue's own); with ``wait_s``,
        wait for the first one that long. Raises QueueNotFound, SubscriptionNotFound,
        InvalidArgument (an ordered subscription, a bad count or lease)."""
        if not 1 <= max_messages <= MAX_RECEIVE:
            raise InvalidArgument(f"maxMessages must be 1 to {MAX_RECEIVE}, not {max_messages}")
        q = await self._queues.get(account, queue)
        first: builtins.list[SubscriptionDef] = [await self._definition(q, name, "shared")]
        if invisibility_s is None:
            invisibility_s = q.options.visibility_timeout_seconds
        check_seconds("visibilityTimeoutSeconds", invisibility_s)

        async def receive() -> builtins.list[Delivery]:
            # The definition read above serves the first try; a waiting receive's later
            # tries read it again (its cursor moves).
            sub = first.pop() if first else await self._definition(q, name, "shared")
            return await self._shared.receive(q, sub, max_messages, invisibility_s * 1000)

        if wait_s <= 0:
            return await receive()
        with self._slots.hold(account) as may_wait:
            if not may_wait:  # this account's share of waiting receives, or all, are taken
                return await receive()
            partitions = q.options.stored_partitions
            return await self._waiters.receive(q.id, receive, wait_s, max_messages, partitions)

    async def ack_batch(
        self, account: str, queue: str, name: str, receipts: builtins.list[PopReceipt]
    ) -> builtins.list[EngineError | None]:
        """Each delivery of shared subscription ``name`` acked, or why not, in order."""
        q = await self._queues.get(account, queue)
        return await self._acks.ack_many(q, await self._definition(q, name, "shared"), receipts)

    async def change_visibility(
        self, account: str, queue: str, name: str, changes: builtins.list[VisibilityChange]
    ) -> builtins.list[PopReceipt | EngineError]:
        """Each delivery's new lease (its new receipt), or why not, in order."""
        q = await self._queues.get(account, queue)
        sub = await self._definition(q, name, "shared")
        return await self._acks.change_many(q, sub, changes)

    async def _seek_shared(
        self, q: QueueDefinition, sub: SubscriptionDef, target: SeekTarget
    ) -> SubscriptionDef:
        """A new generation from ``target``: every message from there is delivered afresh,
        and every receipt given before is stale."""
        if target.position is None:
            position = await self._position_of(q, target)
        else:
            position = await self._valid_position(q, target.position)
        for _ in range(self._ctx.tuning.max_cas_attempts):
            new = msgspec.structs.replace(
                sub,
                position=position,
                done=position,
                generation=max(self._ctx.clock.now(), sub.generation + 1),
                revision=sub.revision + 1,
                change=new_token(),
            )
            if await self._ctx.store.cas_subscription(q.id, sub.name, sub.revision, new):
                self._ctx.observers.subscription_committed(q, sub.name, True)
                return new
            sub = await self._definition(q, sub.name)
        self._ctx.observers.subscription_committed(q, sub.name, False)
        raise PositionConflict(f"subscription {sub.name!r} kept moving: try again")

    # ------------------------------------------------------------------ parts
    async def _definition(
        self, q: QueueDefinition, name: str, mode: SubscriptionMode | None = None
    ) -> SubscriptionDef:
        """The stored subscription (SubscriptionNotFound); with ``mode``, InvalidArgument
        when it is of the other mode (each is consumed its own way)."""
        sub = await self._ctx.store.read_subscription(q.id, name)
        if sub is None:
            raise SubscriptionNotFound(f"subscription {name!r} of queue {q.name!r} not found")
        if mode is not None and sub.mode != mode:
            raise InvalidArgument(_OTHER_MODE[sub.mode].format(name=name))
        return sub

    async def _store_position(
        self, q: QueueDefinition, name: str, position: str, expected: builtins.list[int] | None
    ) -> SubscriptionDef:
        count = len(q.partition_views())
        for _ in range(self._ctx.tuning.max_cas_attempts):
            sub = await self._definition(q, name)
            if expected is not None and positions.decode(sub.position, count) != expected:
                self._ctx.observers.subscription_committed(q, name, False)
                raise PositionConflict(
                    f"subscription {name!r} is at another position than the expected one"
                )
            change = new_token()
            if await self._ctx.store.cas_subscription_position(
                q.id, name, sub.revision, position, change
            ):
                self._ctx.observers.subscription_committed(q, name, True)
                return SubscriptionDef(
                    queue=sub.queue, name=sub.name, mode=sub.mode, start=sub.start,
                    created_at=sub.created_at, position=position, revision=sub.revision + 1,
                    change=change,
                )  # fmt: skip
        self._ctx.observers.subscription_committed(q, name, False)
        raise PositionConflict(f"subscription {name!r} kept moving: try again")

    async def _position_of(self, q: QueueDefinition, target: SeekTarget) -> str:
        store, monotons = self._ctx.store, []
        for view in q.partition_views():
            if target.to == "latest":
                monotons.append(await store.read_monoton(view.id))
                continue
            first = await self._retention.first_kept(view) * view.options.bucket_size
            if target.time is None:
                monotons.append(first)
            else:
                monotons.append(await self._reader.first_at_or_after(view, first, target.time))
        return positions.encode(monotons)

    async def _info(self, q: QueueDefinition, sub: SubscriptionDef) -> SubscriptionInfo:
        if sub.mode == "shared":
            return await self._shared.info(q, sub)
        views = q.partition_views()
        at = positions.decode(sub.position, len(views))
        lag, oldest = 0, None
        for view, start in zip(views, at, strict=True):
            top = await self._ctx.store.read_monoton(view.id)
            lag += max(0, top - start)
            rows, _ = await self._reader.read(view, start, 1, top=top)
            if rows and (oldest is None or rows[0].created_at < oldest):
                oldest = rows[0].created_at
        return SubscriptionInfo(definition=sub, lag=lag, oldest_unread_at=oldest)


def _read_message(partition: int, row: MessageRow, position: str) -> ReadMessage:
    return ReadMessage(
        partition=partition,
        monoton=row.monoton,
        body=row.message,
        attributes=row.attributes,
        sent_at=row.created_at,
        position=position,
        group=row.group,
    )
