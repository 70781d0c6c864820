"""`cassieq chaos --batch`: the client's v2 batch calls write the ledger entry by entry, and
the workload's batch ack retries only what may not have applied, as v1's ack does.

A stand-in server (aiohttp.web) answers the v2 message routes as scripted: no Cassandra,
no cassieq server; what is checked is what the client and the ledger make of the answers.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from cassieq.tools.chaos.client import ChaosClient
from cassieq.tools.chaos.ledger import ACKED, Ledger, Put, judge
from cassieq.tools.chaos.options import ChaosOptions
from cassieq.tools.chaos.workload import Workload

MESSAGES = "/api/v2/accounts/acc/queues/q/messages"
LEASE = 30


class Stand:
    """The scripted server: what each receipt's ack answers, per attempt."""

    def __init__(self) -> None:
        self.sent: list[list[str]] = []
        self.v1_sent: list[str] = []  # v1 puts (chaos --mixed)
        self.to_deliver: list[dict[str, Any]] = []
        self.ack_script: dict[str, list[str | int]] = {}  # receipt -> outcomes in turn
        self.ack_requests: list[list[str]] = []
        self.hang_acks = False
        self.ack_came = asyncio.Event()
        self.release = asyncio.Event()  # ends a hung ack (after the client gave up on it)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post(MESSAGES, self.send)
        app.router.add_post("/api/v1/accounts/acc/queues/q/messages", self.v1_put)
        app.router.add_post(f"{MESSAGES}/receive", self.receive)
        app.router.add_post(f"{MESSAGES}/ack", self.ack)
        return app

    async def send(self, request: web.Request) -> web.Response:
        bodies = [m["body"] for m in (await request.json())["messages"]]
        self.sent.append(bodies)
        entries = [{"id": str(i), "messageTag": f"t{i}"} for i in range(len(bodies))]
        return web.json_response({"messages": entries}, status=201)

    async def v1_put(self, request: web.Request) -> web.Response:
        self.v1_sent.append(await request.text())
        return web.json_response({}, status=201)

    async def receive(self, request: web.Request) -> web.Response:
        wanted = (await request.json())["maxMessages"]
        out, self.to_deliver = self.to_deliver[:wanted], self.to_deliver[wanted:]
        return web.json_response({"messages": out})

    async def ack(self, request: web.Request) -> web.Response:
        receipts = (await request.json())["popReceipts"]
        self.ack_requests.append(receipts)
        self.ack_came.set()
        if self.hang_acks:
            await self.release.wait()  # no answer until the client has timed out
        acked, failed = [], []
        for r in receipts:
            outcome = self.ack_script[r].pop(0)
            if outcome == "acked":
                acked.append(r)
            else:
                failed.append({"popReceipt": r, "code": outcome, "message": "scripted"})
        return web.json_response({"acked": acked, "failed": failed})


def _notes() -> list[str]:
    """Where a workload writes its notes (these tests read none)."""
    return []


def message(body: str, receipt: str, count: int = 1) -> dict[str, Any]:
    return {
        "id": "1",
        "body": body,
        "attributes": {},
        "popReceipt": receipt,
        "deliveryCount": count,
        "messageTag": "t",
        "firstDeliveredAt": "2026-11-22T21:45:54.123Z",
        "sentAt": "2026-11-22T21:45:54.000Z",
    }


@pytest.fixture
async def stand() -> AsyncIterator[tuple[Stand, ChaosClient, Ledger]]:
    s = Stand()
    runner = web.AppRunner(s.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    url = f"http://127.0.0.1:{port}"
    ledger = Ledger()
    client = ChaosClient(
        {"A": url, "B": url},
        account="acc",
        key="k" * 32,
        queue="q",
        admin_token="t",
        receipt_secret="s" * 32,
        ledger=ledger,
        timeout=0.5,
    )
    try:
        yield s, client, ledger
    finally:
        s.release.set()
        await client.close()
        await runner.cleanup()


async def test_a_batch_send_is_one_put_per_body_with_the_request_outcome(
    stand: tuple[Stand, ChaosClient, Ledger],
) -> None:
    s, client, ledger = stand
    puts = await client.send("A", ["x:0:0", "x:1:0", "x:2:0"])
    assert s.sent == [["x:0:0", "x:1:0", "x:2:0"]]
    assert [(p.body, p.status, p.server) for p in puts] == [
        ("x:0:0", 201, "A"),
        ("x:1:0", 201, "A"),
        ("x:2:0", 201, "A"),
    ]
    assert ledger.puts == puts
    assert len({(p.send, p.recv) for p in puts}) == 1  # one request


async def test_each_message_of_a_batch_is_a_delivery_with_its_own_receipt(
    stand: tuple[Stand, ChaosClient, Ledger],
) -> None:
    s, client, ledger = stand
    s.to_deliver = [message("m0", "r0"), message("m1", "r1", count=3)]
    call, got = await client.receive("A", LEASE, 10, 0)
    assert call.status == 200 and ledger.calls == [call]
    assert [(d.id, d.body, d.server) for d in got] == [(0, "m0", "A"), (1, "m1", "A")]
    # v2's deliveryCount already counts this delivery: taken as it is, not plus one.
    assert [d.delivery_count for d in got] == [1, 3]
    assert all((d.send, d.recv) == (call.send, call.recv) for d in got)
    assert ledger.deliveries == got
    # A receipt the chaos secret cannot decode leaves the row position unknown.
    assert got[0].monoton == -1
    s.ack_script = {"r0": ["acked"], "r1": [409]}
    acks = await client.ack_batch("B", got)
    assert s.ack_requests == [["r0", "r1"]]
    assert [(a.delivery_id, a.status, a.server) for a in acks] == [(0, ACKED, "B"), (1, 409, "B")]
    assert ledger.acks == acks


async def test_an_undecided_entry_is_a_5xx_and_an_unanswered_batch_may_have_applied(
    stand: tuple[Stand, ChaosClient, Ledger],
) -> None:
    s, client, ledger = stand
    s.to_deliver = [message("m0", "r0"), message("m1", "r1")]
    _, got = await client.receive("A", LEASE, 10, 0)
    s.ack_script = {"r0": [503], "r1": ["acked"]}
    first = await client.ack_batch("A", got)
    assert [a.status for a in first] == [503, ACKED]
    assert first[0].may_have_applied and not first[1].may_have_applied
    assert [(c.route, c.status) for c in ledger.calls if c.route == "ack entry"] == [
        ("ack entry", 503)
    ]
    s.hang_acks = True
    second = await client.ack_batch("A", got[:1])
    assert [(a.status, a.error) for a in second] == [(None, "TimeoutError")]
    assert second[0].may_have_applied
    v = judge(ledger, LEASE)
    assert v.http_5xx == 1 and v.http_5xx_by_route == {"ack entry": 1}


async def test_the_batch_ack_retries_only_entries_that_may_not_have_applied(
    stand: tuple[Stand, ChaosClient, Ledger],
) -> None:
    s, client, ledger = stand
    for i in range(3):
        ledger.puts.append(Put(f"m{i}", "A", 0.0, 0.01, 201))
    s.to_deliver = [message(f"m{i}", f"r{i}") for i in range(3)]
    _, got = await client.receive("A", LEASE, 10, 0)
    # r0 acked at once; r1 refused as stale (done: its row is read); r2 undecided, then acked.
    s.ack_script = {"r0": ["acked"], "r1": [409], "r2": [503, "acked"]}
    workload = Workload(client, ChaosOptions(batch=10), "x", time.monotonic() + 30, _notes().append)
    await workload._ack_batch(got, "A")
    assert s.ack_requests == [["r0", "r1", "r2"], ["r2"]]
    by_delivery = [
        [(a.server, a.status) for a in ledger.acks if a.delivery_id == d.id] for d in got
    ]
    assert by_delivery == [[("A", ACKED)], [("A", 409)], [("A", 503), ("B", ACKED)]]
    stale = next(a for a in ledger.acks if a.status == 409)
    assert stale.row == "receipt not decoded"  # the row was looked at
    v = judge(ledger, LEASE)
    assert (v.lost, v.double_within_lease, v.acks_204) == (1, 0, 2)  # m1 was never acked


async def test_a_batch_consumer_leaves_a_delivery_unacked_like_v1(
    stand: tuple[Stand, ChaosClient, Ledger],
) -> None:
    s, client, ledger = stand
    s.to_deliver = [message(f"m{i}", f"r{i}") for i in range(4)]
    s.ack_script = {f"r{i}": ["acked"] for i in range(4)}
    opts = ChaosOptions(batch=10, unacked_every=2, other_server_acks=0.0)
    workload = Workload(client, opts, "x", time.monotonic() + 30, _notes().append)
    consumer = asyncio.create_task(workload._batch_consumer(0, "A"))
    try:
        await asyncio.wait_for(s.ack_came.wait(), 10)
    finally:
        consumer.cancel()
        await asyncio.gather(consumer, return_exceptions=True)
    # Every second delivery (a first delivery) is left unacked on purpose; the rest go in
    # one request.
    assert [d.left_unacked for d in ledger.deliveries] == [False, True, False, True]
    assert s.ack_requests[0] == ["r0", "r2"]
    assert workload.progress.deliveries == 4


async def test_mixed_puts_half_through_v1_and_counts_each_api(
    stand: tuple[Stand, ChaosClient, Ledger],
) -> None:
    """`--mixed`: the odd producers put one message per v1 request, the even ones send
    batches; each message is put once, and the result counts what each API carried."""
    s, client, ledger = stand
    opts = ChaosOptions(batch=10, mixed=True, messages=25, rate=1000.0)
    workload = Workload(client, opts, "x", time.monotonic() + 30, _notes().append)
    assert [workload._v1_among_batches(i) for i in range(4)] == [False, True, False, True]
    await asyncio.gather(workload._producer("A", False), workload._producer("B", True))
    v1_bodies = s.v1_sent
    batched = [b for batch in s.sent for b in batch]
    assert v1_bodies and s.sent and all(len(batch) <= 10 for batch in s.sent)
    put = sorted(int(b.split(":")[1]) for b in batched + v1_bodies)
    assert put == list(range(25))  # every message once, by one API or the other
    assert workload.progress.puts_by_api == {"v2": len(batched), "v1": len(v1_bodies)}
    assert len(ledger.puts) == 25
    # Without --batch, --mixed changes nothing: everyone is on v1.
    plain = Workload(client, ChaosOptions(mixed=True), "x", time.monotonic() + 30, _notes().append)
    assert not any(plain._v1_among_batches(i) for i in range(4))
