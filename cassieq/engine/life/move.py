"""The one move routine: write a message's copy at the target its claim recorded.

Every move of a message to a new monoton — repair re-publishing a late write in its own
queue, a dead-letter move, a redrive back out of a dead-letter queue — first *claims* the
original: a compare-and-set that records the target (a monoton taken in the target queue).
Then the copy is written with an insert that is a no-op when the row is there already, so a
move redone after a crash (whoever finds the claim) writes the same row, never a second one.
Only when the target's bucket was finalized before the copy landed is a new target taken
and recorded on the claim (one more compare-and-set). Then the original is retired by the
mover. Each kind of move says which column holds its target and what its copy looks like.
"""

from __future__ import annotations

from collections.abc import Callable

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import Contention, QueueNotFound
from cassieq.engine.life.put import Publisher
from cassieq.model import MessageRow, QueueDefinition


class TargetGone(Exception):
    """A move's target queue lost its state (deleted) as a monoton was taken there for
    the copy; ``claim``: the moved row as it is stored now (the move's claim)."""

    def __init__(self, claim: MessageRow) -> None:
        super().__init__(f"the target of monoton {claim.monoton}'s move is gone")
        self.claim = claim


async def write_copy(
    ctx: EngineContext,
    publisher: Publisher,
    source: QueueDefinition,
    bucket: int,
    claim: MessageRow,
    target: QueueDefinition,
    *,
    target_of: Callable[[MessageRow], int],
    copy_at: Callable[[int, int], MessageRow],
    retargeted: Callable[[MessageRow, int, int], MessageRow],
    what: str,
) -> MessageRow | None:
    """Write the copy of ``claim`` (a row of ``source``'s ``bucket``) into ``target``; the
    claim as it is once the copy is stored (retargeted if the target's bucket was finalized
    first), None if the claim changed meanwhile (someone else finishes or ended the move).

    ``target_of(claim)``: the target monoton the claim records; ``copy_at(monoton, now)``:
    the copy's row; ``retargeted(claim, monoton, now)``: the claim recording a new target.
    Raises TargetGone when the target's state is gone as a monoton is taken there, and
    Contention when the claim kept being retargeted (``what``: the move's name, for it).
    """
    for _ in range(ctx.tuning.max_cas_attempts):
        monoton = target_of(claim)
        now = ctx.clock.now()
        copy = copy_at(monoton, now)
        if target.options.fifo and copy.group is not None:
            # A FIFO target orders the copy within its group like any put: entry first.
            await publisher.fifo.add_entries(target, [copy])
        if await ctx.store.insert_messages(target.id, target.bucket_of(monoton), [copy], now):
            return claim  # written now, or already there from an earlier try
        # The target's bucket was finalized without the copy: a move slower than the
        # target's finalize wait, or a redo after the target consumed the first copy and
        # dropped its bucket (then this is a second copy: the one case where a move is at
        # least once, not exactly once).
        try:
            fresh = await publisher.take_monotons(target.id)
        except QueueNotFound as gone:
            raise TargetGone(claim) from gone
        retarget = retargeted(claim, fresh, now)
        if not await ctx.store.cas_message(source.id, bucket, claim.version, retarget):
            return None
        claim = retarget
    raise Contention(f"could not {what} {source.id} monoton {claim.monoton}")
