"""Writes of one bucket grouped while one is out (engine/life/bucket_groups.py), alone:
a write function the test holds open, so what goes when, and together, is seen exactly."""

from __future__ import annotations

import asyncio
import gc

import pytest

from cassieq.engine.life.bucket_groups import MAX_GROUP_ENTRIES, BucketGroups


class Writes:
    """A write function whose calls wait until the test lets them finish; each entry is an
    int (its own monoton); entries listed in ``refuse`` come back not applied."""

    def __init__(self) -> None:
        self.calls: list[list[int]] = []
        self.gates: list[asyncio.Future[None]] = []
        self.refuse: set[int] = set()
        self.fail: BaseException | None = None
        self._made = asyncio.Condition()

    async def __call__(self, entries: list[int]) -> list[bool]:
        self.calls.append(list(entries))
        gate = asyncio.get_running_loop().create_future()
        self.gates.append(gate)
        async with self._made:
            self._made.notify_all()
        await gate
        if self.fail is not None:
            raise self.fail
        return [e not in self.refuse for e in entries]

    async def release(self, index: int) -> None:
        """Let call ``index`` finish, once it was made."""
        async with self._made:
            await self._made.wait_for(lambda: len(self.gates) > index)
        self.gates[index].set_result(None)


def groups() -> BucketGroups[int]:
    return BucketGroups(lambda entry: entry)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_the_first_goes_at_once_and_those_behind_it_go_together() -> None:
    g, write = groups(), Writes()
    first = asyncio.create_task(g.run("b", [1], write))
    await settle()
    assert write.calls == [[1]]  # at once, alone: no timer
    later = [asyncio.create_task(g.run("b", [m], write)) for m in (2, 3, 4)]
    await settle()
    assert write.calls == [[1]]  # they wait for the first
    write.refuse = {3}
    await write.release(0)
    await write.release(1)
    assert await first == [True]
    assert [await t for t in later] == [[True], [False], [True]]  # each its own answer
    assert write.calls == [[1], [2, 3, 4]]


async def test_other_keys_do_not_wait() -> None:
    g, write = groups(), Writes()
    a = asyncio.create_task(g.run("a", [1], write))
    b = asyncio.create_task(g.run("b", [1], write))
    await settle()
    assert write.calls == [[1], [1]]
    await write.release(0)
    await write.release(1)
    assert await a == [True] and await b == [True]


async def test_a_message_named_twice_waits_for_the_next_batch_and_so_do_those_behind() -> None:
    g, write = groups(), Writes()
    first = asyncio.create_task(g.run("b", [1], write))
    await settle()
    again = [asyncio.create_task(g.run("b", [m], write)) for m in (5, 5, 6)]
    await settle()
    await write.release(0)
    await write.release(1)
    await write.release(2)
    await first
    assert [await t for t in again] == [[True]] * 3
    assert write.calls == [[1], [5], [5, 6]]  # nothing overtakes the call left behind


async def test_a_batch_holds_at_most_the_cap_and_never_splits_a_call() -> None:
    g, write = groups(), Writes()
    first = asyncio.create_task(g.run("b", [-1], write))
    await settle()
    singles = [asyncio.create_task(g.run("b", [m], write)) for m in range(MAX_GROUP_ENTRIES - 1)]
    pair = asyncio.create_task(g.run("b", [1000, 1001], write))  # over the cap by one
    big = list(range(2000, 2000 + MAX_GROUP_ENTRIES + 3))
    whole = asyncio.create_task(g.run("b", big, write))
    await settle()
    for i in range(4):
        await write.release(i)
    await first
    assert [await t for t in singles] == [[True]] * (MAX_GROUP_ENTRIES - 1)
    assert await pair == [True, True] and await whole == [True] * len(big)
    assert write.calls[1:] == [list(range(MAX_GROUP_ENTRIES - 1)), [1000, 1001], big]


async def test_a_cancelled_group_write_leaves_no_waiter_behind() -> None:
    g, write = groups(), Writes()
    first = asyncio.create_task(g.run("b", [1], write))
    await settle()
    grouped = asyncio.create_task(g.run("b", [2], write))
    behind = asyncio.create_task(g.run("b", [2], write))  # the same message: the next batch
    await settle()
    await write.release(0)
    assert await first == [True]
    write.fail = asyncio.CancelledError()  # the server stopping while the group is out
    await write.release(1)
    await settle()
    assert grouped.cancelled() and behind.cancelled()  # neither waits for good
    write.fail = None
    again = asyncio.create_task(g.run("b", [3], write))
    await settle()
    assert write.calls[-1] == [3]  # the key is free
    await write.release(2)
    assert await again == [True]


async def test_a_write_answering_the_wrong_count_fails_its_calls_instead_of_hanging() -> None:
    async def short(entries: list[int]) -> list[bool]:
        await asyncio.sleep(0)
        return [True]

    g = groups()
    first = asyncio.create_task(g.run("b", [1], short))
    later = [asyncio.create_task(g.run("b", [m], short)) for m in (2, 3)]
    assert await first == [True]
    for task in later:
        with pytest.raises(RuntimeError, match="1 outcomes for 2 entries"):
            await task


async def test_an_error_reaches_every_waiter_of_its_batch_and_frees_the_key() -> None:
    g, write = groups(), Writes()
    first = asyncio.create_task(g.run("b", [1], write))
    await settle()
    later = [asyncio.create_task(g.run("b", [m], write)) for m in (2, 3)]
    await settle()
    await write.release(0)
    assert await first == [True]
    write.fail = RuntimeError("undecided")
    await write.release(1)
    for task in later:
        with pytest.raises(RuntimeError, match="undecided"):
            await task
    write.fail = None
    again = asyncio.create_task(g.run("b", [4], write))
    await settle()
    assert write.calls[-1] == [4]  # the key is free: at once
    await write.release(2)
    assert await again == [True]


async def test_a_waiter_that_goes_away_leaves_the_group_whole() -> None:
    g, write = groups(), Writes()
    first = asyncio.create_task(g.run("b", [1], write))
    await settle()
    gone = asyncio.create_task(g.run("b", [2], write))
    stays = asyncio.create_task(g.run("b", [3], write))
    await settle()
    gone.cancel()
    await settle()
    await write.release(0)
    await write.release(1)
    await first
    assert await stays == [True]
    assert write.calls == [[1], [2, 3]]  # its entry was written with the others
    assert gone.cancelled()


async def test_a_first_writer_that_goes_away_still_lets_the_waiters_go() -> None:
    g, write = groups(), Writes()
    first = asyncio.create_task(g.run("b", [1], write))
    await settle()
    waiter = asyncio.create_task(g.run("b", [2], write))
    await settle()
    first.cancel()
    await settle()
    assert first.cancelled()
    await write.release(1)
    assert await waiter == [True]
    assert write.calls == [[1], [2]]


async def test_the_error_of_a_gone_waiters_batch_is_not_left_unretrieved() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, object]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        g, write = groups(), Writes()
        first = asyncio.create_task(g.run("b", [1], write))
        await settle()
        gone = asyncio.create_task(g.run("b", [2], write))
        await settle()
        gone.cancel()
        await settle()
        write.fail = RuntimeError("undecided")
        await write.release(0)
        await write.release(1)
        with pytest.raises(RuntimeError):
            await first
        await settle()
        del gone
        gc.collect()
        await settle()
    finally:
        loop.set_exception_handler(previous)
    assert [c["message"] for c in reported] == []
