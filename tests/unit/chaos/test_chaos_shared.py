"""`cassieq chaos --shared-subscriptions` (issue 36): the queue's consumers and ledger, pointed
at a shared subscription's routes, one ledger per subscription.

A stand-in server (aiohttp.web) answers the queue's v1 routes and a shared subscription's
v2 receive and ack as scripted: no Cassandra, no cassieq server. What is checked is where
the client sends each request, which ledger it writes, and what the verdicts make of it.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from cassieq.api.v2.entries import subscription_binding
from cassieq.auth.receipts import ReceiptCodec
from cassieq.model import PopReceipt
from cassieq.tools.chaos import workload as workload_module
from cassieq.tools.chaos.client import ChaosClient
from cassieq.tools.chaos.ledger import ACKED, Ack, Delivery, Ledger, Put, judge
from cassieq.tools.chaos.options import ChaosOptions
from cassieq.tools.chaos.scenario import _judge_shared
from cassieq.tools.chaos.workload import Workload

SECRET = "s" * 32
V1 = "/api/v1/accounts/acc/queues/q/messages"
V2 = "/api/v2/accounts/acc/queues/q/messages"
SUBS = "/api/v2/accounts/acc/queues/q/subscriptions"
LEASE = 30


class Stand:
    """The queue (v1 put, get, ack; v2 send, receive, ack) and its shared subscriptions
    (v2 receive, ack). A put
    lands in the queue and in every subscription, except a body listed in ``drop`` (a
    subscription that loses it). Receipts are signed as the server signs them: the queue's
    for the queue, a subscription's for ``subscription_binding``; an ack of a receipt of
    another binding is refused (400), per entry in v2, as the server refuses it."""

    def __init__(self, shared: list[str], drop: dict[str, set[str]] | None = None) -> None:
        self.codec = ReceiptCodec(SECRET)
        self.queue: deque[str] = deque()
        self.subs: dict[str, deque[str]] = {name: deque() for name in shared}
        self.drop = drop or {}
        self.receipts: dict[str, tuple[str, str]] = {}  # receipt -> (binding, body)
        self.acked: dict[str, list[str]] = {"q": [], **{name: [] for name in shared}}
        self.requests: list[tuple[str, str, Any]] = []  # (method, path, JSON body or None)
        self.monoton = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post(V1, self.put)
        app.router.add_get(f"{V1}/next", self.get)
        app.router.add_delete(V1, self.ack)
        app.router.add_post(V2, self.send)
        app.router.add_post(f"{V2}/receive", self.receive)
        app.router.add_post(f"{V2}/ack", self.v2_ack)
        app.router.add_post(SUBS + "/{name}/receive", self.receive)
        app.router.add_post(SUBS + "/{name}/ack", self.v2_ack)
        return app

    def _stored(self, body: str) -> None:
        self.queue.append(body)
        for name, pending in self.subs.items():
            if body not in self.drop.get(name, set()):
                pending.append(body)

    def _receipt(self, binding: str, body: str) -> str:
        self.monoton += 1
        token = self.codec.encode("acc", binding, PopReceipt(1, self.monoton, 1, "t"))
        self.receipts[token] = (binding, body)
        return token

    async def put(self, request: web.Request) -> web.Response:
        body = (await request.read()).decode()
        self.requests.append(("POST", request.path, None))
        self._stored(body)
        return web.json_response({}, status=201)

    async def send(self, request: web.Request) -> web.Response:
        got = await request.json()
        self.requests.append(("POST", request.path, got))
        for m in got["messages"]:
            self._stored(m["body"])
        return web.json_response({"messages": []}, status=201)

    async def get(self, request: web.Request) -> web.Response:
        self.requests.append(("GET", request.path, None))
        if not self.queue:
            return web.Response(status=204)
        body = self.queue.popleft()
        token = self._receipt("q", body)
        return web.json_response({"popReceipt": token, "message": body, "deliveryCount": 0})

    async def ack(self, request: web.Request) -> web.Response:
        self.requests.append(("DELETE", request.path, None))
        binding, body = self.receipts[request.query["popReceipt"]]
        if binding != "q":
            return web.json_response({"errors": ["of another queue"]}, status=400)
        self.acked["q"].append(body)
        return web.Response(status=204)

    @staticmethod
    def _target(request: web.Request) -> tuple[str, str]:
        """(name in ``acked``, receipt binding): the queue's, or a subscription's."""
        name = request.match_info.get("name")
        return ("q", "q") if name is None else (name, subscription_binding("q", name))

    async def receive(self, request: web.Request) -> web.Response:
        (name, binding), got = self._target(request), await request.json()
        self.requests.append(("POST", request.path, got))
        pending = self.queue if name == "q" else self.subs[name]
        out: list[dict[str, Any]] = []
        while pending and len(out) < got["maxMessages"]:
            body = pending.popleft()
            token = self._receipt(binding, body)
            out.append({"popReceipt": token, "body": body, "deliveryCount": 1})
        return web.json_response({"messages": out})

    async def v2_ack(self, request: web.Request) -> web.Response:
        (name, binding), got = self._target(request), await request.json()
        self.requests.append(("POST", request.path, got))
        acked, failed = [], []
        for token in got["popReceipts"]:
            bound, body = self.receipts[token]
            if bound != binding:
                failed.append({"popReceipt": token, "code": 400, "message": "another queue"})
                continue
            self.acked[name].append(body)
            acked.append(token)
        return web.json_response({"acked": acked, "failed": failed})


async def serve(stand: Stand) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(stand.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


def new_client(url: str, ledger: Ledger) -> ChaosClient:
    return ChaosClient(
        {"A": url, "B": url},
        account="acc",
        key="k" * 32,
        queue="q",
        admin_token="t",
        receipt_secret=SECRET,
        ledger=ledger,
        timeout=2.0,
    )


@pytest.fixture
async def one_shared() -> AsyncIterator[tuple[Stand, ChaosClient, Ledger]]:
    stand = Stand(["shared-0"])
    runner, url = await serve(stand)
    ledger = Ledger()
    client = new_client(url, ledger)
    try:
        yield stand, client, ledger
    finally:
        await client.close()
        await runner.cleanup()


def _notes() -> list[str]:
    """Where a workload writes its notes (these tests read none)."""
    return []


# ---------------------------------------------------------------------- the client's target


async def test_a_subscription_view_receives_and_acks_through_its_routes_into_its_ledger(
    one_shared: tuple[Stand, ChaosClient, Ledger],
) -> None:
    stand, client, ledger = one_shared
    book = ledger.add_shared("shared-0")
    view = client.shared_subscription("shared-0", book)
    await client.put("A", "x:0:0")
    call, got = await view.receive("A", LEASE, 10, 0)
    assert call.status == 200 and [d.body for d in got] == ["x:0:0"]
    # Its receipt decoded for the subscription's binding: the row position is known.
    assert got[0].monoton == stand.monoton
    acks = await view.ack_batch("B", got)
    assert [a.status for a in acks] == [ACKED]
    assert stand.acked == {"q": [], "shared-0": ["x:0:0"]}
    assert [(m, p) for m, p, _ in stand.requests[1:]] == [
        ("POST", f"{SUBS}/shared-0/receive"),
        ("POST", f"{SUBS}/shared-0/ack"),
    ]
    # The subscription's calls, delivery and ack are in its ledger; the queue's has the put.
    assert [c.route for c in book.calls] == ["receive", "ack"]
    assert (book.deliveries, book.acks) == (got, acks)
    assert [c.route for c in ledger.calls] == ["put"]
    assert (ledger.deliveries, ledger.acks) == ([], [])
    # The puts are the queue's, in both ledgers.
    assert book.puts is ledger.puts and [p.body for p in book.puts] == ["x:0:0"]


async def test_the_queue_and_a_subscription_keep_their_receipts_apart(
    one_shared: tuple[Stand, ChaosClient, Ledger],
) -> None:
    """Delivery ids start at 0 in each ledger: each view acks with its own receipt."""
    stand, client, ledger = one_shared
    view = client.shared_subscription("shared-0", ledger.add_shared("shared-0"))
    await client.put("A", "x:0:0")
    _, queue_got = await client.get("A", LEASE)
    _, sub_got = await view.receive("A", LEASE, 1, 0)
    assert queue_got is not None and (queue_got.id, sub_got[0].id) == (0, 0)
    # The queue's receipt does not decode for the subscription's binding, and back.
    assert queue_got.monoton > 0 and sub_got[0].monoton > 0
    assert (await view.ack_batch("A", sub_got))[0].status == ACKED
    assert (await client.ack("A", queue_got)).status == ACKED
    assert stand.acked == {"q": ["x:0:0"], "shared-0": ["x:0:0"]}


async def test_a_subscription_view_refuses_v1_and_reads_no_message_row(
    one_shared: tuple[Stand, ChaosClient, Ledger],
) -> None:
    stand, client, ledger = one_shared
    view = client.shared_subscription("shared-0", ledger.add_shared("shared-0"))
    with pytest.raises(RuntimeError, match="v1 get on subscription 'shared-0'"):
        await view.get("A", LEASE)
    d = Delivery(0, "x", "A", 0.0, 0.01, 1, monoton=3, version=1)
    with pytest.raises(RuntimeError, match="v1 ack"):
        await view.ack("A", d)
    a = Ack(0, "A", 0.0, 0.01, None, error="TimeoutError")
    await view.read_row(d, a)
    # The queue's message row says nothing of the subscription's ack: not read at all.
    assert (a.row_acked, a.row) == (None, "a subscription's delivery row: not readable")
    assert not any(path.startswith("/api/v1/debug") for _, path, _ in stand.requests)


# ---------------------------------------------------------------------- the workload's lanes


async def test_one_lane_per_shared_subscription_with_v2_when_the_queue_uses_v1() -> None:
    ledger = Ledger()
    client = new_client("http://127.0.0.1:9", ledger)
    await client.close()  # no request is made
    views = {n: client.shared_subscription(n, ledger.add_shared(n)) for n in ("s0", "s1")}
    w = Workload(client, ChaosOptions(batch=0), "x", time.monotonic() + 30, _notes().append,
                 shared=views)  # fmt: skip
    assert [(lane.name, lane.batch, lane.number) for lane in w.lanes] == [
        ("queue", 0, 0),
        ("s0", 1, 1),
        ("s1", 1, 2),
    ]
    assert w.lanes[1].client is views["s0"]
    w10 = Workload(client, ChaosOptions(batch=10), "x", time.monotonic() + 30, _notes().append,
                   shared=views)  # fmt: skip
    assert [lane.batch for lane in w10.lanes] == [10, 10, 10]


async def test_the_drain_waits_for_every_lane_to_answer_empty_on_each_server() -> None:
    ledger = Ledger()
    client = new_client("http://127.0.0.1:9", ledger)
    await client.close()  # no request is made
    view = client.shared_subscription("s0", ledger.add_shared("s0"))
    w = Workload(client, ChaosOptions(), "x", time.monotonic() + 30, _notes().append,
                 shared={"s0": view})  # fmt: skip
    queue, sub = w.lanes
    queue.last_empty.update(A=10.0, B=10.5)
    sub.last_empty.update(A=10.2)
    assert not w._all_empty_since(9.0, 11.0)  # s0 never answered empty on B
    sub.last_empty["B"] = 8.0
    assert not w._all_empty_since(9.0, 11.0)  # ... nor since the last delivery
    sub.last_empty["B"] = 9.5
    assert w._all_empty_since(9.0, 11.0)
    assert w.progress.last_empty is queue.last_empty  # the queue's, as before


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    # Pacing between requests; the stand answers at once.
    monkeypatch.setattr(workload_module, "IDLE_S", 0.01)
    monkeypatch.setattr(workload_module, "RETRY_S", 0.01)
    monkeypatch.setattr(workload_module, "WAIT_S", 0)


@dataclasses.dataclass(frozen=True, kw_only=True)
class QuickOptions(ChaosOptions):
    """The drain's quiet window shortened: the stand has no leases to wait for."""

    @property
    def quiet_window(self) -> float:
        return 0.3


async def run_workload(
    stand: Stand, names: list[str], **options: Any
) -> tuple[Ledger, dict[str, dict[str, Any]]]:
    runner, url = await serve(stand)
    ledger = Ledger()
    client = new_client(url, ledger)
    views = {n: client.shared_subscription(n, ledger.add_shared(n)) for n in names}
    opts = QuickOptions(
        messages=12, rate=1000.0, producers=2, consumers=2, lease=LEASE,
        unacked_every=0, **options,
    )  # fmt: skip
    try:
        w = Workload(client, opts, "x", time.monotonic() + 20, _notes().append, shared=views)
        progress = await w.run()
    finally:
        await client.close()
        await runner.cleanup()
    assert not progress.timed_out and progress.task_errors == []
    return ledger, _judge_shared(ledger, LEASE, progress.puts_started, {n: 0 for n in names})


@pytest.mark.usefixtures("quick")
@pytest.mark.parametrize("batch", [0, 5])
async def test_each_subscription_gets_every_message_through_its_own_consumers(
    batch: int,
) -> None:
    stand = Stand(["shared-0", "shared-1"])
    ledger, figures = await run_workload(stand, ["shared-0", "shared-1"], batch=batch)
    bodies = sorted(p.body for p in ledger.puts)
    assert len(bodies) == 12
    for name in ("shared-0", "shared-1", "q"):
        assert sorted(stand.acked[name]) == bodies
    for name in ("shared-0", "shared-1"):
        f = figures[name]
        assert (f["lost"], f["double_within_lease"], f["acks_204"]) == (0, 0, 12)
        assert f["violations"] == [] and f["final_lag"] == 0
        assert sorted(d.body for d in ledger.shared[name].deliveries) == bodies
    receives = [
        got for _, path, got in stand.requests if path.endswith("/receive") and "/subscr" in path
    ]
    # Without --batch the subscriptions' consumers receive one at a time (v2: no v1 route).
    assert {got["maxMessages"] for got in receives} == {max(1, batch)}
    # As many consumers per subscription as the queue has: consumer 0's home is A, 1's B.
    for name in ("shared-0", "shared-1"):
        homes = {c.server for c in ledger.shared[name].calls if c.route == "receive"}
        assert homes == {"A", "B"}


@pytest.mark.usefixtures("quick")
async def test_a_message_a_subscription_never_delivers_fails_that_subscription() -> None:
    stand = Stand(["shared-0", "shared-1"], drop={"shared-1": {"x:3:0"}})
    ledger, figures = await run_workload(stand, ["shared-0", "shared-1"])
    assert figures["shared-0"]["violations"] == []
    assert figures["shared-1"]["lost"] == 1
    assert figures["shared-1"]["lost_never_delivered"] == 1
    assert figures["shared-1"]["violations"] == ["shared-1 LOST 1"]
    assert figures["shared-1"]["samples"]["lost"] == [{"body": "x:3:0", "why": "never delivered"}]
    # The queue's own consumers got it: the queue's verdicts are not the subscription's.
    assert judge(ledger, LEASE).violations() == []


# ---------------------------------------------------------------------- verdicts


def test_a_double_within_a_lease_in_a_subscription_is_its_violation() -> None:
    ledger = Ledger()
    ledger.puts.append(Put("m", "A", 0.0, 0.01, 201))
    book = ledger.add_shared("shared-0")
    book.deliveries += [Delivery(0, "m", "A", 1.0, 1.01, 1), Delivery(1, "m", "B", 2.0, 2.01, 2)]
    book.acks.append(Ack(1, "B", 2.1, 2.11, ACKED))
    figures = _judge_shared(ledger, LEASE, 0.0, {"shared-0": None})
    f = figures["shared-0"]
    assert (f["double_within_lease"], f["lost"], f["final_lag"]) == (1, 0, None)
    assert f["violations"] == ["shared-0 DOUBLE WITHIN LEASE 1"]
    # The queue's own ledger is untouched by it.
    assert ledger.deliveries == [] and ledger.acks == []


# ---------------------------------------------------------------------- the report


def table_text(results: dict[str, dict[str, object]]) -> str:
    from rich.console import Console

    from cassieq.tools.chaos.report import print_table

    console = Console(width=260, record=True)
    print_table(results, console)
    return console.export_text()


def test_report_shows_each_shared_subscription_before_the_verdict() -> None:
    ledger = Ledger()
    ledger.puts += [Put("m0", "A", 0.0, 0.01, 201), Put("m1", "A", 0.0, 0.01, 201)]
    book = ledger.add_shared("shared-0")
    book.deliveries.append(Delivery(0, "m0", "A", 1.0, 1.01, 1))
    figures = _judge_shared(ledger, LEASE, 0.0, {"shared-0": 2})
    violations = figures["shared-0"].pop("violations")
    text = table_text({"baseline": {"passed": False, "violations": violations,
                                    "shared_subscriptions": figures}})  # fmt: skip
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if "shared-0: LOST / DOUBLE WITHIN" in line)
    assert "2 / 0 / 0" in lines[first]  # m0 never acked, m1 never delivered
    deliveries = next(line for line in lines if "shared-0 deliveries / redeliveries" in line)
    assert "1 / 0 (0) / 0" in deliveries
    lag = next(line for line in lines if "shared-0 409s valid / 5xx" in line)
    assert "0 / 0 / 0 / 2" in lag
    verdict = next(i for i, line in enumerate(lines) if "verdict" in line)
    assert first < verdict and "FAIL: shared-0 LOST 2" in lines[verdict]


def test_report_without_shared_subscriptions_has_no_rows_for_them() -> None:
    assert "shared-" not in table_text({"baseline": {"passed": True, "violations": []}})


def test_the_fifo_workload_refuses_shared_subscriptions() -> None:
    from click.testing import CliRunner

    from cassieq.tools.chaos.command import chaos

    result = CliRunner().invoke(chaos, ["--fifo", "--shared-subscriptions", "1", "--single-node"])
    assert result.exit_code == 2
    assert "--shared-subscriptions is for the queue's workload, not --fifo" in result.output
