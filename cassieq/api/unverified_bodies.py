"""Room for request bodies read before their signature is verified (issue 40, finding 3).

A v2 signature covers the body, so a request signed with a well-formed credential (the
account and key names are no secrets) must be read before it can be refused: measured
before, eight uploads of 26.6 MiB with a wrong signature took a server from 87 to 434 MB.
The bytes such bodies hold at once are bounded here, in all and per account named in the
path: a request reserves its Content-Length (a chunked one, its route's limit) before a
byte is read, and gives it back once its signature is checked, whatever the outcome. A
request that finds no room is answered 503 with Retry-After at once, before reading; one
account's strangers fill that account's room, not the others'.

A verified body is the tenant's own (its request budget is spent on it): it is no longer
counted here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from cassieq.auth.access import AuthError


class NoRoomForBody(AuthError):
    """Too many bytes of unverified bodies are being read now: 503, try again shortly."""

    status = 503


class UnverifiedBodies:
    def __init__(self, max_bytes: int, max_bytes_per_account: int) -> None:
        self.max_bytes = max_bytes
        self.max_bytes_per_account = max_bytes_per_account
        self.held = 0
        self._by_account: dict[str, int] = {}

    @asynccontextmanager
    async def room(self, account: str, size: int) -> AsyncIterator[None]:
        """Hold ``size`` bytes for a body of ``account`` while it is read and checked."""
        mine = self._by_account.get(account, 0)
        # One body larger than a share is let through when nothing else of it is held:
        # the route's own limit bounds it, and a lone client must be able to send one.
        if (mine and mine + size > self.max_bytes_per_account) or (
            self.held and self.held + size > self.max_bytes
        ):
            raise NoRoomForBody(
                "too many unverified request bodies are being read now: try again shortly"
            )
        self.held += size
        self._by_account[account] = mine + size
        try:
            yield
        finally:
            self.held -= size
            left = self._by_account[account] - size
            if left:
                self._by_account[account] = left
            else:
                del self._by_account[account]
