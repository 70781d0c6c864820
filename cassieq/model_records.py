"""Records the engine keeps beside the messages: redrive tasks, leases and keyspace
secrets (model.py re-exports them: import them from there)."""

from __future__ import annotations

import msgspec


class RedriveTask(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    status: str  # "running", "completed", "failed", "cancelled", "interrupted"
    moved: int
    total: int
    failed: int = 0  # messages with nowhere to go (no recorded source, no single default)
    target: str | None = None  # the queue given as ``to`` (None: each to its source)
    updated_at: int = 0
    # Schema 0009 (SQS's message move tasks list and cancel them).
    started_at: int = 0
    max_per_second: int | None = None
    # Set by a cancel (any server), never by the runner's progress writes; the runner
    # stops at its next message and says "cancelled".
    cancel_requested: bool = False


class Lease(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    owner: str
    expires_at: int


class KeyspaceSecret(msgspec.Struct, frozen=True, kw_only=True):
    """A random secret every server of a keyspace shares, made once by the first server that
    needs it (first writer wins) and never derived from anything else.

    A rotation replaces ``value`` (``version`` + 1) and keeps the one it replaced in
    ``previous``, still accepted until ``previous_until`` (ms since the epoch).
    """

    name: str
    value: str  # base64url of SECRET_BYTES random bytes
    version: int = 1
    previous: str | None = None
    previous_until: int | None = None
    created_at: int = 0
