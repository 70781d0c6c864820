from __future__ import annotations

import asyncio

import pytest

from cassieq.singleflight import SingleFlight


async def test_concurrent_callers_share_one_piece_of_work() -> None:
    flight: SingleFlight[str, int] = SingleFlight()
    calls = 0
    release = asyncio.Event()

    async def work() -> int:
        nonlocal calls
        calls += 1
        await release.wait()
        return 7

    waiters = [asyncio.create_task(flight.run("k", work)) for _ in range(5)]
    await asyncio.sleep(0)
    release.set()
    assert await asyncio.gather(*waiters) == [7] * 5
    assert calls == 1
    assert await flight.run("k", work) == 7 and calls == 2  # a later call works again


async def test_errors_reach_every_waiter() -> None:
    flight: SingleFlight[str, int] = SingleFlight()
    release = asyncio.Event()

    async def work() -> int:
        await release.wait()
        raise RuntimeError("store down")

    waiters = [asyncio.create_task(flight.run("k", work)) for _ in range(3)]
    await asyncio.sleep(0)
    release.set()
    results = await asyncio.gather(*waiters, return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)


async def test_a_cancelled_leader_hands_the_work_to_a_waiter() -> None:
    flight: SingleFlight[str, str] = SingleFlight()
    started = asyncio.Event()
    leader_may_finish = asyncio.Event()

    async def slow() -> str:
        started.set()
        await leader_may_finish.wait()
        return "leader"

    async def quick() -> str:
        return "waiter did it"

    leader = asyncio.create_task(flight.run("k", slow))
    await started.wait()
    waiter = asyncio.create_task(flight.run("k", quick))
    await asyncio.sleep(0)
    leader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leader
    assert await waiter == "waiter did it"
