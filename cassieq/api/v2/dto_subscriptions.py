"""Request and response bodies of the v2 subscription routes (issue 36), camelCase on the wire.

- ``mode``: ``ordered`` (read by position, commit, seek) or ``shared`` (a queue of its own
  over the queue's messages: receive, ack, visibility, seek; the bodies of those routes are
  the queue's, dto_messages.py);
- ``start`` and a seek's ``time``: ``earliest``, ``latest`` or an RFC 3339 time with its
  offset (``2026-11-27T09:00:00Z``, ``2026-11-27T10:00:00.250+01:00``);
- positions are opaque strings: a client stores one it was given (a read's ``next``, a
  message's ``position``) and sends it back, never makes one up;
- times in answers (``createdAt``, ``sentAt``) are ISO-8601 UTC with milliseconds, as
  everywhere in v2.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec

from cassieq.api.v2.times import iso_time
from cassieq.model import message_id
from cassieq.model_subscriptions import (
    TIME_RULE,
    ReadBatch,
    ReadMessage,
    SeekTarget,
    SubscriptionDef,
    SubscriptionInfo,
    SubscriptionMode,
    rfc3339_ms,
)

# Generous: a position names a place in each partition of the queue (at most 256 of them);
# its form is the engine's (opaque here), which refuses one that is not of this queue.
MAX_POSITION_LENGTH = 8192
Position = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_POSITION_LENGTH)]
START_RULE = f"earliest, latest or {TIME_RULE}"


def check_start(start: str) -> None:
    if start not in ("earliest", "latest"):
        rfc3339_ms(start, "start", START_RULE)


class SubscriptionOptionsBody(
    msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True
):
    """PUT: the subscription's options. ``start`` (where a new subscription's position is
    put): absent, ``latest`` (the messages sent from now on), as Kafka and Pulsar start."""

    EXAMPLE: ClassVar[dict[str, Any]] = {"mode": "ordered", "start": "earliest"}

    mode: SubscriptionMode
    start: Annotated[str, msgspec.Meta(description=START_RULE)] = "latest"

    def __post_init__(self) -> None:
        check_start(self.start)


class SubscriptionBody(msgspec.Struct, frozen=True, rename="camel"):
    """A subscription: its options as created and its committed position (a shared one's:
    the next message never delivered in it)."""

    name: str
    mode: SubscriptionMode
    start: str  # as given at creation
    created_at: str  # ISO-8601 UTC
    position: str  # opaque: the next read starts after it

    @classmethod
    def of(cls, s: SubscriptionDef) -> SubscriptionBody:
        return cls(
            name=s.name,
            mode=s.mode,
            start=s.start,
            created_at=iso_time(s.created_at),
            position=s.position,
        )


class SubscriptionDetailBody(msgspec.Struct, frozen=True, rename="camel"):
    """A subscription with what it has left to read (ordered) or to ack (shared)."""

    name: str
    mode: SubscriptionMode
    start: str
    created_at: str
    position: str
    # Ordered: messages after its committed position; shared: messages not yet acked in it
    # nor passed (dead-lettered, expired).
    lag: int
    # Since the first of them was sent, by this server's clock; null when there is none.
    oldest_unacked_age_seconds: float | None

    @classmethod
    def of(cls, info: SubscriptionInfo, now_ms: int) -> SubscriptionDetailBody:
        s = info.definition
        sent = info.oldest_unread_at
        return cls(
            name=s.name,
            mode=s.mode,
            start=s.start,
            created_at=iso_time(s.created_at),
            position=s.position,
            lag=info.lag,
            # Never negative: the message may be stamped by a server whose clock is ahead.
            oldest_unacked_age_seconds=None if sent is None else max(0, now_ms - sent) / 1000,
        )


class SubscriptionListBody(msgspec.Struct, frozen=True):
    subscriptions: list[SubscriptionDetailBody]


class ReadMessageBody(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    # omit_defaults: groupId only when the message has one (as receive and peek show it).
    id: str  # as send, receive and peek give it
    body: str
    attributes: dict[str, str]
    position: str  # the position just after this message: commit it once it is processed
    sent_at: str  # ISO-8601 UTC
    group_id: str | None = None

    @classmethod
    def of(cls, m: ReadMessage) -> ReadMessageBody:
        return cls(
            id=message_id(m.partition, m.monoton),
            body=m.body,
            attributes=m.attributes,
            position=m.position,
            sent_at=iso_time(m.sent_at),
            group_id=m.group,
        )


class ReadBody(msgspec.Struct, frozen=True):
    messages: list[ReadMessageBody]
    next: str  # the position after the last message (the read's start when there is none)

    @classmethod
    def of(cls, batch: ReadBatch) -> ReadBody:
        return cls(messages=[ReadMessageBody.of(m) for m in batch.messages], next=batch.next)


class CommitRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Commit ``position``; with ``expected``, only if the stored position is that one
    (compare-and-set: 409 otherwise, nothing changed)."""

    # A static example cannot hold a position a read gave: this one is the start of every
    # queue (before its first message), which any subscription may commit.
    EXAMPLE: ClassVar[dict[str, Any]] = {"position": "MTow"}

    position: Position
    expected: Position | None = None


class SeekPoint(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``{"time": "<RFC 3339>"}`` (the first message sent at or after it) or
    ``{"position": p}``: exactly one of them."""

    time: Annotated[str, msgspec.Meta(description=TIME_RULE)] | None = None
    position: Position | None = None

    def __post_init__(self) -> None:
        if (self.time is None) == (self.position is None):
            raise ValueError('to needs exactly one of "time" and "position"')
        if self.time is not None:
            rfc3339_ms(self.time)


class SeekRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Where the next read starts: ``earliest`` (the oldest message still stored),
    ``latest`` (after the last one sent), ``{"time": ...}`` or ``{"position": ...}``."""

    EXAMPLE: ClassVar[dict[str, Any]] = {"to": "earliest"}

    to: Literal["earliest", "latest"] | SeekPoint

    def target(self) -> SeekTarget:
        if isinstance(self.to, str):
            return SeekTarget(to=self.to)
        if self.to.time is not None:
            return SeekTarget(time=rfc3339_ms(self.to.time))
        return SeekTarget(position=self.to.position)
