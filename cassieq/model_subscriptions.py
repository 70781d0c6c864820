"""Subscriptions (issue 36): a queue's messages read again by position, over the one copy.

A subscription keeps its own position in the queue (one next monoton per partition); the
messages are the queue's own rows, never copied. Kept apart from model.py (at its size
limit); the store and the engine both use these records.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Literal

import msgspec

from cassieq.model import QueueId

SubscriptionMode = Literal["shared", "ordered"]
MODES: tuple[SubscriptionMode, ...] = ("shared", "ordered")
# Names as queue names are: letters, digits, '-', '_' (checked by the API and the engine).
MAX_SUBSCRIPTIONS_PER_QUEUE = 64
MAX_READ_LIMIT = 1000


# The times a subscription's start, a seek and an export take (shared by the API, the
# engine and the pipeline).
TIME_RULE = 'an RFC 3339 time with its offset ("2026-11-27T09:00:00Z")'
# RFC 3339's date-time (section 5.6): a time zone offset is required; "T" or a space
# between date and time (the RFC's note allows the space); any number of fraction digits.
# Upper case only, as v2 has always taken a start and a seek's time.
_RFC3339 = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def rfc3339_ms(text: str, field: str = "time", rule: str = TIME_RULE) -> int:
    """Milliseconds since the epoch of an RFC 3339 time, rounded up: "the first message
    sent at or after T" must not take one sent within T's millisecond but before it (sends
    are stamped in milliseconds). Raises ValueError naming ``field`` and its rule."""
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise ValueError(f"{field} must be {rule}, not {text!r}")
    date, clock, fraction, offset = match.groups()
    zone = "+00:00" if offset == "Z" else offset
    try:
        whole = datetime.fromisoformat(f"{date}T{clock}{zone}")
    except ValueError as exc:  # a month 13, a 25th hour, an offset of +24:00
        raise ValueError(f"{field} {text!r} is not a valid time: {exc}") from None
    seconds = (whole - EPOCH) // timedelta(seconds=1)
    # Fraction digits past the microsecond are kept (datetime would drop them): exact.
    digits = fraction or ""
    sub_ms = -(-int(digits or "0") * 1000 // 10 ** len(digits)) if digits else 0
    return seconds * 1000 + sub_ms


def ms_rounded_up(moment: datetime) -> int:
    """Milliseconds since the epoch of an aware time, a fraction of one rounded up (exact:
    no float on the way)."""
    micros = (moment - EPOCH) // timedelta(microseconds=1)
    return -(-micros // 1000)


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
    # Shared subscriptions (schema 0015): the seek generation (a receipt names it) and the
    # position of the first message not finished (acked, expired, dead-lettered) in each
    # partition; ``position`` is then the next message never delivered.
    generation: int = 0
    done: str = ""


Finished = Literal["acked", "expired", "dead_lettered"]


class SubDelivery(msgspec.Struct, frozen=True, kw_only=True):
    """A shared subscription's state of one message (its own row, apart from the message's):
    ``version`` grows with every change (a receipt names it), ``finished`` is None while
    the message may be delivered again. ``change``: the token of the write that made it."""

    monoton: int
    version: int
    delivery_count: int
    next_visible_on: int
    tag: str
    updated_at: int
    change: str
    finished: Finished | None = None
    first_delivered_at: int | None = None


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
