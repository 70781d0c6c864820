"""Partitioned queues (issue 35): where a put goes, and the operations over every partition.

A queue of N partitions is N sets of the engine's state under one name: partition p has
its own monoton, buckets, reader / invisibility / repair pointers and repair lease, keyed
by ``QueueId(..., partition=p)`` (partition 0's key is the queue's key from before
partitions). Each part of the engine works on one partition at a time through
``QueueDefinition.in_partition(p)``, so every guarantee it gives holds per partition and
none depends on another: nothing here takes a lock or a compare-and-set across partitions.

- A put goes to the partition of its key's hash (v2 ``partitionKey``, SQS
  ``MessageGroupId``); without a key, to a partition where this server is gathering a group
  of puts already (one monoton range and one conditional batch per bucket for them all),
  else to one where it writes nothing now (the next such in its rotation), else to the next
  in its rotation. One call's messages without a key go to one partition.
  So a busy server writes every partition side by side, each a group at a time, and a
  quiet one does not split what it would have written in one group.
- A receive asks the partitions one after another, starting at the next one in this
  server's rotation, until it has what it wants: consumers spread over the partitions, and
  no partition leases a message nobody asked for.
- Ack and visibility changes go to the partition their receipt names.
- Peek merges the partitions by sent time; statistics, purge and repair cover each.
"""

from __future__ import annotations

import asyncio
import hashlib
import heapq
import itertools
import secrets
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from cassieq.model import (
    MAX_PARTITIONS,
    OutgoingMessage,
    PeekedMessage,
    PopReceipt,
    QueueDefinition,
    Statistics,
)

T = TypeVar("T")
R = TypeVar("R")


def partition_of_key(key: str, partitions: int) -> int:
    """The partition of a key: the same on every server and after every restart (Python's
    own ``hash`` of a string is salted per process)."""
    digest = hashlib.blake2b(key.encode(), digest_size=8, person=b"cassieq-part").digest()
    return int.from_bytes(digest, "big") % partitions


class Rotation:
    """This server's next partition, for puts without a key and for where a receive starts.
    A random start: servers started together do not all begin at partition 0."""

    def __init__(self) -> None:
        self._counter = itertools.count(secrets.randbelow(MAX_PARTITIONS))

    def next(self, partitions: int) -> int:
        return next(self._counter) % partitions

    def order(self, partitions: int) -> list[int]:
        """Every partition once, starting at the next one."""
        start = self.next(partitions)
        return [(start + i) % partitions for i in range(partitions)]


def split_by_partition(
    queue: QueueDefinition, messages: Sequence[OutgoingMessage], pick: Callable[[], int]
) -> dict[int, list[int]]:
    """partition -> the indexes of the messages that go there (in the order given); the
    messages without a key go to one partition, ``pick()``'s."""
    partitions = queue.options.partitions
    if partitions == 1:
        return {0: list(range(len(messages)))}
    unkeyed: int | None = None
    out: dict[int, list[int]] = defaultdict(list)
    fifo = queue.options.fifo
    for i, m in enumerate(messages):
        # A FIFO group is ordered by its partition's monotons: its group decides.
        key = m.group if fifo else m.partition_key
        if key is not None:
            out[partition_of_key(key, partitions)].append(i)
        else:
            if unkeyed is None:
                unkeyed = pick()
            out[unkeyed].append(i)
    return out


async def by_partition(
    queue: QueueDefinition,
    entries: Sequence[T],
    partition_of: Callable[[T], int],
    run: Callable[[QueueDefinition, list[T]], Awaitable[list[R]]],
) -> list[R]:
    """``run`` on each partition's entries (side by side); the answers in ``entries``' order.

    A partition named beyond the queue's count is still that partition: receipts are signed
    by this service, partitions only grow, and a server whose cached definition predates a
    growth must still reach a receipt's message."""
    groups: dict[int, list[int]] = defaultdict(list)
    for i, entry in enumerate(entries):
        groups[partition_of(entry)].append(i)
    return await in_groups(queue, entries, groups, run)


async def in_groups(
    queue: QueueDefinition,
    entries: Sequence[T],
    groups: dict[int, list[int]],
    run: Callable[[QueueDefinition, list[T]], Awaitable[list[R]]],
) -> list[R]:
    """``run`` on each partition's entries (``groups``: partition -> indexes into
    ``entries``), side by side; the answers in ``entries``' order."""
    if len(groups) == 1:
        ((partition, _),) = groups.items()
        return await run(queue.in_partition(partition), list(entries))
    answers = await asyncio.gather(
        *(
            run(queue.in_partition(p), [entries[i] for i in indexes])
            for p, indexes in groups.items()
        )
    )
    out: list[R | None] = [None] * len(entries)
    for indexes, answer in zip(groups.values(), answers, strict=True):
        for i, a in zip(indexes, answer, strict=True):
            out[i] = a
    return out  # type: ignore[return-value]  # every index was filled


def receipt_partition(receipt: PopReceipt) -> int:
    return receipt.partition


async def receive_across(
    queue: QueueDefinition,
    want: int,
    rotation: Rotation,
    receive: Callable[[QueueDefinition, int], Awaitable[list[T]]],
) -> list[T]:
    """Up to ``want`` from the partitions in turn, starting at the next in the rotation."""
    partitions = queue.options.stored_partitions
    if partitions == 1:
        return await receive(queue, want)
    got: list[T] = []
    for p in rotation.order(partitions):
        got += await receive(queue.in_partition(p), want - len(got))
        if len(got) >= want:
            break
    return got


def sum_statistics(parts: Sequence[Statistics]) -> Statistics:
    if len(parts) == 1:
        return parts[0]
    ages = [s.oldest_message_age_s for s in parts if s.oldest_message_age_s is not None]
    return Statistics(
        size=sum(s.size for s in parts),
        in_flight=sum(s.in_flight for s in parts),
        published=sum(s.published for s in parts),
        delivered=sum(s.delivered for s in parts),
        acked=sum(s.acked for s in parts),
        dead_lettered=sum(s.dead_lettered for s in parts),
        dead_letter_pending=sum(s.dead_letter_pending for s in parts),
        visible=sum(s.visible for s in parts),
        delayed=sum(s.delayed for s in parts),
        expired=sum(s.expired for s in parts),
        oldest_message_age_s=max(ages) if ages else None,
    )


# A peek cursor of a queue of many partitions: the cursor of each partition, in order,
# joined by this (each one a monoton, or "" for a partition at its start).
CURSOR_SEPARATOR = "."


async def peek_across(
    queue: QueueDefinition,
    limit: int,
    cursor: str | None,
    peek: Callable[
        [QueueDefinition, int, int | None], Awaitable[tuple[list[PeekedMessage], int | None]]
    ],
) -> tuple[list[tuple[int, PeekedMessage]], str | None]:
    """(partition, message) pairs, the oldest sent first across the partitions, and the
    cursor of the next page (None: nothing further)."""
    partitions = queue.options.stored_partitions
    if partitions == 1:
        found, following = await peek(queue, limit, None if cursor is None else int(cursor))
        return [(0, m) for m in found], None if following is None else str(following)
    afters = _parse_cursor(cursor, partitions)
    pages = await asyncio.gather(
        *(peek(queue.in_partition(p), limit, afters[p]) for p in range(partitions))
    )
    # Each partition's page in its own (monoton) order, the heads compared by sent time:
    # what is taken of a partition is a prefix of its page, so its cursor is exact.
    merged = heapq.merge(
        *([(m.sent_at, p, m) for m in found] for p, (found, _) in enumerate(pages)),
        key=lambda item: (item[0], item[1]),
    )
    taken = [(p, m) for _, p, m in itertools.islice(merged, limit)]
    counts = [0] * partitions
    for p, _ in taken:
        counts[p] += 1
    cursors: list[int | None] = []
    more = False
    for p, (found, next_cursor) in enumerate(pages):
        k = counts[p]
        if k < len(found):  # the page left some of this partition's: on after the last taken
            cursors.append(found[k - 1].monoton if k else afters[p])
            more = True
        elif next_cursor is not None:  # all its page taken, and it has more
            cursors.append(next_cursor)
            more = True
        else:  # all its page taken, nothing further: after its last (or where it was)
            cursors.append(found[-1].monoton if found else afters[p])
    if not more:
        return taken, None
    return taken, CURSOR_SEPARATOR.join("" if c is None else str(c) for c in cursors)


def _parse_cursor(cursor: str | None, partitions: int) -> list[int | None]:
    if cursor is None:
        return [None] * partitions
    parts = cursor.split(CURSOR_SEPARATOR)
    values = [int(c) if c else None for c in parts]
    # A cursor of fewer partitions (the queue grew since): the new ones from their start.
    return (values + [None] * partitions)[:partitions]
