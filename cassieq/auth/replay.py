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

Each account has its own budget (``per_account`` live entries) within the whole: one account
signing as fast as it can fills its own budget and gets the 503s, never another account's
(#40: one account filled the shared cache and every other account's v2 requests got 503).
"""

from __future__ import annotations

import heapq
from collections import Counter
from datetime import datetime


class ReplayCacheFull(Exception):
    """No room to remember one more signature within the skew window."""


class ReplayCache:
    def __init__(self, max_entries: int, per_account: int | None = None) -> None:
        self.max_entries = max_entries
        self.per_account = max_entries if per_account is None else min(per_account, max_entries)
        self._expiry: dict[str, float] = {}
        self._held: Counter[str] = Counter()  # live entries by account
        # (expiry, signature, account), the earliest first: expired entries go in O(log n).
        self._heap: list[tuple[float, str, str]] = []

    def __len__(self) -> int:
        return len(self._expiry)

    def held_by(self, account: str) -> int:
        return self._held[account]

    def _prune(self, now: float) -> None:
        while self._heap and self._heap[0][0] <= now:
            _, signature, account = heapq.heappop(self._heap)
            if self._expiry.pop(signature, None) is not None:
                self._held[account] -= 1
                if not self._held[account]:
                    del self._held[account]

    def seen(self, signature: str, expires: datetime, now: datetime, account: str = "") -> bool:
        """Remember ``signature`` (of ``account``) until ``expires``; True if it was already
        remembered.

        Synchronous and without an await: two requests with the same signature, on one
        event loop, cannot both find it new."""
        at = now.timestamp()
        self._prune(at)
        if signature in self._expiry:
            return True
        if self._held[account] >= self.per_account:
            raise ReplayCacheFull(
                f"too many signed requests of this account within the allowed clock skew "
                f"({self.per_account} remembered); sign again and retry"
            )
        if len(self._expiry) >= self.max_entries:
            raise ReplayCacheFull(
                f"too many signed requests within the allowed clock skew "
                f"({self.max_entries} remembered); sign again and retry"
            )
        until = expires.timestamp()
        self._expiry[signature] = until
        self._held[account] += 1
        heapq.heappush(self._heap, (until, signature, account))
        return False
