"""What the invisibility side (redeliver.py) keeps of the buckets behind the reader: the
buckets being left, the quiet entries, and the judgements of a left bucket's rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from cassieq.engine.life.take import without_body
from cassieq.model import BucketState, Counts, InvisibilityState, MessageRow, QueueId

QUIET_MAX_MS = 1_000
# How long gets leave a bucket to its seal at most: a seal kept waiting (LWT timeouts under
# contention, a node down) must not keep its expired leases from this server's gets.
LEAVING_MAX_MS = QUIET_MAX_MS
NEVER = 2**62


@dataclass(slots=True)
class Leaving:
    """A bucket this server's reader left (at ``since``), until its seal is told
    (``InvisibilitySide.left``)."""

    queue: QueueId
    bucket: int
    size: int  # the queue's bucket size
    since: int
    told: bool = False


@dataclass
class Quiet:
    unacked: set[int]
    due: int
    # The read it was made of, or the rows as this server's reader's takes left them (see
    # InvisibilitySide.left), without the bodies.
    snap: BucketState


def pending(snap: BucketState) -> list[MessageRow]:
    """Messages of a left bucket that this side must still see acked."""
    return [
        m
        for m in snap.messages
        if not m.acked and m.republished_to is None and not m.late_write(snap.sealed_at)
    ]


def due_of(left: list[MessageRow]) -> int:
    """When the first of these messages becomes visible (never, for none)."""
    return min((m.next_visible_on for m in left), default=NEVER)


def bump(state: InvisibilityState, **changes: Any) -> InvisibilityState:
    """The state with ``changes``, as the next revision (every change is a CAS on rev)."""
    return msgspec.structs.replace(state, rev=state.rev + 1, **changes)


def without_bodies(snap: BucketState) -> BucketState:
    """The snapshot as a quiet entry keeps it: the state of each row, for passing the
    bucket (a pass delivers nothing), without the bodies and attributes, which the
    thousands of entries a server may hold would otherwise keep alive."""
    return msgspec.structs.replace(snap, messages=tuple(map(without_body, snap.messages)))


def settled_counts(snap: BucketState) -> Counts:
    """Counts of a bucket the pointer is done with; late writes count where repair moves them."""
    return Counts.of([m for m in snap.messages if not m.late_write(snap.sealed_at)])
