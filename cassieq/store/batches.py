"""What the store's batches of message rows may hold: their size in bytes (split into
parts by ``by_bytes``), one change per message, a change token per row, a unit per entry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from cassieq.model import MessageRow, message_bytes

T = TypeVar("T")

# The most message bytes (bodies and attributes, UTF-8) one insert_messages call or one
# conditional batch of cas_messages carries. Cassandra refuses a request larger than
# native_transport_max_message_size (16 MiB by default) and a mutation larger than half
# a commit log segment (16 MiB by default): a bucket of 100 messages of 250 KB was one
# 25 MB batch, refused, and every put in it failed. Callers send larger sets in parts
# (``by_bytes``); a default bucket of 20 messages of the largest size fits in one.
MAX_BATCH_BYTES = 8 * 1024 * 1024


def row_bytes(row: MessageRow) -> int:
    """The bytes of a row that count against MAX_BATCH_BYTES."""
    return message_bytes(row.message, row.attributes)


def by_bytes(items: Sequence[T], size: Callable[[T], int]) -> list[list[T]]:
    """``items`` in order, in consecutive parts of at most MAX_BATCH_BYTES each (an item
    larger on its own is a part of its own)."""
    parts: list[list[T]] = []
    total = 0
    for item in items:
        n = size(item)
        if not parts or total + n > MAX_BATCH_BYTES:
            parts.append([])
            total = 0
        parts[-1].append(item)
        total += n
    return parts


AckEntry = tuple[int, int, str]
"""A batch ack's entry: (monoton, version, tag), as ``ack_message`` takes them."""


def check_monotons(monotons: Sequence[int]) -> None:
    """One entry per message: a conditional batch with two changes of one row would apply
    only one of them, so both stores refuse it."""
    if len(set(monotons)) != len(monotons):
        raise ValueError("a batch changes each message at most once")


def check_cas_entries(
    entries: Sequence[tuple[int, MessageRow]], units: Sequence[int] | None = None
) -> None:
    """Each row of ``cas_messages`` carries the change token of its own write: the read
    back of a lost answer tells that write by it (an empty token would be any row's)."""
    check_monotons([row.monoton for _, row in entries])
    if any(not row.change for _, row in entries):
        raise ValueError("each row of cas_messages needs a change token")
    if units is not None and len(units) != len(entries):
        raise ValueError("cas_messages needs one unit per entry")


def check_ack_entries(entries: Sequence[AckEntry]) -> None:
    check_monotons([monoton for monoton, _, _ in entries])
