"""Conditional batches on one bucket partition, decided entry by entry.

A v2 receive, batch ack or batch visibility change conditions each message row of one
bucket on its own expected state, in one conditional batch (Cassandra runs a conditional
batch only within one partition, as one Paxos round). Cassandra applies such a batch all
or nothing: when one condition is false, nothing is written and the answer shows the
current values of every conditioned row. One stale entry must not block the rest, so
the batch is sent again with the entries whose condition still holds (a *round*), until
every entry is decided:

- applied: this call's change is stored (the row carries the entry's change token);
- rejected: not applied, its condition is false (someone else's change won, or no row);
- holds: not applied, its condition still holds: it goes into the next round.

A round whose answer is lost (timeout, lost connection, Unavailable) is resolved like any
LWT (``lwt.run_lwt``): the rows are read back at SERIAL and each entry is decided from
its row; a round in which every entry still holds is contention and is sent again, a
bounded number of times, then ``LwtUndecided``. Nothing is ever assumed.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Any

from cassieq.store.base import LwtUndecided
from cassieq.store.cassandra.lwt import LwtRetry, Outcome, run_lwt
from cassieq.store.observer import LwtObserver


class Verdict(enum.Enum):
    APPLIED = "applied"
    REJECTED = "rejected"
    HOLDS = "holds"


# indexes of the entries of a round -> the rows Cassandra answered / read at SERIAL
RowsOf = Callable[[list[int]], Awaitable[list[Any]]]
# (entry index, its row as stored) -> whether the entry's condition holds on it
RowTest = Callable[[int, Any], bool]
# A row's clustering key, as an entry names it (None: a row of no entry)
KeyOf = Callable[[Any], Hashable | None]


def monoton_of(row: Any) -> int | None:
    # A partition with only its static markers answers a row without a monoton. A
    # partition with no row at all (a bucket deleted once finished, one never written)
    # answers "not applied" with the [applied] column alone: no monoton column either.
    m = getattr(row, "monoton", None)
    return None if m is None else int(m)


async def run_batch_lwt(
    primitive: str,
    monotons: Sequence[Hashable],
    send: RowsOf,
    read: RowsOf,
    holds: RowTest,
    ours: RowTest,
    *,
    retry: LwtRetry,
    observer: LwtObserver,
    absent_holds: bool = False,
    key_of: KeyOf = monoton_of,
    units: Sequence[int] | None = None,
) -> list[bool]:
    """Send the entries' conditional batch in rounds until each is decided; for each
    entry (in order) whether this call's change was applied. ``units``: entries of one
    unit number are applied together or not at all (a round applies all it sends or
    nothing; an entry whose unit lost one goes into no later round). ``absent_holds``: the
    conditions are IF NOT EXISTS (no row: the condition holds; a row: it does not).
    ``monotons``: the entries' clustering keys (monotons, unless ``key_of`` reads
    another column of a row).

    ``send`` sends the batch of the given entries; ``read`` reads their rows at SERIAL
    (an absent row is not returned); ``holds`` tests an entry's condition on its row as
    stored (only on the condition's columns when the row is a "not applied" answer);
    ``ours`` tells that a row read back carries the entry's change.
    """
    applied = [False] * len(monotons)
    pending = list(range(len(monotons)))
    refused = 0  # rounds that Cassandra refused while every condition held in its answer
    while pending:
        verdicts = await _round(
            primitive, monotons, pending, send, read, holds, ours, retry=retry,
            observer=observer, absent_holds=absent_holds, key_of=key_of,
        )  # fmt: skip
        for i, verdict in verdicts.items():
            applied[i] = verdict is Verdict.APPLIED
        still = [i for i in pending if verdicts[i] is Verdict.HOLDS]
        if units is not None:
            lost = {units[i] for i in pending if verdicts[i] is Verdict.REJECTED}
            still = [i for i in still if units[i] not in lost]
        if len(still) == len(pending):
            # Refused, yet each condition holds in the answer: cannot happen with a sound
            # condition test; bounded rather than looping on a misread answer.
            refused += 1
            if refused >= retry.attempts:
                observer.lwt_outcome(primitive, "undecided")
                raise LwtUndecided(primitive, "refused while every condition held")
            await asyncio.sleep(retry.backoff(refused))
        pending = still
    return applied


async def _round(
    primitive: str,
    monotons: Sequence[Hashable],
    entries: list[int],
    send: RowsOf,
    read: RowsOf,
    holds: RowTest,
    ours: RowTest,
    *,
    retry: LwtRetry,
    observer: LwtObserver,
    absent_holds: bool,
    key_of: KeyOf,
) -> dict[int, Verdict]:
    """One batch of ``entries`` until its outcome is known; each entry's verdict."""
    answer: list[Any] = []
    read_back: dict[int, Verdict] = {}

    async def send_round() -> list[Any]:
        rows = await send(entries)
        answer[:] = rows
        return rows

    async def resolve() -> Outcome:
        read_back.clear()
        read_back.update(
            _verdicts(entries, monotons, await read(entries), holds, key_of, ours, absent_holds)
        )
        seen = set(read_back.values())
        if seen == {Verdict.APPLIED}:
            return Outcome.APPLIED
        if seen == {Verdict.HOLDS}:
            return Outcome.CONTENDED  # nothing applied, nothing stale: send it again
        # Some entry is decided (stale, or carrying our change from an earlier call with
        # the same token): this round is over, the next one takes the entries that hold.
        return Outcome.REJECTED

    done, first_row = await run_lwt(primitive, send_round, resolve, retry=retry, observer=observer)
    if done:
        return dict.fromkeys(entries, Verdict.APPLIED)
    if first_row is None:
        return dict(read_back)  # settled by the read back
    # Cassandra answered "not applied": nothing of the batch is written, and the answer
    # rows carry the condition's columns of every conditioned row that exists.
    return _verdicts(entries, monotons, answer, holds, key_of, None, absent_holds)


def _verdicts(
    entries: list[int],
    monotons: Sequence[Hashable],
    rows: list[Any],
    holds: RowTest,
    key_of: KeyOf,
    ours: RowTest | None = None,
    absent_holds: bool = False,
) -> dict[int, Verdict]:
    """Each entry's verdict on rows as stored: carrying its change (with ``ours``: rows
    read back), its condition holding, or neither (stale, or no row)."""
    found = {key: r for r in rows if (key := key_of(r)) is not None}
    verdicts: dict[int, Verdict] = {}
    for i in entries:
        row = found.get(monotons[i])
        if row is None:
            verdicts[i] = Verdict.HOLDS if absent_holds else Verdict.REJECTED
        elif ours is not None and ours(i, row):
            verdicts[i] = Verdict.APPLIED
        else:
            verdicts[i] = Verdict.HOLDS if holds(i, row) else Verdict.REJECTED
    return verdicts
