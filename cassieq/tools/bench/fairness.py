"""`cassieq bench fairness`: one tenant floods puts, another's latency is measured (#40 finding 8).

One `cassieq serve` process on a keyspace of its own, two accounts. Tenant B runs a few
clients doing v1 puts at a steady rate (within its budget), alone for a turn and then
while tenant A floods: many
closed-loop clients doing v1 puts as fast as the server answers, ignoring Retry-After (a
hostile or broken client; a polite one backs off and costs less). Both speak HTTP/1.1 over
raw keep-alive sockets with fixed request bytes, so the load generator's own work per
request is small next to the server's (it shares the machine's cores with the server and
Cassandra). Figures: B's p50/p95 alone and under the flood, their ratio, A's answers by
status (its 429s the budget's or the fair share's work), and (``lone``) A's throughput
flooding alone, the lone tenant the fair share must not slow.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from cassieq.config import Settings
from cassieq.store.cassandra import apply_schema, connect, default_schema_dir, drop_keyspace
from cassieq.tools.bench.measure import percentiles
from cassieq.tools.bench.servers import server_process

Say = Callable[[str], None]

# The pause before A's turn alone: longer than the fair share's window (cassieq.api.overload).
LONE_AFTER_S = 2.0


@dataclass(frozen=True)
class FairnessSettings:
    seconds: float = 20.0  # per turn
    b_clients: int = 2
    b_rate: float = 50.0  # B's puts per second, over all its clients
    a_clients: int = 32
    # The server's per-account budget (CASSIEQ_ACCOUNT_REQUESTS_PER_SECOND / _BURST); None:
    # the settings' defaults.
    account_rate: float | None = None
    account_burst: int | None = None
    # Turns alone and under the flood, interleaved (alone, flood, alone, flood, ...), each
    # ``seconds``: on a machine others load too, a load that comes and goes falls on both
    # sides alike, where two long turns one after the other can each meet a different load.
    rounds: int = 1
    # Each round also has a turn of A flooding alone (after B's turns): a lone tenant's
    # throughput, which the overload-aware fair share must leave alone.
    lone: bool = True


class RawClient:
    """One keep-alive connection sending the same request again and again."""

    def __init__(self, port: int, request: bytes) -> None:
        self._port, self._request = port, request
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def send(self) -> int:
        """One request; its status (0: the connection failed, and is opened again)."""
        if self._streams is None:
            self._streams = await asyncio.open_connection("127.0.0.1", self._port)
        reader, writer = self._streams
        try:
            writer.write(self._request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length, close = 0, False
            for line in head.lower().split(b"\r\n"):
                if line.startswith(b"content-length:"):
                    length = int(line[15:])
                elif line == b"connection: close":
                    close = True
            await reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            await self.close()
            return 0
        if close:
            await self.close()
        return status

    async def close(self) -> None:
        if self._streams is not None:
            writer = self._streams[1]
            self._streams = None
            writer.close()


def put_request(port: int, account: str, key: str, body: bytes = b"fairness") -> bytes:
    return (
        f"POST /api/v1/accounts/{account}/queues/q/messages HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\nAuthorization: Key {key}\r\n"
        f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


async def _loop(
    clients: list[RawClient],
    until: float,
    statuses: Counter[int],
    latencies: list[float],
    per_s: float | None = None,
) -> None:
    """Each client sends, then again at once (``per_s`` None: a closed loop), or at its
    share of ``per_s`` (a late request goes at once: the pace is not made up for)."""
    interval = None if per_s is None else len(clients) / per_s

    async def one(client: RawClient) -> None:
        due = time.monotonic()
        while (now := time.monotonic()) < until:
            if interval is not None:
                if due > now:
                    await asyncio.sleep(due - now)  # the client's pace
                due = max(due, now) + interval
            started = time.perf_counter()
            status = await client.send()
            latencies.append((time.perf_counter() - started) * 1000)
            statuses[status] += 1

    await asyncio.gather(*(one(c) for c in clients))
    for c in clients:
        await c.close()


def _summary(latencies: list[float], statuses: Counter[int], seconds: float) -> dict[str, Any]:
    figures = percentiles(latencies, p50=0.50, p95=0.95, p99=0.99)
    return {
        **figures,
        "requests": len(latencies),
        "per_s": round(len(latencies) / seconds, 1),
        "statuses": {str(s): n for s, n in sorted(statuses.items())},
    }


async def _tenant(url: str, token: str) -> tuple[str, str]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        name = f"fair-{secrets.token_hex(4)}"
        created = await http.post(
            "/api/v1/accounts", json=name, headers={"Authorization": f"Bearer {token}"}
        )
        created.raise_for_status()
        key = str(created.json()["keys"]["primary"])
        queue = await http.post(
            f"/api/v1/accounts/{name}/queues",
            json={"queueName": "q"},
            headers={"Authorization": f"Key {key}"},
        )
        queue.raise_for_status()
        return name, key


async def run_fairness(
    settings: Settings, *, keyspace: str, fair: FairnessSettings, say: Say
) -> dict[str, Any]:
    cluster, session = connect(settings.cassandra_hosts, settings.cassandra_port)
    try:
        drop_keyspace(session, keyspace)  # a keyspace of its own, emptied first
        apply_schema(session, keyspace, settings.replication, default_schema_dir())
    finally:
        cluster.shutdown()
    env: dict[str, str] = {}
    if fair.account_rate is not None:
        env["CASSIEQ_ACCOUNT_REQUESTS_PER_SECOND"] = str(fair.account_rate)
    if fair.account_burst is not None:
        env["CASSIEQ_ACCOUNT_REQUEST_BURST"] = str(fair.account_burst)
    async with server_process(settings, keyspace, env=env) as server:
        port = int(server.url.rsplit(":", 1)[1])
        a, a_key = await _tenant(server.url, server.token)
        b, b_key = await _tenant(server.url, server.token)
        b_request, a_request = put_request(port, b, b_key), put_request(port, a, a_key)

        b_clients = [RawClient(port, b_request) for _ in range(fair.b_clients)]
        alone_statuses, b_statuses, a_statuses = Counter[int](), Counter[int](), Counter[int]()
        b_alone: list[float] = []
        b_flood: list[float] = []
        a_latencies: list[float] = []
        lone_statuses, lone_latencies = Counter[int](), list[float]()
        for turn in range(1, fair.rounds + 1):
            say(
                f"round {turn}/{fair.rounds}: tenant B alone: {fair.b_clients} clients, "
                f"{fair.b_rate:g}/s, {fair.seconds:g} s"
            )
            until = time.monotonic() + fair.seconds
            await _loop(b_clients, until, alone_statuses, b_alone, fair.b_rate)
            say(f"round {turn}/{fair.rounds}: B while A floods puts: {fair.a_clients} clients")
            until = time.monotonic() + fair.seconds
            await asyncio.gather(
                _loop(b_clients, until, b_statuses, b_flood, fair.b_rate),
                _loop(
                    [RawClient(port, a_request) for _ in range(fair.a_clients)],
                    until,
                    a_statuses,
                    a_latencies,
                ),
            )
            if fair.lone:
                # B's last requests leave it active for the fair share's window (a second):
                # A is alone once that has passed.
                await asyncio.sleep(LONE_AFTER_S)
                say(f"round {turn}/{fair.rounds}: A floods alone: {fair.a_clients} clients")
                until = time.monotonic() + fair.seconds
                a_alone = [RawClient(port, a_request) for _ in range(fair.a_clients)]
                await _loop(a_alone, until, lone_statuses, lone_latencies)
        total_s = fair.seconds * fair.rounds
        alone = _summary(b_alone, alone_statuses, total_s)
        flooded = _summary(b_flood, b_statuses, total_s)
        flood = _summary(a_latencies, a_statuses, total_s)
        lone = _summary(lone_latencies, lone_statuses, total_s) if fair.lone else None
    ratio = round(flooded["p95"] / alone["p95"], 2) if alone["p95"] else None
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "seconds_per_turn": fair.seconds,
        "rounds": fair.rounds,
        "account_rate": fair.account_rate or settings.account_requests_per_second,
        "account_burst": fair.account_burst or settings.account_request_burst,
        # Fair admission's places (0: off), as the server read them from the environment.
        "fair_admission_slots": settings.http_fair_admission_slots,
        # The overload-aware fair share (cassieq.api.overload) and its delay threshold.
        "fair_share": settings.account_fair_share,
        "fair_share_delay_ms": settings.account_fair_share_delay_ms,
        "b_clients": fair.b_clients,
        "b_rate": fair.b_rate,
        "a_clients": fair.a_clients,
        "b_alone": alone,
        "b_under_flood": flooded,
        "a_flood": flood,
        "a_alone": lone,
        "a_throttled": a_statuses.get(429, 0),
        "b_p95_ratio": ratio,
        "within_2x": ratio is not None and ratio <= 2.0,
    }


def fairness_table(result: dict[str, Any]) -> str:
    alone, flooded, flood = result["b_alone"], result["b_under_flood"], result["a_flood"]
    rows = [
        f"fairness ({result['date']}, {result['cores']} cores, load {result['load_average']}, "
        f"budget {result['account_rate']:g}/s burst {result['account_burst']}, "
        f"fair admission {result.get('fair_admission_slots', 'n/a')} places, "
        f"fair share {_fair_share(result)})",
        f"{'':24}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'req/s':>10}  statuses",
    ]
    turns = [
        (f"B alone ({result['b_rate']:g}/s)", alone),
        ("B under A's flood", flooded),
        (f"A flooding ({result['a_clients']})", flood),
    ]
    if result.get("a_alone"):
        turns.append((f"A alone ({result['a_clients']})", result["a_alone"]))
    for label, f in turns:
        rows.append(
            f"{label:24}{f['p50']:>10}{f['p95']:>10}{f['p99']:>10}{f['per_s']:>10}  {f['statuses']}"
        )
    verdict = "within 2x" if result["within_2x"] else "NOT within 2x"
    rows.append(
        f"B p95 under flood / alone: {result['b_p95_ratio']} ({verdict}); "
        f"A's 429s: {result['a_throttled']}"
    )
    return "\n".join(rows)


def _fair_share(result: dict[str, Any]) -> str:
    if "fair_share" not in result:
        return "n/a"
    return f"delay {result['fair_share_delay_ms']:g} ms" if result["fair_share"] else "off"
