"""Bodies of the operator's debug routes (pointers, buckets, monotons, message rows)."""

from __future__ import annotations

import msgspec


class MessageDebugBody(msgspec.Struct, frozen=True, rename="camel"):
    monoton: int
    message: str
    version: int
    delivery_count: int
    acked: bool
    dead_lettered: bool
    republished_to: int | None
    next_visible_on: int
    tag: str
    created_at: int
    updated_at: int


class TombstoneBody(msgspec.Struct, frozen=True, rename="camel"):
    bucket: int
    sealed_at: int | None
    finalized_at: int | None


class PointersBody(msgspec.Struct, frozen=True, rename="camel"):
    reader: int
    repair: int
    invisibility: int
    stragglers: dict[str, int]
    # Buckets each pointer trails the reader by: 0 or 1 is normal; more, for longer than
    # the finalize wait plus a minute, is a stall (the server logs queue_pointer_stalled).
    invisibility_lag: int
    repair_lag: int


class MonotonBody(msgspec.Struct, frozen=True, rename="camel"):
    value: int
