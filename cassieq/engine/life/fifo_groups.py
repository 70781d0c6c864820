"""FIFO queues: the groups a receive looks at (issue 37).

A FIFO receive goes to the groups' heads (life/fifo.py ``next_heads``): the groups this
server's acks just freed first, then groups from the queue partition's list of groups
(``fifo_groups``, schema 0016), a page at a time from a cursor that goes round, so every
group comes up in turn whichever server put into it. Scanning the buckets behind the reader
for heads (what a receive did before) read every message held for its group's turn, over
and over; a group's head is found by two reads (its first entries, then that message).

A put records its group (``announce``: a plain write, at most once per ANNOUNCE_MS per group
and server, before its entry and message). Nothing removes a group's row: it expires with
the queue's retention plus a day after the group's last put. A group found with no
entries is passed by for EMPTY_MS (this server's own put into it ends that at once).

The list is only where to look: a group missing from it (its put's write of the row failed)
is still found by the scan behind the reader, as before, only later.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from cassieq.engine.context import EngineContext
from cassieq.engine.recent import Recent
from cassieq.model import QueueDefinition, QueueId
from cassieq.store.base import StoreError

# Groups read per listing, and how long a page is used before it is read again (new groups
# of other servers' puts are seen after this at most).
LIST_PAGE = 64
LIST_MS = 1_000
# How long this server rewrites no group row it wrote (the row's TTL is the retention plus
# a day: refreshed once a minute per server and group is plenty).
ANNOUNCE_MS = 60_000
# How long a group found with no entries is passed by.
EMPTY_MS = 500
KNOWN = 65_536


@dataclass(slots=True)
class _Page:
    groups: list[str]
    fetched_at: int
    # Whether the listing may go on after this page (it came back full).
    more: bool
    at: int = 0  # the next group of the page to look at
    seen: set[str] = field(default_factory=set)


class GroupList:
    """This server's view of each FIFO queue partition's groups."""

    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx
        self._announced: Recent[tuple[QueueId, str], bool] = Recent(ctx, ANNOUNCE_MS, KNOWN)
        self._empty: Recent[tuple[QueueId, str], bool] = Recent(ctx, EMPTY_MS, KNOWN)
        self._pages: dict[QueueId, _Page] = {}
        # Where this server's looks start in a page: servers looking at the same groups from
        # the same place would race for the same heads (one compare-and-set wins each).
        self._start = zlib.crc32(ctx.instance_id.encode())

    async def announce(self, queue: QueueDefinition, groups: set[str], ttl_s: int) -> None:
        """Record the groups of a put (before its entries): a plain write per group this
        server has not recorded in the last ANNOUNCE_MS."""
        now = self._ctx.clock.now()
        for group in groups:
            self._empty.drop((queue.id, group))
        new = [g for g in groups if self._announced.get((queue.id, g)) is None]
        if not new:
            return
        # Side by side: a put of several new groups waited for one write after another.
        await asyncio.gather(*(self._ctx.store.touch_group(queue.id, g, now, ttl_s) for g in new))
        for group in new:
            self._announced.put((queue.id, group), True)
        page = self._pages.get(queue.id)
        if page is not None and not set(new) <= set(page.groups):
            # This server's receives see its own new groups at once (others' a page read
            # later: LIST_MS at most).
            del self._pages[queue.id]

    def found_empty(self, queue: QueueId, group: str) -> None:
        self._empty.put((queue, group), True)

    async def next_groups(
        self, queue: QueueDefinition, count: int, passed: Callable[[str], bool]
    ) -> list[str]:
        """Up to ``count`` groups of the queue partition to look at now, in turn from where
        the last look stopped: groups ``passed`` says to pass by (held, or being looked at
        already) and groups found empty a moment ago are left out."""
        page = await self._page(queue.id)
        if page is None:
            return []
        picked: list[str] = []
        size = len(page.groups)
        for _ in range(size):
            if len(picked) >= count:
                break
            group = page.groups[page.at % size]
            page.at += 1
            page.seen.add(group)
            if self._empty.get((queue.id, group)) is None and not passed(group):
                picked.append(group)
        return picked

    async def _page(self, queue: QueueId) -> _Page | None:
        """The page to look at: the one in use while it is recent and not looked through,
        else the next (the first again after the last)."""
        now = self._ctx.clock.now()
        page = self._pages.get(queue)
        if (
            page is not None
            and now - page.fetched_at < LIST_MS
            and (len(page.seen) < len(page.groups) or not page.more)
        ):
            return page
        after = page.groups[-1] if page is not None and page.more and page.groups else ""
        try:
            groups = await self._ctx.store.list_groups(queue, after, LIST_PAGE)
            if not groups and after:
                groups = await self._ctx.store.list_groups(queue, "", LIST_PAGE)
        except StoreError as exc:  # the scan behind the reader still finds every group
            self._ctx.log.info("fifo_groups_unread", queue=str(queue), error=str(exc))
            return page
        if not groups:
            self._pages.pop(queue, None)
            return None
        # The same page read again (one page holds every group): go on where it stopped.
        at = page.at if page is not None and page.groups == groups else self._start
        self._pages[queue] = _Page(groups, now, more=len(groups) >= LIST_PAGE, at=at)
        return self._pages[queue]
