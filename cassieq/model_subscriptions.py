"""Subscriptions (issue 36): a queue's messages read again by position, over the one copy.

A subscription keeps its own position in the queue (one next monoton per partition); the
messages are the queue's own rows, never copied. Kept apart from model.py (at its size
limit); the store and the engine both use these records.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from cassieq.model import QueueId

SubscriptionMode = Literal["shared", "ordered"]
MODES: tuple[SubscriptionMode, ...] = ("shared", "ordered")
# Names as queue names are: letters, digits, '-', '_' (checked by the API and the engine).
MAX_SUBSCRIPTIONS_PER_QUEUE = 64
MAX_READ_LIMIT = 1000


class SubscriptionDef(msgspec.Struct, frozen=True, kw_only=True):
    """A subscription as stored: its queue (the queue's whole id, so a re-created queue of
    the same name has none), its options as created, and its committed position.

    ``position`` is the canonical text of a Position (positions.py); ``revision`` is bumped
    by every change of it (a commit, a seek) and ``change`` is the token of the write that
    made it (it resolves a timed-out compare-and-set: a row carrying our token is ours)."""

    queue: QueueId
    name: str
    mode: SubscriptionMode
    start: str  # "earliest", "latest" or an RFC 3339 time, as given at creation
    created_at: int
    position: str
    revision: int
    change: str


class ReadMessage(msgspec.Struct, frozen=True, kw_only=True):
    """A message as an ordered read returns it; ``position`` is the position just after it
    (commit it once the message is processed)."""

    partition: int
    monoton: int
    body: str
    attributes: dict[str, str]
    sent_at: int
    position: str
    group: str | None = None


class ReadBatch(msgspec.Struct, frozen=True, kw_only=True):
    messages: list[ReadMessage]
    next: str  # the position after the last message returned (the read's start if none)


class SubscriptionInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A subscription with what it has left: ``lag`` counts the messages after its committed
    position (monotons taken, so a message still being written counts), and
    ``oldest_unread_at`` is the send time of the first of them still stored (None: none)."""

    definition: SubscriptionDef
    lag: int
    oldest_unread_at: int | None


class SeekTarget(msgspec.Struct, frozen=True, kw_only=True):
    """Where a seek goes: exactly one of ``to`` ("earliest" | "latest"), ``time`` (ms since
    the epoch: the first message sent at or after it) or ``position``."""

    to: Literal["earliest", "latest"] | None = None
    time: int | None = None
    position: str | None = None
