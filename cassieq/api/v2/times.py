"""The one time format of v2 bodies."""

from __future__ import annotations

import functools
from datetime import UTC, datetime


def iso_time(epoch_ms: int) -> str:
    """``2026-11-22T21:45:54.123Z``: ISO 8601, UTC, milliseconds."""
    seconds, ms = divmod(epoch_ms, 1000)
    return f"{_second(seconds)}.{ms:03d}Z"


@functools.lru_cache(maxsize=4096)
def _second(epoch_s: int) -> str:
    # Cached: a receive of ten formats twenty times, mostly of the same few seconds (a
    # datetime each was 1.5% of the server's time under batches of ten).
    return datetime.fromtimestamp(epoch_s, UTC).isoformat()[:19]
