"""A FIFO queue's receive by its groups (issue 37): the heads of the groups that may go on,
found by their records with the messages right after them (life/fifo.py ``next_heads``),
and as many of those as the answer has room for, the first groups first (as SQS returns as
many messages of one group as it can): every one of them comes before the next in its
group, and none is delivered while an earlier message of its group is in flight from
another answer.

A head and the messages after it in its bucket are one *run*, taken whole or not at all in
the bucket's conditional batch (``cas_messages`` units): one LWT for a group's run, not one
for the head and another for the rest (the run's leases all begin at that take). The run's
messages of the next bucket are taken after the head won (another partition: no batch
holds both), and only while its lease surely still runs.

Only from buckets still the invisibility side's or the reader's: a never-delivered row in a
bucket the invisibility pointer has passed is a late write, repair's to move.
"""

from __future__ import annotations

import asyncio

from cassieq.engine.context import EngineContext
from cassieq.engine.life.expire import expiring
from cassieq.engine.life.fifo_reads import Head
from cassieq.engine.life.redeliver import InvisibilitySide
from cassieq.engine.life.take import Deliverer
from cassieq.model import Delivery, MessageRow, QueueDefinition


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
        plan = self._plan(queue, heads, want)
        leased_from = self._ctx.clock.now()  # the heads' leases begin after this
        got = await self._take_runs(queue, [run for _, run, _ in plan], invisibility_ms)
        freed = False
        won: list[tuple[Head, list[MessageRow], list[MessageRow]]] = []
        for head, run, later in plan:
            assert head.row is not None  # next_heads answers only heads it found
            if head.row.monoton in got:
                # A run cut short (a message of it was being taken by another reader of this
                # server) takes nothing of the next bucket: it would come after a gap.
                whole = all(row.monoton in got for row in run)
                won.append((head, run, later if whole else []))
            elif head.row.delivery_count >= queue.options.max_delivery_count:
                fifo.free(queue, head.row.group)  # dead-lettered (or lost: a look costs reads)
                freed = True
        later_runs = [later for _, _, later in won if later]
        if later_runs and self._ctx.clock.now() - leased_from < invisibility_ms // 2:
            # The messages of the next bucket are taken only after their head won, and only
            # while its lease surely still runs (reads that slow: a loaded cluster), or a
            # consumer would get a group's next message while another may already have its
            # first again. Each group's in one unit: after one is lost, none after it goes.
            got |= await self._take_runs(queue, later_runs, invisibility_ms)
        answer: list[Delivery] = []
        for head, run, later in won:
            assert head.row is not None
            answered: list[int] = []
            for row in [*run, *later]:
                delivery = got.get(row.monoton)
                if delivery is None:
                    break  # lost or cut: what follows it in its group waits
                answer.append(delivery)
                answered.append(row.monoton)
            if head.row.group is not None:
                fifo.ran(
                    queue, head.row.group, answered, [m for m in head.rest if m > answered[-1]]
                )
        return answer, freed

    def _plan(
        self, queue: QueueDefinition, heads: list[Head], want: int
    ) -> list[tuple[Head, list[MessageRow], list[MessageRow]]]:
        """Each head with the messages right after it that the answer has room for, the
        first groups first (SQS returns as many of a group as it can): those of the head's
        bucket (taken with it, whole or not at all), those of the next bucket (taken after
        it won)."""
        limit, now = queue.options.max_delivery_count, self._ctx.clock.now()
        plan: list[tuple[Head, list[MessageRow], list[MessageRow]]] = []
        slots = want
        for head in heads:
            if slots <= 0:
                break
            assert head.row is not None
            followers: list[MessageRow] = []
            if head.row.delivery_count < limit and not expiring(queue, head.row, now):
                # (A head dead-lettered or expired, not delivered, takes none with it.)
                # Up to the first that used up its deliveries: it is the group's to
                # dead-letter in its turn, not before the messages ahead of it are done.
                for row in head.followers[: slots - 1]:
                    if row.delivery_count >= limit:
                        break
                    followers.append(row)
            first = queue.bucket_of(head.row.monoton)
            same = [r for r in followers if queue.bucket_of(r.monoton) == first]
            next_bucket = first + 1
            later = [r for r in followers[len(same) :] if queue.bucket_of(r.monoton) == next_bucket]
            plan.append((head, [head.row, *same], later))
            slots -= 1 + len(same) + len(later)
        return plan

    async def _take_runs(
        self, queue: QueueDefinition, runs: list[list[MessageRow]], invisibility_ms: int
    ) -> dict[int, Delivery]:
        """Take the runs (each whole or not at all), each bucket's in one conditional batch,
        the buckets side by side; the deliveries by monoton."""
        by_bucket: dict[int, list[list[MessageRow]]] = {}
        for run in runs:
            by_bucket.setdefault(queue.bucket_of(run[0].monoton), []).append(run)
        if not by_bucket:
            return {}
        window = await self._invisibility.in_window_of(queue.id, by_bucket)
        taken = await asyncio.gather(
            *(
                self._deliverer.take_runs(queue, bucket, bucket_runs, invisibility_ms)
                for bucket, bucket_runs in by_bucket.items()
                if bucket in window
            )
        )
        return {d.receipt.monoton: d for part in taken for d in part}
