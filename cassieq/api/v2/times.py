"""The one time format of v2 bodies."""

from __future__ import annotations

from datetime import UTC, datetime


def iso_time(epoch_ms: int) -> str:
    """``2026-11-22T21:45:54.123Z``: ISO 8601, UTC, milliseconds."""
    at = datetime.fromtimestamp(epoch_ms / 1000, UTC)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
