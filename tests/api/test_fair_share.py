"""The overload-aware fair share over HTTP (issue 40, finding 8): on a real socket of a server
configured as `cassieq serve` configures it (default budget, default settings), with the
saturation signal and the clock injected (saturation is made, not timed), on each store.

While the server is saturated and two accounts are active, the heavy one (a request of it
already in flight: a slow upload) gets 429 with Retry-After in each API's shape (v1, v2, SQS
ThrottlingException), counted in ``cassieq_requests_throttled_total``, and the light one keeps
being served; a lone account is never throttled, nor is a client asking one request at a
time (a long poll parked on an empty queue is not in flight); once the overload passes,
nothing is.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx
import pytest

from cassieq.api.app import create_app
from cassieq.api.overload import FairShare, InFlight
from cassieq.config import Settings
from cassieq.store.base import Store
from tests.api.live import served, tell_when_a_receive_waits
from tests.api.test_rate_limit import _sqs_query
from tests.sqs.live_sqs import new_account

TOKEN = "t" * 40
SAFETY_S = 30  # bounds a test that would hang; nothing waits for it to pass


@dataclass
class Server:
    port: int
    delay: list[float] = field(default_factory=lambda: [0.0])  # the saturation signal, s
    clock: list[float] = field(default_factory=lambda: [1000.0])
    fair: FairShare | None = None
    # Set when a long poll starts waiting (admitted, then parked).
    joined: threading.Event = field(default_factory=threading.Event)
    # Set whenever the fair share admits a request.
    admitted: threading.Event = field(default_factory=threading.Event)

    def tenant(self) -> tuple[str, str]:
        """A new account with a queue ``q`` (its create is one of its requests)."""
        name, keys = new_account(f"http://127.0.0.1:{self.port}", TOKEN)
        key = keys["primary"]
        assert self.put(name, key, path="/queues", json={"queueName": "q"}).status_code == 201
        return name, key

    def put(
        self, account: str, key: str, path: str = "/queues/q/messages", **kw: object
    ) -> httpx.Response:
        if "json" not in kw:
            kw["content"] = b"m"
        return httpx.post(
            f"http://127.0.0.1:{self.port}/api/v1/accounts/{account}{path}",
            headers={"Authorization": f"Key {key}"},
            timeout=10,
            **kw,  # type: ignore[arg-type]
        )

    def puts(self, account: str, key: str, n: int) -> list[int]:
        return [self.put(account, key).status_code for _ in range(n)]

    def slow_upload(self, account: str, key: str) -> tuple[socket.socket, bytes]:
        """A v1 put whose body is still on its way: admitted, and in flight until the rest
        (returned) is sent on the socket (returned)."""
        self.admitted.clear()
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=SAFETY_S)
        sock.sendall(
            f"POST /api/v1/accounts/{account}/queues/q/messages HTTP/1.1\r\n"
            f"Host: 127.0.0.1\r\nAuthorization: Key {key}\r\nContent-Type: text/plain\r\n"
            "Content-Length: 4\r\nConnection: close\r\n\r\nsl".encode()
        )
        assert self.admitted.wait(SAFETY_S), "the upload was never admitted"
        return sock, b"ow"

    def long_poll(self, account: str, key: str, pool: ThreadPoolExecutor) -> Future[httpx.Response]:
        """A v2 receive waiting on the account's queue ``w`` (made here) until a message
        is sent to ``w``: parked meanwhile."""
        made = self.put(account, key, path="/queues", json={"queueName": "w"})
        assert made.status_code == 201, made.text
        waiting = pool.submit(
            httpx.post,
            f"http://127.0.0.1:{self.port}/api/v2/accounts/{account}/queues/w/messages/receive",
            json={"waitSeconds": 20, "maxMessages": 1},
            headers={"Authorization": f"Key {key}"},
            timeout=SAFETY_S,
        )
        assert self.joined.wait(SAFETY_S), "the receive never started waiting"
        return waiting


class _TellingFairShare(FairShare):
    def __init__(self, told: threading.Event, *args: Callable[[], float] | float) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self._told = told

    def admitted(self, account: str) -> InFlight:
        flight = super().admitted(account)
        self._told.set()
        return flight


def _answer(sock: socket.socket) -> bytes:
    """What the server answered on ``sock`` (it closes the connection after it)."""
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    sock.close()
    return answer


@contextmanager
def server(store: Store, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    # Defaults but the hold (a 429 answered at once: the holding is the budget's, tested there).
    settings = Settings(admin_token=TOKEN, account_throttle_hold_seconds=0)
    app = create_app(settings, store, background=False)
    with served(app) as port:
        live = Server(port, joined=tell_when_a_receive_waits(monkeypatch))
        # The app's own fair share, with the signal and the clock in the test's hands.
        budgets = app.state.cassieq.budgets
        assert budgets.fair is not None  # on by default
        live.fair = budgets.fair = _TellingFairShare(
            live.admitted,
            budgets.fair.delay_threshold_s,
            lambda: live.delay[0],
            lambda: live.clock[0],
        )
        live.refused = budgets.refused  # type: ignore[attr-defined]
        yield live


def test_a_heavy_tenant_gets_429_while_a_light_one_is_served_when_saturated(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    with server(store, monkeypatch) as live, ThreadPoolExecutor(1) as pool:
        heavy, heavy_key = live.tenant()
        light, light_key = live.tenant()
        # Not saturated: two tenants, one of them heavy, and nothing is throttled.
        assert live.puts(heavy, heavy_key, 30) == [201] * 30
        assert live.puts(light, light_key, 2) == [201] * 2
        live.clock[0] += 0.2  # past the recount: both are active
        live.delay[0] = 1.0  # saturated: requests wait a second
        # One request at a time, the heavy tenant is still served: it holds no one up.
        assert live.puts(heavy, heavy_key, 3) == [201] * 3
        # A long poll of it parked on an empty queue is not in flight: still one at a time.
        waiting = live.long_poll(heavy, heavy_key, pool)
        assert live.puts(heavy, heavy_key, 3) == [201] * 3
        # With a request of it in flight (an upload on its way), it is over its share.
        upload, rest = live.slow_upload(heavy, heavy_key)
        over = live.put(heavy, heavy_key)
        assert over.status_code == 429, over.text
        assert over.headers["retry-after"] == "1"
        body = over.json()
        assert body["code"] == 429 and "over its fair share" in body["detail"], body
        v2 = httpx.get(
            f"http://127.0.0.1:{live.port}/api/v2/accounts/{heavy}/queues/q",
            headers={"Authorization": f"Key {heavy_key}"},
            timeout=10,
        )
        assert v2.status_code == 429 and "over its fair share" in v2.json()["message"], v2.text
        sqs = _sqs_query(live, heavy, heavy_key)  # type: ignore[arg-type]
        assert sqs.status_code == 429 and b"<Code>ThrottlingException</Code>" in sqs.content
        # The light tenant keeps being served, and the 429s are counted.
        assert live.puts(light, light_key, 5) == [201] * 5
        assert live.refused["v1"] == 1 and live.refused["v2"] == 1  # type: ignore[attr-defined]
        assert live.refused["sqs"] == 1  # type: ignore[attr-defined]
        # The overload passes: the heavy tenant climbs back (some now), and once the server
        # has kept up for ten seconds nothing is throttled.
        live.delay[0] = 0.0
        live.clock[0] += 1.0
        assert live.put(heavy, heavy_key).status_code == 201
        live.clock[0] += 10.0
        assert live.puts(heavy, heavy_key, 5) == [201] * 5
        upload.sendall(rest)
        assert _answer(upload).startswith(b"HTTP/1.1 201"), "the slow upload was not stored"
        woken = live.put(heavy, heavy_key, path="/queues/w/messages")
        assert woken.status_code == 201, woken.text
        answer = waiting.result(SAFETY_S)
        assert answer.status_code == 200 and len(answer.json()["messages"]) == 1, answer.text


def test_a_lone_tenant_is_never_throttled_when_saturated(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    with server(store, monkeypatch) as live:
        alone, key = live.tenant()
        live.delay[0] = 1.0
        assert live.puts(alone, key, 20) == [201] * 20
        live.clock[0] += 0.2
        assert live.puts(alone, key, 20) == [201] * 20
        assert live.fair is not None and live.fair.refused == 0
