"""A FIFO queue's receive by its groups (issue 37): the heads of the groups that may go on,
found by their records (life/fifo.py ``next_heads``), taken where they are; then, with the
room the answer has left, the messages right after each head won, in the same answer (as
SQS returns as many messages of one group as it can): every one of them comes before the
next in its group, and none is delivered while an earlier message of its group is in
flight from another answer.

Only from buckets still the invisibility side's or the reader's: a never-delivered row in a
bucket the invisibility pointer has passed is a late write, repair's to move.
"""

from __future__ import annotations

import asyncio

from cassieq.engine.context import EngineContext
from cassieq.engine.life.redeliver import InvisibilitySide
from cassieq.engine.life.take import Deliverer
from cassieq.model import Delivery, MessageRow, QueueDefinition

# Messages right after the heads that one bucket holds from which the bucket is read whole
# instead of one by one.
BUCKET_READ_FROM = 3


class FifoTurns:
    def __init__(
        self, ctx: EngineContext, deliverer: Deliverer, invisibility: InvisibilitySide
    ) -> None:
        self._ctx = ctx
        self._deliverer = deliverer
        self._invisibility = invisibility

    async def receive(
        self, queue: QueueDefinition, want: int, invisibility_ms: int
    ) -> list[Delivery]:
        got, freed = await self._turn(queue, want, invisibility_ms)
        if len(got) < want and freed:
            # A head moved to the dead-letter queue: its group goes on with its next
            # message in this same receive.
            got += (await self._turn(queue, want - len(got), invisibility_ms))[0]
        return got

    async def _turn(
        self, queue: QueueDefinition, want: int, invisibility_ms: int
    ) -> tuple[list[Delivery], bool]:
        """The deliveries of one look at the groups; whether it freed a group (a head
        dead-lettered) that may go on at once."""
        fifo = self._deliverer.fifo
        heads = await fifo.next_heads(queue, want)
        if not heads:
            return [], False
        leased_from = self._ctx.clock.now()  # the heads' leases begin after this
        got = await self._take(queue, [row for row, _ in heads], invisibility_ms)
        won = {d.receipt.monoton for d in got}
        freed = False
        for row, _ in heads:
            if row.monoton not in won and row.delivery_count >= queue.options.max_delivery_count:
                fifo.free(queue, row.group)  # dead-lettered (or lost: a look costs two reads)
                freed = True
        runs = {row.group: (row.monoton, rest) for row, rest in heads if row.monoton in won}
        after: dict[str, list[MessageRow]] = {}
        if len(got) < want:
            after = await self._followers(
                queue, [(g, rest) for g, (_, rest) in runs.items() if g and rest], want - len(got)
            )
        if self._ctx.clock.now() - leased_from >= invisibility_ms // 2:
            # The messages after the heads are taken only while the heads' leases surely
            # still run (reads that slow: a loaded cluster), or a consumer would get a
            # group's next message while another may already have its first again.
            after = {}
        rows = [row for run in after.values() for row in run]
        taken = {d.receipt.monoton: d for d in await self._take(queue, rows, invisibility_ms)}
        for group, (head, rest) in runs.items():
            answered = [head]
            for row in after.get(group or "", []):
                delivery = taken.get(row.monoton)
                if delivery is None:
                    # Lost (changed since it was read): the ones after it stay leased
                    # unanswered and come back, in order, when their leases end.
                    self._ctx.log.info(
                        "fifo_run_cut", queue=str(queue.id), group=group, at=row.monoton
                    )
                    break
                got.append(delivery)
                answered.append(row.monoton)
            if group is not None:
                fifo.ran(queue, group, answered, [m for m in rest if m > answered[-1]])
        return got, freed

    async def _take(
        self, queue: QueueDefinition, rows: list[MessageRow], invisibility_ms: int
    ) -> list[Delivery]:
        """Take the rows, each bucket's in one conditional batch, the buckets side by side."""
        by_bucket: dict[int, list[MessageRow]] = {}
        for row in rows:
            by_bucket.setdefault(queue.bucket_of(row.monoton), []).append(row)
        if not by_bucket:
            return []
        window = await self._invisibility.in_window_of(queue.id, by_bucket)

        async def take(bucket: int, rows: list[MessageRow]) -> list[Delivery]:
            return await self._deliverer.take(
                queue, bucket, rows, len(rows), invisibility_ms, heads=True
            )

        taken = await asyncio.gather(*(take(b, rs) for b, rs in by_bucket.items() if b in window))
        return [d for part in taken for d in part]

    async def _followers(
        self, queue: QueueDefinition, runs: list[tuple[str, list[int]]], slots: int
    ) -> dict[str, list[MessageRow]]:
        """The messages right after each group's head (delivered with it, in the same
        answer: SQS returns as many of a group as it can), given the group's entries after
        its head: of each group, those visible now in a row up to the first that is not
        (not written yet, or leased), ``slots`` in all, the first groups first."""
        plan: list[tuple[str, list[int]]] = []
        for group, entries in runs:
            if slots <= 0:
                break
            plan.append((group, entries[:slots]))
            slots -= len(plan[-1][1])
        read = await self._read_messages(queue, [m for _, ms in plan for m in ms])
        now = self._ctx.clock.now()
        found: dict[str, list[MessageRow]] = {}
        for group, monotons in plan:
            rows = [read.get(m) for m in monotons]
            run: list[MessageRow] = []
            for row in rows:
                if row is not None and (row.acked or row.republished_to is not None):
                    continue  # retired: out of the group's way
                if row is None or not row.visible(now):
                    break
                run.append(row)
            found[group] = run
        return found

    async def _read_messages(
        self, queue: QueueDefinition, monotons: list[int]
    ) -> dict[int, MessageRow | None]:
        """The rows of these messages, side by side: a bucket that holds BUCKET_READ_FROM
        of them or more is read whole (a group's messages sent in one batch sit together),
        the others one by one."""
        store, pid = self._ctx.store, queue.id
        by_bucket: dict[int, list[int]] = {}
        for m in monotons:
            by_bucket.setdefault(queue.bucket_of(m), []).append(m)

        async def read(bucket: int, wanted: list[int]) -> list[tuple[int, MessageRow | None]]:
            if len(wanted) >= BUCKET_READ_FROM:
                snap = await store.read_bucket(pid, bucket)
                rows = {r.monoton: r for r in snap.messages}
                return [(m, rows.get(m)) for m in wanted]
            got = await asyncio.gather(*(store.read_message(pid, bucket, m) for m in wanted))
            return list(zip(wanted, got, strict=True))

        parts = await asyncio.gather(*(read(b, ms) for b, ms in by_bucket.items()))
        return {m: row for part in parts for m, row in part}
