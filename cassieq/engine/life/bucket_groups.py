"""Conditional writes of one bucket grouped: those that come while one is out go together.

Every take and every ack is a conditional write on its bucket's partition, and Cassandra
runs the Paxos rounds of one partition one after the other: under load, the single takes
and acks of v1 (one message each) queued behind each other there, and each cost the
server a request of its own (the driver's work per request was most of their CPU). Here
the first write of a bucket goes at once, as it is; those that arrive while it is out wait
for it and then go as one conditional batch (the store decides each entry on its own, so a
lost or stale entry never holds back the rest), and so on while writes keep coming. No
write waits for a timer: an idle bucket's goes at once. Measured on one node (put, get,
ack at 32 clients, in one process): 2.4 store calls per message before, see
docs/performance/results.md for after.

A conditional batch changes a row once: a call naming a message already in the batch
being formed waits for the next one, as if sent after it (and so do the calls behind it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

E = TypeVar("E")

# The most entries one grouped batch carries (a bucket holds 20 messages by default): the
# calls waiting beyond it go in the next batch, in arrival order. A call's entries are never
# split between batches (a call larger on its own goes alone).
MAX_GROUP_ENTRIES = 64

Write = Callable[[list[E]], Awaitable[list[bool]]]


@dataclass
class _Call(Generic[E]):
    """One waiting call: its entries and the answer it waits for (applied per entry)."""

    entries: list[E]
    answer: asyncio.Future[list[bool]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class BucketGroups(Generic[E]):
    """``write(entries)`` -> applied per entry; ``monoton_of(entry)``: the message it changes.
    Calls with one key must mean the same write (the key names the partition and every
    flag of the write); a group goes with the write function of the call it waited for.

    A grouped batch that fails (an LWT left undecided after its read back) fails every call
    in it, as one call's failure failed all its entries before; one slow batch holds up the
    bucket's later writes on this server, as Paxos on the partition did anyway."""

    def __init__(self, monoton_of: Callable[[E], int]) -> None:
        self._monoton_of = monoton_of
        self._writing: set[Hashable] = set()  # keys with a write out
        self._waiting: dict[Hashable, list[_Call[E]]] = {}

    async def run(self, key: Hashable, entries: Sequence[E], write: Write[E]) -> list[bool]:
        if key not in self._writing:
            self._writing.add(key)
            try:
                return await write(list(entries))
            finally:
                self._next(key, write)
        call = _Call(list(entries))
        call.answer.add_done_callback(_retrieve)  # its error, once nobody waits for it
        self._waiting.setdefault(key, []).append(call)
        # Shielded: a caller that goes away (its client closed) leaves the group intact;
        # its entries are written with the others, as a write already sent would be.
        return await asyncio.shield(call.answer)

    def _next(self, key: Hashable, write: Write[E]) -> None:
        """The key's write is done: send what waited for it, or free the key."""
        if key in self._waiting:
            task = asyncio.get_running_loop().create_task(self._flush(key, write))
            task.add_done_callback(_retrieve)
        else:
            self._writing.discard(key)

    async def _flush(self, key: Hashable, write: Write[E]) -> None:
        try:
            while (waiting := self._waiting.pop(key, None)) is not None:
                batch, later = self._split(waiting)
                if later:
                    self._waiting[key] = later
                await _write(write, batch)
        finally:
            self._writing.discard(key)
            # Only when stopping (the flush cancelled): nothing is left waiting for good.
            for call in self._waiting.pop(key, []):
                call.answer.cancel()

    def _split(self, waiting: list[_Call[E]]) -> tuple[list[_Call[E]], list[_Call[E]]]:
        """The calls that go in one batch (one entry per message, at most MAX_GROUP_ENTRIES
        unless the first call alone has more), and those left for the next, in order."""
        now: list[_Call[E]] = []
        later: list[_Call[E]] = []
        seen: set[int] = set()
        size = 0
        for call in waiting:
            monotons = {self._monoton_of(e) for e in call.entries}
            fits = not now or size + len(call.entries) <= MAX_GROUP_ENTRIES
            if later or not fits or monotons & seen:
                later.append(call)  # in arrival order: none overtakes one left behind
                continue
            now.append(call)
            seen |= monotons
            size += len(call.entries)
        return now, later


async def _write(write: Write[E], batch: list[_Call[E]]) -> None:
    """Write the calls' entries as one batch; every call gets its answer or the error."""
    entries = [e for call in batch for e in call.entries]
    try:
        applied = await write(entries)
        if len(applied) != len(entries):
            raise RuntimeError(f"{len(applied)} outcomes for {len(entries)} entries")
    except asyncio.CancelledError:  # the server is stopping: so are its waiters
        for call in batch:
            call.answer.cancel()
        raise
    except BaseException as exc:
        for call in batch:
            if not call.answer.done():
                call.answer.set_exception(exc)
        return
    at = 0
    for call in batch:
        n = len(call.entries)
        if not call.answer.done():
            call.answer.set_result(applied[at : at + n])
        at += n


def _retrieve(future: asyncio.Future[Any]) -> None:
    # The waiters got the error; nobody awaits the task (or a gone waiter's answer).
    if not future.cancelled():
        future.exception()
