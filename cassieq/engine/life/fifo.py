"""FIFO queues (issue 37): message groups delivered in order, one message of a group in
flight at a time, and sends deduplicated for 5 minutes.

The order of a group is its monotons' order: a group's messages all go to one partition
(the partition of its key's hash), where monotons only grow. What keeps a group's next
message back while an earlier one is unretired is the group's entries
(``fifo_group_messages``): a put records its message's monoton under its group before it
writes the message; a delivery of monoton ``m`` is admitted only while no entry of its
group below ``m`` names a message that is still unretired (in flight, visible, delayed,
or written just now). An entry whose message is retired (acked, dead-lettered, expired,
purged, moved by repair: its copy has its own entry) is removed by whoever finds it — the
ack of this server at once, else the next delivery of the group. An entry with no message
(its put died before writing, a hole) counts as retired once it is older than
``HOLE_MS``: a write that slow is a put whose sender never got an answer.

No compare-and-set is added to a delivery: the take's own compare-and-set on the message
decides who delivers it; the entries only decide whether it may be tried. Two servers can
both admit a group's head at once; only one takes it, and neither admits the message after
it while the head is unretired.

Deduplication (its claims' tables by scope: life/fifo_dedup.py): a send with a key first
looks for the key's claim (a plain read: a retry costs no monoton, and leaves no hole for
the reader to wait out); otherwise its put claims the key (INSERT IF NOT EXISTS, 5 minutes)
with the monoton it was given and the message itself, then writes the message and marks the
claim written. A duplicate is answered with the first send's message, which it writes
itself (the same insert, a no-op if there) when the claim is not yet marked written, so a
first send that died half way is finished, never lost; and if that message's bucket was
finalized without it (a hole), the retry stores it at a new monoton.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

import msgspec

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import Contention, InvalidArgument
from cassieq.engine.life.fifo_dedup import Claims
from cassieq.engine.life.fifo_groups import GroupList
from cassieq.engine.life.fifo_reads import Head, read_rows
from cassieq.engine.recent import Recent
from cassieq.model import (
    Delivery,
    MessageRow,
    OutgoingMessage,
    QueueDefinition,
    QueueId,
    QueueOptions,
)
from cassieq.store.base import DedupClaim, StoreError
from cassieq.tokens import new_token

# A FIFO receive's answer, kept for a retried receive with the same attempt id.
_decode_deliveries = msgspec.msgpack.Decoder(list[Delivery]).decode
_encode = msgspec.msgpack.Encoder().encode

ATTEMPT_INTERVAL_MS = 5 * 60 * 1000
ATTEMPT_TTL_S = 6 * 60
# An entry without its message, older than this, is a hole (its put died before writing).
HOLE_MS = 30_000
# How long this server skips a group it found held (an earlier message unretired): its
# own acks of the group end the skip at once; other servers' are seen after this.
BLOCKED_MS = 100
# Entries read per look at a group: a receive's run of the group (10 at most) and what
# the next looks of this server start from without reading them again (``ran``).
GROUP_READ = 32
# Groups this server's acks freed, kept for its next looks.
READY_KNOWN = 1_024
GROUPS_KNOWN = 65_536
# Groups a receive looks at, at most (those its server's acks freed first, then the queue's
# list in turn: life/fifo_groups.py); the room left in its answer goes to the messages right
# after the heads it took (life/fifo_turns.py). Each look is two reads, one after the other:
# looking at every group for every receive made the reads most of a receive's time. The
# first FIRST_LOOKS groups are looked at first; the others only if their runs leave room:
# one group's run fills an answer most often, and a second group looked at beside it cost
# its reads, and its head a take, for a few more messages (bench fifo: e2e 480 -> 720/s).
LOOKS = 4
FIRST_LOOKS = 1
GROUP_TTL_MARGIN_S = 24 * 3600
# How long this server passes by, unread, the entries of messages it acked itself (the ack
# removes them; a look that began before that removal landed read each one).
ACKED_HERE_MS = 5_000


def sequence_number(partition: int, monoton: int) -> str:
    """A message's sequence number: 20 digits, increasing within a group (a group's
    messages are all of one partition, whose monotons only grow)."""
    return f"{partition:04d}{monoton:016d}"


def check_message(options: QueueOptions, message: OutgoingMessage, index: int) -> None:
    """What a FIFO queue refuses of a message (a standard queue refuses none of it)."""
    if not options.fifo:
        return
    where = f"message {index}: " if index else ""
    if not message.group:
        raise InvalidArgument(f"{where}a message group id is required on a FIFO queue")
    if message.delay_ms is not None:
        raise InvalidArgument(
            f"{where}a FIFO queue takes no per-message delay (the queue's delay applies)"
        )


def dedup_key(options: QueueOptions, message: OutgoingMessage) -> str | None:
    """The key a send is deduplicated by on a FIFO queue (None: not deduplicated)."""
    if not options.fifo:
        return None
    key = message.dedup_id
    if key is None and options.content_based_deduplication:
        key = hashlib.sha256(message.body.encode()).hexdigest()
    if key is None:
        return None
    if options.deduplication_scope == "messageGroup":
        return f"{message.group}\x1f{key}"
    return key


def group_ttl_s(queue: QueueDefinition) -> int:
    return queue.options.message_retention_seconds + GROUP_TTL_MARGIN_S


class Fifo:
    """The group gate (deliveries) and deduplication (puts) of this server's FIFO queues."""

    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx
        # (queue, group) -> held: skipped by this server's readers for BLOCKED_MS at most.
        # The value is this server's count of acks when the look that found it held began:
        # an ack of the group since (its _freed count higher) ends the skip, even when that
        # look, begun before the ack, ends after it.
        self._blocked: Recent[tuple[QueueId, str], int] = Recent(ctx, BLOCKED_MS)
        self._freed: dict[tuple[QueueId, str], int] = {}
        self._acks = 0
        # queue -> groups this server's acks freed, oldest first: a receive looks for their
        # next messages by their records, without scanning the buckets for them (next_heads).
        self._ready: dict[QueueId, OrderedDict[str, None]] = {}
        # (queue, monoton) -> group of the deliveries this server made (its acks find the
        # group's entry by it; an ack elsewhere leaves the entry to the next delivery).
        self._groups: OrderedDict[tuple[QueueId, int], str] = OrderedDict()
        # (queue, group) -> (the messages of the run this server's last receive of the group
        # answered, not acked here yet; the group's entries after that run, as then read):
        # once this server has acked the whole run, the group's next look starts from those
        # entries instead of reading them again (runs: see followers).
        self._after_run: OrderedDict[tuple[QueueId, str], tuple[set[int], list[int]]] = (
            OrderedDict()
        )
        # (queue, monoton) of this server's acks a moment ago: looks pass their entries by.
        self._acked_here: Recent[tuple[QueueId, int], bool] = Recent(
            ctx, ACKED_HERE_MS, GROUPS_KNOWN
        )
        self.group_list = GroupList(ctx)
        self.claims = Claims(ctx)

    # ----------------------------------------------------------------- deliveries
    def blocked(self, queue: QueueDefinition, row: MessageRow) -> bool:
        """This server found the row's group held a moment ago: readers pass it by."""
        return row.group is not None and self._held(queue.id, row.group)

    def _held(self, queue: QueueId, group: str) -> bool:
        since = self._blocked.get((queue, group))
        return since is not None and since >= self._freed.get((queue, group), -1)

    async def admit(self, queue: QueueDefinition, rows: Sequence[MessageRow]) -> list[MessageRow]:
        """The rows that may be tried now, lowest monoton first: of each group only its
        head, and only while nothing earlier of the group is unretired."""
        heads: dict[str, MessageRow] = {}
        free: list[MessageRow] = []
        for row in sorted(rows, key=lambda r: r.monoton):
            if row.group is None:
                free.append(row)  # written before the queue was FIFO: no group to keep
            elif row.group not in heads and not self.blocked(queue, row):
                heads[row.group] = row
        if not heads:
            return free
        # Groups met by the scans are listed (life/fifo_groups.py), if their put's write of
        # the row was lost or came before the list: next time a look at the groups finds them.
        await self.group_list.announce(queue, set(heads), group_ttl_s(queue))
        verdicts = await asyncio.gather(*(self._is_head(queue, r) for r in heads.values()))
        admitted = [r for r, ok in zip(heads.values(), verdicts, strict=True) if ok]
        return sorted(free + admitted, key=lambda r: r.monoton)

    async def _is_head(self, queue: QueueDefinition, row: MessageRow) -> bool:
        assert row.group is not None
        store, group = self._ctx.store, row.group
        began = self._acks
        entries = await store.read_group_messages(queue.id, group, GROUP_READ)
        for earlier in entries:
            if earlier >= row.monoton:
                break
            if self._ours(queue, earlier):
                continue  # this server acked it: its ack removes the entry
            stored = await store.read_message(queue.id, queue.bucket_of(earlier), earlier)
            if not await self._retired(queue, earlier, stored):
                self._blocked.put((queue.id, group), began)
                self._ctx.observers.group_held(queue, 1)
                return False
            await self._forget(queue.id, group, [earlier])
        return True

    async def _retired(
        self, queue: QueueDefinition, monoton: int, stored: MessageRow | None
    ) -> bool:
        """Whether an entry's message (``stored``, as read) is out of its group's way."""
        if stored is not None:
            return stored.acked or stored.republished_to is not None
        # Not written yet (its put is under way), a hole, or acked and dropped with its
        # bucket. The group's TTL'd entry carries no time: ask the bucket's markers.
        ctx = self._ctx
        snap = await ctx.store.read_bucket(queue.id, queue.bucket_of(monoton))
        return snap.finalized_at is not None or (
            snap.sealed_at is not None and ctx.clock.now() - snap.sealed_at > HOLE_MS
        )

    async def _forget(self, queue: QueueId, group: str, monotons: list[int]) -> None:
        try:
            await self._ctx.store.remove_group_messages(queue, group, monotons)
        except StoreError as exc:  # the next delivery of the group removes it
            self._ctx.log.info("fifo_entry_kept", queue=str(queue), error=str(exc))

    async def next_heads(self, queue: QueueDefinition, want: int) -> list[Head]:
        """The heads of up to ``want`` (and LOOKS) groups that may go on now (each its
        group's lowest unretired message, visible now), each with the messages right after
        it that were visible when read with it, found by the groups' records, with no scan
        of the buckets: first the groups this server's acks freed, then the queue
        partition's groups in turn (life/fifo_groups.py). A group found with its head in
        flight is held here for BLOCKED_MS (the scans behind the reader pass its messages
        by too)."""
        ready = self._ready.get(queue.id) or OrderedDict()
        looks = min(want, LOOKS)
        freed = [ready.popitem(last=False)[0] for _ in range(min(looks, len(ready)))]
        picked = set(freed)
        listed = await self.group_list.next_groups(
            queue,
            looks - len(freed),
            lambda g: g in picked or self._held(queue.id, g),
        )
        groups = freed + listed
        began = self._acks
        heads: list[Head] = []
        room = want
        # Two waves: the groups after the first FIRST_LOOKS are looked at only if the first
        # ones' runs leave room in the answer (or their heads are in flight).
        for wave in (groups[:FIRST_LOOKS], groups[FIRST_LOOKS:]):
            if wave and room <= 0:
                for group in reversed([g for g in wave if g in picked]):
                    ready = self._ready.setdefault(queue.id, OrderedDict())
                    ready[group] = None  # not looked at: first again next time
                    ready.move_to_end(group, last=False)
            elif wave:
                found = await self._look(queue, wave, room, began)
                heads += found
                room -= sum(1 + len(h.followers) for h in found)
        return heads[:want]

    async def _look(
        self, queue: QueueDefinition, groups: list[str], room: int, began: int
    ) -> list[Head]:
        """The heads of these groups that may go on now, with their followers."""
        read = await asyncio.gather(*(self._entries_of(queue, g, room) for g in groups))
        # The messages read of each group: as many as the answer may still take, the first
        # groups first, at least the head.
        windows = []
        for entries, _ in read:
            windows.append(max(1, min(room, sum(not self._ours(queue, m) for m in entries))))
            room = max(0, room - windows[-1])
        found = await asyncio.gather(
            *(
                self._head_of(queue, g, entries, kept, window)
                for g, (entries, kept), window in zip(groups, read, windows, strict=True)
            )
        )
        now = self._ctx.clock.now()
        heads: list[Head] = []
        for group, head in zip(groups, found, strict=True):
            if head is None:
                self.group_list.found_empty(queue.id, group)
            elif head.row is not None and head.row.visible(now):
                heads.append(head)
            elif head.row is not None:  # in flight (or delayed): the group waits for it
                self._blocked.put((queue.id, group), began)
                self._ctx.observers.group_held(queue, 1)
        return heads

    async def _entries_of(
        self, queue: QueueDefinition, group: str, want: int
    ) -> tuple[list[int], bool]:
        """The group's entries (as far as read), and whether they are those kept after the
        run this server delivered and acked whole."""
        kept = self._after_run.pop((queue.id, group), None)
        if kept is not None and not kept[0] and len(kept[1]) >= want:
            # This server delivered and acked the group's whole last run: what is left of
            # the group is the entries read after it (and any written since, after them),
            # enough of them for the answer (fewer: read again, some may have come since).
            return kept[1], True
        return await self._ctx.store.read_group_messages(queue.id, group, GROUP_READ), False

    async def _head_of(
        self, queue: QueueDefinition, group: str, entries: list[int], kept: bool, window: int
    ) -> Head | None:
        """The group's lowest unretired message (row None: not written yet, its put under
        way), with up to ``window - 1`` messages right after it visible now and the group's
        entries after it; None: the group has no unretired message at all. The entries'
        messages are read ``window`` at a time, side by side (one after the other, a look
        that met acked entries first took a read each)."""
        retired: list[int] = []
        head: Head | None = None
        at = 0
        while head is None and at < len(entries):
            part = entries[at : at + window]
            # Judged once: an ack's mark may lapse while the others are read.
            ours = {m for m in part if self._ours(queue, m)}
            rows = await read_rows(self._ctx, queue, [m for m in part if m not in ours])
            for i, monoton in enumerate(part):
                if monoton in ours:
                    continue  # this server acked it: its ack removes the entry
                row = rows[monoton]
                if row is None or row.acked or row.republished_to is not None:
                    if not await self._retired(queue, monoton, row):
                        head = Head(None, [], [])  # not written yet (its put is under way)
                        break
                    retired.append(monoton)
                    continue
                head = Head(row, self._run(queue, part[i + 1 :], rows), entries[at + i + 1 :])
                break
            at += len(part)
        if retired:
            await self._forget(queue.id, group, retired)
        if head is not None:
            return head
        if kept:
            return Head(None, [], [])  # the entries left were all retired: read it next time
        return None if len(entries) < GROUP_READ else Head(None, [], [])

    def _ours(self, queue: QueueDefinition, monoton: int) -> bool:
        """This server acked the message a moment ago (its entry goes with the ack)."""
        return self._acked_here.get((queue.id, monoton)) is not None

    def _run(
        self, queue: QueueDefinition, after: list[int], rows: dict[int, MessageRow | None]
    ) -> list[MessageRow]:
        """The messages of ``after`` (entries right after a head) visible now, in a row up
        to the first that is not (not written yet, or leased), retired ones passed by."""
        now = self._ctx.clock.now()
        run: list[MessageRow] = []
        for monoton in after:
            row = rows.get(monoton)
            if self._ours(queue, monoton) or (
                row is not None and (row.acked or row.republished_to is not None)
            ):
                continue  # retired: out of the group's way
            if row is None or not row.visible(now):
                break
            run.append(row)
        return run

    def free(self, queue: QueueDefinition, group: str | None) -> None:
        """The group may go on (its head left it): the next look here starts with it."""
        if group is not None:
            self._ready.setdefault(queue.id, OrderedDict())[group] = None
            self._blocked.drop((queue.id, group))

    async def meet(self, queue: QueueDefinition, rows: Sequence[MessageRow]) -> None:
        """The reader passes these rows: their groups are listed (each written at most once a
        minute per server), so a group missing from the list is found by its records."""
        groups = {r.group for r in rows if r.group is not None and not r.acked}
        if groups:
            await self.group_list.announce(queue, groups, group_ttl_s(queue))

    def ran(self, queue: QueueDefinition, group: str, run: list[int], after: list[int]) -> None:
        """A receive of this server answered ``run`` of the group (its head and the messages
        right after it); ``after``: the group's entries after them, as read."""
        key = (queue.id, group)
        self._after_run[key] = (set(run), after)
        self._after_run.move_to_end(key)
        while len(self._after_run) > GROUPS_KNOWN:
            self._after_run.popitem(last=False)

    def delivered(self, queue: QueueDefinition, rows: Sequence[MessageRow]) -> None:
        for row in rows:
            if row.group is not None:
                key = (queue.id, row.monoton)
                self._groups[key] = row.group
                self._groups.move_to_end(key)
        while len(self._groups) > GROUPS_KNOWN:
            self._groups.popitem(last=False)

    async def acked(self, queue: QueueDefinition, monotons: Sequence[int]) -> None:
        """This server acked these: their entries go now, their groups are free here."""
        removals: dict[str, list[int]] = {}
        for monoton in monotons:
            group = self._groups.pop((queue.id, monoton), None)
            if group is not None:
                kept = self._after_run.get((queue.id, group))
                if kept is not None:
                    kept[0].discard(monoton)
                self._acks += 1
                key = (queue.id, group)
                self._blocked.drop(key)
                self._freed[key] = self._acks
                ready = self._ready.setdefault(queue.id, OrderedDict())
                ready[group] = None
                while len(ready) > READY_KNOWN:
                    ready.popitem(last=False)
                if len(self._freed) > GROUPS_KNOWN:
                    self._freed.clear()  # only a hint: a group found held again waits BLOCKED_MS
                removals.setdefault(group, []).append(monoton)
                self._acked_here.put((queue.id, monoton), True)
        # One write per group (a receive answers a run of a group, acked together mostly).
        await asyncio.gather(*(self._forget(queue.id, g, ms) for g, ms in removals.items()))

    # ----------------------------------------------------------------- puts
    async def add_entries(self, queue: QueueDefinition, rows: Sequence[MessageRow]) -> None:
        """Record the rows in their groups (before they are written)."""
        now, ttl = self._ctx.clock.now(), group_ttl_s(queue)
        by_group: dict[str, list[int]] = {}
        for r in rows:
            if r.group is not None:
                by_group.setdefault(r.group, []).append(r.monoton)
        await self.group_list.announce(queue, set(by_group), ttl)
        await asyncio.gather(
            *(
                self._ctx.store.add_group_messages(queue.id, group, monotons, now, ttl)
                for group, monotons in by_group.items()
            )
        )

    async def answer_duplicate(
        self,
        queue: QueueDefinition,
        claim: DedupClaim,
        take_monotons: Callable[[QueueId, int], Awaitable[int]],
    ) -> DedupClaim:
        """The claim whose message is stored, for a send found to be a duplicate of it: the
        first send's message, written here if that send died before writing it (the same
        insert, a no-op if it is there), or at a new monoton if its bucket was finalized
        without it (a hole: its sender never had an answer)."""
        ctx = self._ctx
        ctx.observers.deduplicated(queue, 1)
        for _ in range(ctx.tuning.max_cas_attempts):
            if claim.written:
                return claim
            pid = QueueId(queue.account, queue.name, queue.version, claim.partition)
            bucket = claim.monoton // queue.options.bucket_size
            row, now = claim.row, ctx.clock.now()
            if row.group is not None:
                await self.group_list.announce(queue, {row.group}, group_ttl_s(queue))
                await ctx.store.add_group_messages(
                    pid, row.group, [row.monoton], now, group_ttl_s(queue)
                )
            if await ctx.store.insert_messages(pid, bucket, [row], now):
                await self.claims.written(queue, [(claim.key, row.group)], claim.created_at)
                return claim
            if await ctx.store.read_message(pid, bucket, claim.monoton) is not None:
                return claim  # written by the first send, its bucket finished since
            moved = with_monoton(row, await take_monotons(pid, 1), now)
            again = msgspec.structs.replace(
                claim, monoton=moved.monoton, tag=new_token(), row=moved
            )
            if await self.claims.replace(queue, claim.tag, again):
                claim = again
                continue
            held = await self.claims.read(queue, claim)
            if held is None:
                raise Contention(f"the deduplication id of {queue.id} expired while answered")
            claim = held
        raise Contention(f"could not answer a duplicate send of {queue.id}")

    # ----------------------------------------------------------------- receive attempts
    async def replay(self, queue: QueueId, attempt_id: str) -> list[Delivery] | None:
        """The answer kept for a receive attempt within the interval, if any."""
        kept = await self._ctx.store.read_receive_attempt(queue, attempt_id)
        if kept is None or self._ctx.clock.now() - kept[0] >= ATTEMPT_INTERVAL_MS:
            return None
        return _decode_deliveries(kept[1])

    async def keep(self, queue: QueueId, attempt_id: str, answer: list[Delivery]) -> None:
        await self._ctx.store.write_receive_attempt(
            queue, attempt_id, self._ctx.clock.now(), _encode(answer), ATTEMPT_TTL_S
        )


def with_monoton(row: MessageRow, monoton: int, now: int) -> MessageRow:
    """The claim's message written afresh at a new monoton (its first was a hole)."""
    return msgspec.structs.replace(
        row, monoton=monoton, created_at=now, updated_at=now, change=new_token()
    )
