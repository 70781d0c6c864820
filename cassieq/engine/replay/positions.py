"""Positions: where a subscription reads next, one monoton per partition, as opaque text.

A position lists, for each partition of the queue, the first monoton not yet read (a
partition it does not list starts at 0: a queue grown since reads its new partitions from
their start). The text is base64url of ``1:m0,m1,...`` — clients keep it as it is.
"""

from __future__ import annotations

import base64
import binascii

from cassieq.engine.errors import InvalidArgument
from cassieq.model import MAX_PARTITIONS

_PREFIX = "1:"
MAX_POSITION_TEXT = 8 * 1024


def encode(monotons: list[int]) -> str:
    text = _PREFIX + ",".join(str(m) for m in monotons)
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode(position: str, partitions: int) -> list[int]:
    """The monotons of ``position`` for a queue of ``partitions`` (missing ones: 0).
    InvalidArgument when it is not a position cassieq wrote."""
    problem = f"position {position[:80]!r} is not a position of this queue"
    if not position or len(position) > MAX_POSITION_TEXT:
        raise InvalidArgument(problem)
    try:
        padded = position + "=" * (-len(position) % 4)
        text = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
    except (binascii.Error, UnicodeError, ValueError) as bad:
        raise InvalidArgument(problem) from bad
    if not text.startswith(_PREFIX):
        raise InvalidArgument(problem)
    parts = text[len(_PREFIX) :].split(",")
    if len(parts) > MAX_PARTITIONS or not all(p.isdigit() and len(p) <= 19 for p in parts):
        raise InvalidArgument(problem)
    monotons = [int(p) for p in parts]
    if len(monotons) > partitions and any(monotons[partitions:]):
        raise InvalidArgument(problem)  # a partition this queue does not have
    return (monotons + [0] * partitions)[:partitions]


def advanced(monotons: list[int], partition: int, next_monoton: int) -> list[int]:
    moved = list(monotons)
    moved[partition] = max(moved[partition], next_monoton)
    return moved
