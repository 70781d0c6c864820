"""The bench's client loops count every message each client moved."""

from __future__ import annotations

import asyncio

from cassieq.tools.bench.measure import run_clients


async def test_every_clients_messages_are_counted() -> None:
    moved_by: dict[int, int] = {}

    async def step(client: int) -> int:
        # Every client is suspended here while the others run: their counts interleave.
        await asyncio.sleep(0)
        moved_by[client] = moved_by.get(client, 0) + 3
        return 3

    moved, elapsed = await run_clients(8, 0.05, step)
    assert len(moved_by) == 8
    assert moved == sum(moved_by.values())
    assert elapsed > 0
