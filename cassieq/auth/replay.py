"""The v2 signature's replay cache: one per server, in memory.

A verified signature is remembered until its date leaves the allowed skew (after that the
date check refuses it anyway), so a captured request cannot be re-sent to this server.
Servers do not share the cache: a capture could still be replayed once on each other
server within the skew, which is what "per server" in api-v2.md accepts.

Memory is bounded: entries expire with the skew window, and past ``max_entries`` live
entries a new signature is refused (``ReplayCacheFull``, answered 503 with Retry-After)
rather than admitted unremembered (that would open the replay) or the cache grown without
bound. 503, not 401: the credentials are fine, the server is momentarily out of room, and a
client that signs again a second later gets through once old entries expire.
"""

from __future__ import annotations

import heapq
from datetime import datetime


class ReplayCacheFull(Exception):
    """No room to remember one more signature within the skew window."""


class ReplayCache:
    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._expiry: dict[str, float] = {}
        # (expiry, signature), the earliest first: expired entries go in O(log n) each.
        self._heap: list[tuple[float, str]] = []

    def __len__(self) -> int:
        return len(self._expiry)

    def _prune(self, now: float) -> None:
        while self._heap and self._heap[0][0] <= now:
            _, signature = heapq.heappop(self._heap)
            self._expiry.pop(signature, None)

    def seen(self, signature: str, expires: datetime, now: datetime) -> bool:
        """Remember ``signature`` until ``expires``; True if it was already remembered.

        Synchronous and without an await: two requests with the same signature, on one
        event loop, cannot both find it new."""
        at = now.timestamp()
        self._prune(at)
        if signature in self._expiry:
            return True
        if len(self._expiry) >= self.max_entries:
            raise ReplayCacheFull(
                f"too many signed requests within the allowed clock skew "
                f"({self.max_entries} remembered); sign again and retry"
            )
        until = expires.timestamp()
        self._expiry[signature] = until
        heapq.heappush(self._heap, (until, signature))
        return False
