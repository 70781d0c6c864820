"""Shared subscriptions: a subscription consumed like a queue of its own, over the queue's
own message rows (no copy per subscription).

A shared subscription keeps, besides its definition row, one *delivery row* per message it
has delivered (schema 0015, apart from the message rows): version, deliveries, lease end,
finish. Its definition holds three things moved together by compare-and-set on its
revision: ``position`` (per partition, the next message never delivered: the *cursor*),
``done`` (the first message not finished: acked, expired or dead-lettered) and the seek
``generation`` (delivery rows are per generation, so a seek starts afresh, and receipts of
before it are stale).

- A first delivery walks the partition from the cursor with the ordered reader (so a
  message is met exactly once, in place, whatever its writer's delay: holes are waited
  for until the row lands or the bucket is finalized; repair copies are skipped) and
  takes each message with an INSERT IF NOT EXISTS of its delivery row: of concurrent
  receivers exactly one wins each. The cursor then moves past the messages decided (won
  here or found taken), never past one without a delivery row.
- A later delivery (a lease that ran out) is the row's compare-and-set on its version, found
  by scanning the delivery rows between ``done`` and the cursor, as the queue's invisibility
  side scans its window. ``done`` moves past the buckets whose rows are all finished.
- Ack and a new lease are compare-and-sets on the row's version and tag (shared_acks.py).

Every compare-and-set is resolved by the store when its answer is lost (change tokens).
"""

from __future__ import annotations

import asyncio
import random

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import SubscriptionNotFound
from cassieq.engine.life.expire import expiring
from cassieq.engine.life.put import Publisher
from cassieq.engine.replay import positions
from cassieq.engine.replay.ordered import OrderedReader
from cassieq.engine.tenancy.queues import QueueDirectory
from cassieq.model import Delivery, MessageRow, OutgoingMessage, PopReceipt, QueueDefinition
from cassieq.model_subscriptions import Finished, SubDelivery, SubscriptionDef, SubscriptionInfo
from cassieq.tokens import new_token

# Buckets of delivery rows one receive scans behind the cursor, per partition.
SCAN_BUCKETS = 4
# Reads from the cursor one receive makes per partition when others took what it read.
FRESH_ROUNDS = 4
# Buckets of delivery rows a subscription's lag counts exactly, per partition.
INFO_BUCKETS = 64


class SharedConsumer:
    def __init__(
        self,
        ctx: EngineContext,
        reader: OrderedReader,
        publisher: Publisher,
        queues: QueueDirectory,
    ) -> None:
        self._ctx = ctx
        self._reader = reader
        self._publisher = publisher
        self._queues = queues

    async def receive(
        self, q: QueueDefinition, sub: SubscriptionDef, want: int, invisibility_ms: int
    ) -> list[Delivery]:
        """Up to ``want`` deliveries of subscription ``sub``: leases that ran out first,
        then messages never delivered; the cursor and done position moved after."""
        views = q.partition_views()
        count = len(views)
        cursor = positions.decode(sub.position, count)
        done = positions.decode(sub.done or sub.position, count)
        order = random.sample(views, count)  # no partition always first
        # The scans behind the cursor, every partition's at once (reads only).
        scans = await asyncio.gather(
            *(self._scan(v, sub, done[v.partition], cursor[v.partition]) for v in order)
        )
        got: list[Delivery] = []
        for view, scanned in zip(order, scans, strict=True):
            p = view.partition
            taken, done[p] = await self._redeliver(
                view, sub, done[p], cursor[p], scanned, want - len(got), invisibility_ms
            )
            got += taken
        moved = list(cursor)
        # Then messages never delivered: the partitions one after another from a random one
        # until the count is reached, as the queue's own receive. Concurrent receivers then
        # mostly start at different partitions; asking every partition for its share at
        # once sent each of them to every partition's cursor, where all but one of their
        # conditional inserts lose (measured on the three-node cluster, docs/design).
        for view in order:
            if len(got) >= want:
                break
            p = view.partition
            taken, moved[p] = await self._fresh(
                view, sub, cursor[p], want - len(got), invisibility_ms
            )
            got += taken
        await self.advance(q, sub, moved, done)
        if got:
            self._ctx.observers.subscription_delivered(q, sub.name, len(got))
        return got

    # ------------------------------------------------------------------ first deliveries
    async def _fresh(
        self, view: QueueDefinition, sub: SubscriptionDef, start: int, room: int, lease_ms: int
    ) -> tuple[list[Delivery], int]:
        """Deliveries of messages never delivered, from ``start``; where the cursor may go
        (past every message found taken or taken here, and the holes for good)."""
        got: list[Delivery] = []
        at = start
        for _ in range(FRESH_ROUNDS):
            expired: list[MessageRow] = []
            rows, end = await self._reader.read(view, at, room - len(got), expired=expired)
            if rows or expired:
                got += await self._first_takes(view, sub, rows, lease_ms, expired)
            at = max(at, end)
            if not rows or len(got) >= room:
                break
        return got, at

    async def _first_takes(
        self,
        view: QueueDefinition,
        sub: SubscriptionDef,
        rows: list[MessageRow],
        lease_ms: int,
        expired: list[MessageRow],
    ) -> list[Delivery]:
        """Insert a delivery row for each message (a bucket's in one conditional batch, the
        buckets side by side); the deliveries this call won. A delayed message gets a row
        that is not a delivery, due when its delay ends (the scan behind delivers it); one
        that outlived retention unread, a row retired as expired (so it is counted once)."""
        now = self._ctx.clock.now()
        by_bucket: dict[int, list[tuple[MessageRow, SubDelivery]]] = {}
        for row in expired:
            state = SubDelivery(
                monoton=row.monoton, version=1, delivery_count=0, next_visible_on=now,
                tag=row.tag, updated_at=now, change=new_token(), finished="expired",
            )  # fmt: skip
            by_bucket.setdefault(view.bucket_of(row.monoton), []).append((row, state))
        for row in rows:
            delay_end = row.next_visible_on if row.delivery_count == 0 and not row.acked else 0
            delayed = delay_end > now
            state = SubDelivery(
                monoton=row.monoton,
                version=1,
                delivery_count=0 if delayed else 1,
                next_visible_on=delay_end if delayed else now + lease_ms,
                tag=row.tag,
                updated_at=now,
                change=new_token(),
                first_delivered_at=None if delayed else now,
            )
            by_bucket.setdefault(view.bucket_of(row.monoton), []).append((row, state))

        async def bucket_takes(
            bucket: int, pairs: list[tuple[MessageRow, SubDelivery]]
        ) -> list[Delivery]:
            won = await self._ctx.store.insert_sub_deliveries(
                view.id, sub.name, bucket, sub.generation, [s for _, s in pairs]
            )
            retired = sum(
                ok and s.finished == "expired" for (_, s), ok in zip(pairs, won, strict=True)
            )
            if retired:
                self._ctx.observers.subscription_expired(view, sub.name, retired)
            return [
                delivery(view, sub, row, state)
                for (row, state), ok in zip(pairs, won, strict=True)
                if ok and state.delivery_count == 1 and state.finished is None
            ]

        parts = await asyncio.gather(*(bucket_takes(b, pairs) for b, pairs in by_bucket.items()))
        return [d for part in parts for d in part]

    # ------------------------------------------------------------------ the scan behind
    async def _scan(
        self, view: QueueDefinition, sub: SubscriptionDef, done: int, cursor: int
    ) -> list[tuple[int, list[SubDelivery]]]:
        """The delivery rows of the buckets the scan behind the cursor looks at: 4 from the
        done position, and one more at random among the rest (a long lease at ``done``
        must not hold back the redelivery of every message after it)."""
        size = view.options.bucket_size
        first = done // size
        end = (cursor - 1) // size if cursor > done else first - 1  # the cursor's bucket
        scan = list(range(first, min(end, first + SCAN_BUCKETS - 1) + 1))
        if end >= first + SCAN_BUCKETS:
            scan.append(random.randint(first + SCAN_BUCKETS, end))
        found = await asyncio.gather(
            *(
                self._ctx.store.read_sub_deliveries(view.id, sub.name, b, sub.generation)
                for b in scan
            )
        )
        return list(zip(scan, found, strict=True))

    async def _redeliver(
        self,
        view: QueueDefinition,
        sub: SubscriptionDef,
        done: int,
        cursor: int,
        scanned: list[tuple[int, list[SubDelivery]]],
        room: int,
        lease_ms: int,
    ) -> tuple[list[Delivery], int]:
        """Deliver again (up to ``room``) the scanned messages between ``done`` and the
        cursor whose lease ran out (or whose delay ended); the done position as the rows
        show it."""
        size, now = view.options.bucket_size, self._ctx.clock.now()
        got: list[Delivery] = []
        new_done, passing = done, True
        first = done // size
        for bucket, states in scanned:
            open_ = [s for s in states if s.finished is None and done <= s.monoton < cursor]
            due = [s for s in open_ if s.next_visible_on <= now]
            if due and len(got) < room:
                taken, finished = await self._retake(
                    view, sub, bucket, due, room - len(got), lease_ms
                )
                got += taken
                open_ = [s for s in open_ if s.monoton not in finished]
            if passing and bucket < first + SCAN_BUCKETS:
                # Every message before the cursor has a row (the cursor passes none without):
                # a bucket whose rows are all finished is done with.
                if open_:
                    new_done, passing = max(new_done, min(s.monoton for s in open_)), False
                else:
                    new_done = min(cursor, (bucket + 1) * size)
        return got, new_done

    async def _retake(
        self,
        view: QueueDefinition,
        sub: SubscriptionDef,
        bucket: int,
        due: list[SubDelivery],
        room: int,
        lease_ms: int,
    ) -> tuple[list[Delivery], set[int]]:
        """Deliver due rows of one bucket again (in random order: fewer lost compare-and-sets
        between receivers); retire those whose message outlived retention or is gone, and
        dead-letter those that used up their deliveries. The deliveries, and the monotons
        this call finished."""
        now = self._ctx.clock.now()
        snap = await self._ctx.store.read_bucket(view.id, bucket)
        messages = {r.monoton: r for r in snap.messages}
        limit = view.options.max_delivery_count
        changes: list[tuple[SubDelivery, SubDelivery, bool]] = []  # (old, new, deliver)
        spent: list[tuple[SubDelivery, MessageRow]] = []
        expired = 0
        for state in random.sample(due, len(due)):
            row = messages.get(state.monoton)
            if row is None or expiring(view, row, now):
                changes.append((state, _changed(state, now, finished="expired"), False))
                expired += 1
            elif state.delivery_count >= limit:
                spent.append((state, row))
            elif sum(deliver for _, _, deliver in changes) < room:
                taken = msgspec.structs.replace(
                    _changed(state, now, visible_on=now + lease_ms),
                    delivery_count=state.delivery_count + 1,
                    first_delivered_at=state.first_delivered_at or now,
                )
                changes.append((state, taken, True))
        applied = await self._ctx.store.cas_sub_deliveries(
            view.id,
            sub.name,
            bucket,
            sub.generation,
            [(old.version, old.tag, new, deliver) for old, new, deliver in changes],
        )
        got = [
            delivery(view, sub, messages[new.monoton], new)
            for (_, new, deliver), ok in zip(changes, applied, strict=True)
            if ok and deliver
        ]
        finished = {
            new.monoton
            for (_, new, deliver), ok in zip(changes, applied, strict=True)
            if ok and not deliver
        }
        if expired and finished:
            self._ctx.observers.subscription_expired(view, sub.name, len(finished))
        for state, row in spent:
            if await self._dead_letter(view, sub, bucket, state, row):
                finished.add(state.monoton)
        return got, finished

    async def _dead_letter(
        self,
        view: QueueDefinition,
        sub: SubscriptionDef,
        bucket: int,
        state: SubDelivery,
        row: MessageRow,
    ) -> bool:
        """A message that used up its deliveries in this subscription: a copy to the queue's
        dead-letter queue, then retired here. Claimed first (a lease of the tuning's claim
        time), so one receiver moves it; a move cut short between the copy and the
        retirement is redone once the claim runs out (the copy may then be written twice:
        at least once, never lost). Without a dead-letter queue, retired (as the queue
        does); with one that does not exist, held (claimed again) until it exists. Whether this
        call retired it."""
        store, now = self._ctx.store, self._ctx.clock.now()
        key = (view.id, sub.name, bucket, sub.generation)
        dlq_name = view.options.dlq_name
        if dlq_name is None:
            retired = _changed(state, now, finished="dead_lettered")
            return (
                await store.cas_sub_deliveries(*key, [(state.version, state.tag, retired, False)])
            )[0]
        claim = _changed(state, now, visible_on=now + self._ctx.tuning.claim_ms)
        if not (await store.cas_sub_deliveries(*key, [(state.version, state.tag, claim, False)]))[
            0
        ]:
            return False  # another receiver is moving it, or it changed
        dlq = await self._queues.find(view.account, dlq_name, fresh=True)
        if dlq is None:
            self._ctx.log.warning(
                "dead_letter_queue_missing", queue=str(view.id), subscription=sub.name, dlq=dlq_name
            )
            return False  # held: claimed again when the claim runs out
        target = dlq.in_partition(random.randrange(dlq.options.partitions))
        copy = OutgoingMessage(
            body=row.message, attributes=row.attributes, attribute_types=row.attribute_types
        )
        await self._publisher.put_rows(target, [copy])
        retired = _changed(claim, self._ctx.clock.now(), finished="dead_lettered")
        done = (await store.cas_sub_deliveries(*key, [(claim.version, claim.tag, retired, False)]))[
            0
        ]
        self._ctx.log.info(
            "subscription_message_dead_lettered",
            queue=str(view.id),
            subscription=sub.name,
            monoton=row.monoton,
            dlq=str(dlq.id),
        )
        return done

    # ------------------------------------------------------------------ lag
    async def info(self, q: QueueDefinition, sub: SubscriptionDef) -> SubscriptionInfo:
        """Its lag (messages not finished: after the cursor, and delivered but not yet
        acked) and the send time of the oldest of them. Between the done position and the
        cursor the delivery rows are read (up to INFO_BUCKETS buckets per partition; past
        them every message counts as not finished)."""
        views = q.partition_views()
        cursor = positions.decode(sub.position, len(views))
        done = positions.decode(sub.done or sub.position, len(views))
        store, lag, oldest = self._ctx.store, 0, None
        for view in views:
            p, size = view.partition, view.options.bucket_size
            top = await store.read_monoton(view.id)
            first_open = cursor[p] if cursor[p] < top else None
            lag += max(0, top - cursor[p])
            first = done[p] // size
            last = (cursor[p] - 1) // size if cursor[p] > done[p] else first - 1
            for bucket in range(first, last + 1):
                if bucket - first >= INFO_BUCKETS:
                    lag += cursor[p] - bucket * size
                    first_open = first_open if first_open is not None else bucket * size
                    break
                rows = await store.read_sub_deliveries(view.id, sub.name, bucket, sub.generation)
                open_ = [r.monoton for r in rows if r.finished is None and r.monoton >= done[p]]
                lag += len([m for m in open_ if m < cursor[p]])
                if open_ and (first_open is None or min(open_) < first_open):
                    first_open = min(open_)
            if first_open is not None:
                found, _ = await self._reader.read(view, first_open, 1, top=top)
                if found and (oldest is None or found[0].created_at < oldest):
                    oldest = found[0].created_at
        return SubscriptionInfo(definition=sub, lag=lag, oldest_unread_at=oldest)

    # ------------------------------------------------------------------ pointers
    async def advance(
        self, q: QueueDefinition, sub: SubscriptionDef, cursor: list[int], done: list[int]
    ) -> None:
        """Store the cursor and done position if they moved (each only forward: merged
        with what another receiver stored meanwhile); nothing once a seek changed the
        generation."""
        count = len(cursor)
        for _ in range(self._ctx.tuning.max_cas_attempts):
            stored_cursor = positions.decode(sub.position, count)
            stored_done = positions.decode(sub.done or sub.position, count)
            cursor = [max(a, b) for a, b in zip(cursor, stored_cursor, strict=True)]
            done = [min(c, max(a, b)) for a, b, c in zip(done, stored_done, cursor, strict=True)]
            if cursor == stored_cursor and done == stored_done:
                return
            new = msgspec.structs.replace(
                sub,
                position=positions.encode(cursor),
                done=positions.encode(done),
                revision=sub.revision + 1,
                change=new_token(),
            )
            if await self._ctx.store.cas_subscription(q.id, sub.name, sub.revision, new):
                return
            fresh = await self._ctx.store.read_subscription(q.id, sub.name)
            if fresh is None:
                raise SubscriptionNotFound(
                    f"subscription {sub.name!r} of queue {q.name!r} not found"
                )
            if fresh.generation != sub.generation:
                return  # a seek: what this receive found belongs to the generation before
            sub = fresh
        # Kept moving under other receivers: they move it on (nothing is lost by waiting).


def _changed(
    state: SubDelivery, now: int, *, visible_on: int | None = None, finished: Finished | None = None
) -> SubDelivery:
    """The row after a change (a new version and change token)."""
    return msgspec.structs.replace(
        state,
        version=state.version + 1,
        next_visible_on=state.next_visible_on if visible_on is None else visible_on,
        finished=finished,
        updated_at=now,
        change=new_token(),
    )


def delivery(
    view: QueueDefinition, sub: SubscriptionDef, row: MessageRow, state: SubDelivery
) -> Delivery:
    """The delivery ``state`` (the row as the take left it) made of message ``row``."""
    return Delivery(
        receipt=PopReceipt(sub.generation, row.monoton, state.version, row.tag, view.partition),
        message=row.message,
        delivery_count=state.delivery_count - 1,  # the deliveries before this one
        attributes=row.attributes,
        sent_at=row.created_at,
        first_delivered_at=state.first_delivered_at,
        attribute_types=row.attribute_types,
        group=row.group,
    )
