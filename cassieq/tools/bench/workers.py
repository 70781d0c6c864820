"""`cassieq bench --workers 1,2`: the v1 HTTP e2e of one `cassieq serve --workers N` per
count (#35 item 7), at the run's top concurrency.

Each count is measured twice, in the order given and then reversed (1 2 2 1), on a server of
its own started for the turn: this machine's speed drifts over minutes, and the ratio of
counts measured around the same moment drifts less. A turn starts once every worker answers
(``cassieq_workers{state="answered"}`` on /metrics), so N workers are N from the first
request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from statistics import mean
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from cassieq.config import Settings
from cassieq.tools.bench.servers import Server, server_process
from cassieq.tools.bench.targets import HttpTarget, Target

Measure = Callable[[Target, int, float], Awaitable[dict[str, Any]]]
START_S = 120.0


async def run_workers(
    settings: Settings,
    keyspace: str,
    *,
    counts: list[int],
    clients: int,
    seconds: float,
    measure: Measure,
    say: Callable[[str], None],
) -> tuple[dict[str, Any], float]:
    """({count: {"e2e_per_s": mean over the turns, "turns": [each turn's phases]}}, the
    last count's e2e over the first's)."""
    turns: dict[int, list[dict[str, Any]]] = {n: [] for n in counts}
    for n in [*counts, *reversed(counts)]:
        say(f"HTTP API, cassieq serve --workers {n}, {clients} clients ...")
        async with server_process(settings, keyspace, env={"CASSIEQ_WORKERS": str(n)}) as server:
            await _all_answering(server, n)
            target = HttpTarget(server.url, server.account, server.key, server_pid=server.pid)
            try:
                turns[n].append(await measure(target, clients, seconds))
            finally:
                await target.close()
    out: dict[str, Any] = {
        str(n): {
            "e2e_per_s": round(mean(t["e2e_per_s"] for t in turns[n]), 1),
            "clients": clients,
            "turns": turns[n],
        }
        for n in counts
    }
    first, last = out[str(counts[0])]["e2e_per_s"], out[str(counts[-1])]["e2e_per_s"]
    return out, round(last / max(first, 0.001), 2)


async def _all_answering(server: Server, count: int) -> None:
    if count == 1:
        return  # one process, no supervisor: /health answering was enough
    deadline = time.monotonic() + START_S
    headers = {"Authorization": f"Bearer {server.token}"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as client:
        while time.monotonic() < deadline:
            text = (await client.get("/metrics")).text
            for family in text_string_to_metric_families(text):
                if family.name == "cassieq_workers":
                    answered = {s.labels["state"]: s.value for s in family.samples}["answered"]
                    if answered >= count:
                        return
            await asyncio.sleep(0.5)  # the workers still starting: polls, bounded above
    raise RuntimeError(f"the benchmark's server did not start {count} workers in {START_S} s")
