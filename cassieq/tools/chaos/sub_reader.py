"""An ordered subscription's reader in a chaos run: read, commit ``next``, and settle every
commit whose outcome is unknown by reading the stored position back (issue 36).

One reader per subscription, so its commits are sequential and ``expected`` is always the
position it last knew committed: a compare-and-set that cannot overwrite anything it did
not see. A commit refused or not applied is not retried: the reader reads again from the
stored position (reading again what was not committed is at least once, as promised).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

from cassieq.tools.chaos.ledger import Call
from cassieq.tools.chaos.sub_ledger import SubCommit, SubLedger, SubRead, settle

READ_LIMIT = 50
IDLE_S = 0.3  # after a read with nothing new
RETRY_S = 0.3  # after a request that got no answer or a 5xx


class SubscriptionClient(Protocol):
    """What the reader needs of the chaos client (ChaosClient; the unit tests' scripted one)."""

    def other(self, server: str) -> str: ...

    async def read_subscription(self, server: str, name: str, limit: int) -> SubRead: ...

    async def commit_subscription(
        self, server: str, name: str, position: str, expected: str
    ) -> Call: ...

    async def subscription(self, server: str, name: str) -> tuple[Call, str | None, int | None]: ...


class SubscriptionReader:
    def __init__(
        self,
        client: SubscriptionClient,
        book: SubLedger,
        home: str,
        *,
        over: Callable[[], bool],
        finishing: Callable[[], bool],
        limit: int = READ_LIMIT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``over``: stop now (deadline, or the run is stopping); ``finishing``: the queue
        has drained, so the reader stops once its subscription has caught up; ``clock``:
        the ledger's (the client's requests are timed on it)."""
        self._client, self._book, self._home = client, book, home
        self._over, self._finishing, self._limit = over, finishing, limit
        self._clock = clock
        # Commits thought not applied whose write might still land (no answer came).
        self._open: list[SubCommit] = []

    async def run(self) -> None:
        expected = await self._read_back()
        if expected is None:
            return  # the deadline came before any server answered
        while not self._over():
            read = await self._read()
            if read.next is None:
                await asyncio.sleep(RETRY_S)
                continue
            if not read.messages and read.next == expected:
                if self._finishing():
                    stored = await self._read_back()
                    if stored is None:
                        return
                    if stored == expected and self._book.final_lag == 0:
                        return
                    expected = self._learn(stored, None, expected)
                await asyncio.sleep(IDLE_S)
                continue
            expected = await self._commit(read, expected)

    async def _read(self) -> SubRead:
        name = self._book.name
        read = await self._client.read_subscription(self._home, name, self._limit)
        if read.status is None or read.status >= 500:
            # The home server is down or failing: this round goes to the other one.
            read = await self._client.read_subscription(
                self._client.other(self._home), name, self._limit
            )
        self._book.reads.append(read)
        return read

    async def _commit(self, read: SubRead, expected: str) -> str:
        """Commit the read's ``next``; the position known committed afterwards."""
        assert read.next is not None
        call = await self._client.commit_subscription(
            read.server, self._book.name, read.next, expected
        )
        c = SubCommit(
            read=len(self._book.reads) - 1,
            server=read.server,
            send=call.send,
            recv=call.recv,
            status=call.status,
            position=read.next,
            expected=expected,
        )
        self._book.commits.append(c)
        if call.status == 200:
            c.applied, c.known_at, c.how = True, call.recv, "answer"
            self._open.clear()  # the revision moved: no earlier write can land now
            return read.next
        if call.status is not None and call.status < 500:
            # Refused (409: not the expected position; an earlier write may have landed).
            c.applied, c.known_at, c.how = False, call.recv, "answer"
            stored = await self._read_back()
            return expected if stored is None else self._learn(stored, None, expected)
        # No answer or a 5xx: it may or may not have applied; the stored position says.
        stored = await self._read_back()
        if stored is None:
            return expected  # unresolved: the deadline came
        return self._learn(stored, c, expected)

    def _learn(self, stored: str, trying: SubCommit | None, expected: str) -> str:
        """Record what the read-back ``stored`` shows; the position known committed."""
        now = self._clock()
        hit = None if stored == expected else settle(stored, trying, self._open)
        if trying is not None and hit is not trying:
            trying.applied, trying.known_at, trying.how = False, now, "read back"
            self._open.append(trying)
        if hit is None:
            if stored != expected:
                self._book.unexplained += 1
            return stored
        if hit is trying:
            hit.applied, hit.known_at, hit.how = True, now, "read back"
        else:
            hit.applied, hit.known_at, hit.how = True, now, "late"
        self._open.clear()
        return stored

    async def _read_back(self) -> str | None:
        """The stored position, asked of each server in turn until one answers (None at the
        deadline); its lag is noted as the latest one seen."""
        server = self._home
        while not self._over():
            _, position, lag = await self._client.subscription(server, self._book.name)
            if position is not None:
                self._book.final_lag = lag
                return position
            server = self._client.other(server)
            await asyncio.sleep(RETRY_S)
        return None
