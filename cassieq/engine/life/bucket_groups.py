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

A conditional batch changes a row once: an entry naming a message already in the batch
being formed waits for the next one, as if sent after it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

E = TypeVar("E")

# The most entries one grouped batch carries (a bucket holds 20 messages by default; more
# than this many waiting go in the next batch, in arrival order).
MAX_GROUP_ENTRIES = 64

Write = Callable[[list[E]], Awaitable[list[bool]]]


@dataclass
class _Waiting(Generic[E]):
    entries: list[E] = field(default_factory=list)
    answers: list[asyncio.Future[bool]] = field(default_factory=list)


class BucketGroups(Generic[E]):
    """``write(entries)`` -> applied per entry; ``monoton_of(entry)``: the message it changes.
    Calls with one key must mean the same write (the key names the partition and every
    flag of the write); a group goes with the write function of the call it waited for."""

    def __init__(self, monoton_of: Callable[[E], int]) -> None:
        self._monoton_of = monoton_of
        self._writing: set[Hashable] = set()  # keys with a write out
        self._waiting: dict[Hashable, _Waiting[E]] = {}

    async def run(self, key: Hashable, entries: Sequence[E], write: Write[E]) -> list[bool]:
        if key not in self._writing:
            self._writing.add(key)
            try:
                return await write(list(entries))
            finally:
                self._next(key, write)
        loop = asyncio.get_running_loop()
        waiting = self._waiting.setdefault(key, _Waiting())
        answers = [loop.create_future() for _ in entries]
        waiting.entries.extend(entries)
        waiting.answers.extend(answers)
        # Shielded: a caller that goes away (its client closed) leaves the group intact;
        # its entries are written with the others, as a write already sent would be.
        joined = asyncio.gather(*answers)
        joined.add_done_callback(_retrieve)  # its error, once nobody waits for it
        return list(await asyncio.shield(joined))

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
                if later.entries:
                    if (arrived := self._waiting.get(key)) is not None:
                        later.entries += arrived.entries
                        later.answers += arrived.answers
                    self._waiting[key] = later
                await _write(write, batch)
        finally:
            self._writing.discard(key)

    def _split(self, waiting: _Waiting[E]) -> tuple[_Waiting[E], _Waiting[E]]:
        """What goes in one batch (one entry per message, at most MAX_GROUP_ENTRIES), and
        what is left for the next, in arrival order."""
        now: _Waiting[E] = _Waiting()
        later: _Waiting[E] = _Waiting()
        seen: set[int] = set()
        for entry, answer in zip(waiting.entries, waiting.answers, strict=True):
            monoton = self._monoton_of(entry)
            target = later if monoton in seen or len(now.entries) >= MAX_GROUP_ENTRIES else now
            if target is now:
                seen.add(monoton)
            target.entries.append(entry)
            target.answers.append(answer)
        return now, later


async def _write(write: Write[E], batch: _Waiting[E]) -> None:
    try:
        applied = await write(batch.entries)
    except asyncio.CancelledError:  # the server is stopping: so are its waiters
        for answer in batch.answers:
            answer.cancel()
        raise
    except BaseException as exc:
        for answer in batch.answers:
            if not answer.done():
                answer.set_exception(exc)
        return
    for answer, done in zip(batch.answers, applied, strict=True):
        if not answer.done():
            answer.set_result(done)


def _retrieve(future: asyncio.Future[Any]) -> None:
    # The waiters got the error; nobody awaits the task (or a gone waiter's answers).
    if not future.cancelled():
        future.exception()
