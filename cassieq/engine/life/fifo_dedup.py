"""A FIFO queue's deduplication claims (issue 37), in the table its scope calls for.

A claim is a key's row for 5 minutes: the monoton its message was given, the message as the
first send wrote it, the claim's own token (engine/life/fifo.py says how a send uses it).
Where the rows live follows the queue's ``deduplicationScope``:

- ``queue`` (the default): one partition per key (``fifo_dedup``). Keys of one queue may
  be claimed by any producer at once, and each claim is a Paxos round of its own: a batch
  of ten keyed sends costs ten reads, ten compare-and-sets and ten writes.
- ``messageGroup`` (SQS's high-throughput FIFO): a key is unique within its group, so the
  rows are one partition per group (``fifo_group_dedup``): the keys a send has for a
  group are read in one read, claimed in one conditional batch (one Paxos round per group,
  however many keys) and marked written in one write. A group's sends come from one
  producer mostly (its order is that producer's): its partition is not contended.

Both are compare-and-sets resolved like every other (a timed-out claim is read back by
its token); a claim older than the interval is replaced by its token (the memory store
keeps no TTL; Cassandra's rows outlive the interval by a minute).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import Contention
from cassieq.model import MessageRow, QueueDefinition
from cassieq.store.base import DedupClaim, StoreError
from cassieq.tokens import new_token

DEDUP_INTERVAL_MS = 5 * 60 * 1000
DEDUP_TTL_S = 6 * 60  # the rows outlive the interval a little: the engine judges the age


def fresh(claim: DedupClaim, now: int) -> bool:
    return now - claim.created_at < DEDUP_INTERVAL_MS


def by_group(queue: QueueDefinition) -> bool:
    return queue.options.deduplication_scope == "messageGroup"


def _group_of(row: MessageRow) -> str:
    # A FIFO queue refuses a message without a group (fifo.check_message).
    return row.group or ""


class Claims:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx

    async def find(
        self, queue: QueueDefinition, keys: Sequence[str | None], groups: Sequence[str | None]
    ) -> list[DedupClaim | None]:
        """The fresh claim of each key (None: no key, or none kept): one read per key, or
        (scope messageGroup) one per group."""
        store, now, whole = self._ctx.store, self._ctx.clock.now(), queue.id.whole
        if by_group(queue):
            wanted: dict[str, list[str]] = {}
            for key, group in zip(keys, groups, strict=True):
                if key is not None:
                    wanted.setdefault(group or "", []).append(key)
            names = list(wanted)
            found = await asyncio.gather(
                *(store.read_group_dedup(whole, g, wanted[g]) for g in names)
            )
            kept = dict(zip(names, found, strict=True))
            claims = [
                None if key is None else kept[group or ""].get(key)
                for key, group in zip(keys, groups, strict=True)
            ]
        else:

            async def one(key: str | None) -> DedupClaim | None:
                return None if key is None else await store.read_dedup(whole, key)

            claims = list(await asyncio.gather(*(one(k) for k in keys)))
        return [c if c is not None and fresh(c, now) else None for c in claims]

    async def claim(
        self, queue: QueueDefinition, items: Sequence[tuple[str, MessageRow]], partition: int
    ) -> list[DedupClaim | BaseException | None]:
        """Claim each key for its row (None: claimed), or the fresh claim that holds it, or
        what failed the claim; in the order given. The keys are distinct."""
        if not by_group(queue):
            return list(
                await asyncio.gather(
                    *(self._claim_one(queue, key, row, partition) for key, row in items),
                    return_exceptions=True,
                )
            )
        groups: dict[str, list[tuple[str, MessageRow]]] = {}
        for key, row in items:
            groups.setdefault(_group_of(row), []).append((key, row))
        names = list(groups)
        answers = await asyncio.gather(
            *(self._claim_group(queue, g, groups[g], partition) for g in names),
            return_exceptions=True,
        )
        outcome: dict[str, DedupClaim | BaseException | None] = {}
        for name, answer in zip(names, answers, strict=True):
            for key, _ in groups[name]:
                outcome[key] = answer if isinstance(answer, BaseException) else answer[key]
        return [outcome[key] for key, _ in items]

    def _mine(self, key: str, row: MessageRow, partition: int, now: int) -> DedupClaim:
        return DedupClaim(
            key=key, monoton=row.monoton, partition=partition, tag=new_token(), created_at=now,
            row=row,
        )  # fmt: skip

    async def _claim_one(
        self, queue: QueueDefinition, key: str, row: MessageRow, partition: int
    ) -> DedupClaim | None:
        ctx, now, whole = self._ctx, self._ctx.clock.now(), queue.id.whole
        mine = self._mine(key, row, partition, now)
        for _ in range(ctx.tuning.max_cas_attempts):
            held = await ctx.store.claim_dedup(mine, whole, DEDUP_TTL_S)
            if held is None:
                return None
            if fresh(held, now):
                return held
            # Older than the interval (the memory store keeps no TTL): take its place.
            if await ctx.store.replace_dedup(whole, held.tag, mine, DEDUP_TTL_S):
                return None
        raise Contention(f"could not claim a deduplication id of {queue.id}")

    async def _claim_group(
        self,
        queue: QueueDefinition,
        group: str,
        items: list[tuple[str, MessageRow]],
        partition: int,
    ) -> dict[str, DedupClaim | None]:
        ctx, now, whole = self._ctx, self._ctx.clock.now(), queue.id.whole
        outcome: dict[str, DedupClaim | None] = {}
        pending = [self._mine(key, row, partition, now) for key, row in items]
        for _ in range(ctx.tuning.max_cas_attempts):
            held = await ctx.store.claim_group_dedup(whole, group, pending, DEDUP_TTL_S)
            again: list[DedupClaim] = []
            for mine in pending:
                kept = held.get(mine.key)
                if kept is None:
                    outcome[mine.key] = None
                elif fresh(kept, now):
                    outcome[mine.key] = kept
                elif await ctx.store.replace_group_dedup(whole, group, kept.tag, mine, DEDUP_TTL_S):
                    outcome[mine.key] = None  # it was older than the interval
                else:
                    again.append(mine)
            pending = again
            if not pending:
                return outcome
        raise Contention(f"could not claim a deduplication id of {queue.id}")

    async def written(
        self,
        queue: QueueDefinition,
        items: Sequence[tuple[str, str | None]],
        created_at: int | None = None,
    ) -> None:
        """The claims of these (key, group) have their message stored: one plain write per
        key, or per group (a lost one costs a retry a no-op insert). ``created_at``: the
        claims' time (None: now). The mark lives no longer than its claim: a ``written``
        cell left after the claim's other columns expired would be a row that a new claim
        of the key (IF NOT EXISTS) could never replace, nor anyone read as a claim."""
        store, whole = self._ctx.store, queue.id.whole
        now = self._ctx.clock.now()
        age_s = 0 if created_at is None else max(0, now - created_at) // 1000
        ttl_s = max(1, DEDUP_TTL_S - age_s - 1)
        try:
            if by_group(queue):
                groups: dict[str, list[str]] = {}
                for key, group in items:
                    groups.setdefault(group or "", []).append(key)
                await asyncio.gather(
                    *(
                        store.mark_group_dedup_written(whole, g, keys, ttl_s)
                        for g, keys in groups.items()
                    )
                )
            else:
                await asyncio.gather(
                    *(store.mark_dedup_written(whole, key, ttl_s) for key, _ in items)
                )
        except StoreError as exc:
            self._ctx.log.info("fifo_dedup_mark_failed", queue=str(queue.id), error=str(exc))

    async def read(self, queue: QueueDefinition, claim: DedupClaim) -> DedupClaim | None:
        """The claim kept now for ``claim``'s key."""
        whole = queue.id.whole
        if by_group(queue):
            group = _group_of(claim.row)
            found = await self._ctx.store.read_group_dedup(whole, group, [claim.key])
            return found.get(claim.key)
        return await self._ctx.store.read_dedup(whole, claim.key)

    async def replace(self, queue: QueueDefinition, expected_tag: str, claim: DedupClaim) -> bool:
        """Replace the key's claim while it is still the one with ``expected_tag``."""
        store, whole = self._ctx.store, queue.id.whole
        if by_group(queue):
            group = _group_of(claim.row)
            return await store.replace_group_dedup(whole, group, expected_tag, claim, DEDUP_TTL_S)
        return await store.replace_dedup(whole, expected_tag, claim, DEDUP_TTL_S)
