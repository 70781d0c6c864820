"""How many receives may wait at once on this server, in all and per account.

A waiting receive holds a request slot of the server for up to 20 s. Without a bound one
tenant's long polls held 973 of the 1,000 slots and every other client got 503 (issue 40,
finding 4). A receive beyond either bound does not wait: it answers what is visible now
(maybe nothing), which is what a long poll may always answer, so clients need no new case.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class LongPollSlots:
    def __init__(self, total: int, per_account: int) -> None:
        self._total = total
        self._per_account = per_account
        self._held: dict[str, int] = {}
        self._count = 0

    @contextmanager
    def hold(self, account: str) -> Iterator[bool]:
        """True (a slot is held for the block) when ``account`` may wait now; else False."""
        held = self._held.get(account, 0)
        if self._count >= self._total or held >= self._per_account:
            yield False
            return
        self._held[account] = held + 1
        self._count += 1
        try:
            yield True
        finally:
            self._count -= 1
            left = self._held[account] - 1
            if left:
                self._held[account] = left
            else:
                del self._held[account]  # no entry per account ever seen: bounded memory

    def waiting(self, account: str | None = None) -> int:
        return self._count if account is None else self._held.get(account, 0)
