"""Long polling over HTTP, on each store, served by uvicorn as `cassieq serve` serves it: a
receive with waitSeconds is answered by a send from another client, and shutdown answers
a waiting receive [] at once (not at its deadline, nor cut off)."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from cassieq.api.app import create_app
from cassieq.api.http.server import ReleasingServer, listening_socket, uvicorn_config
from cassieq.config import Settings
from cassieq.store.base import Store
from tests.api.live import tell_when_a_receive_waits

TOKEN = "long-polling-operator-token"
SAFETY_S = 30  # bounds a test that would hang; nothing waits for it to pass


@dataclass
class Live:
    base: str
    key: str
    server: ReleasingServer
    joined: threading.Event  # set when a receive starts waiting

    def post(self, suffix: str, body: Any, timeout: float = SAFETY_S) -> httpx.Response:
        return httpx.post(
            f"{self.base}/messages{suffix}",
            json=body,
            headers={"Authorization": f"Key {self.key}"},
            timeout=timeout,
        )


@pytest.fixture
def live(store: Store, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    joined = tell_when_a_receive_waits(monkeypatch)
    app = create_app(Settings(admin_token=TOKEN), store, background=False)
    sock = listening_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = ReleasingServer(uvicorn_config(app, host="127.0.0.1", port=port, log_level="warning"))
    # Listening before the thread starts: requests wait in the backlog until uvicorn accepts.
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])))
    thread.start()
    try:
        url = f"http://127.0.0.1:{port}"
        name = f"lp-{uuid.uuid4().hex[:10]}"
        admin = {"Authorization": f"Bearer {TOKEN}"}
        account = httpx.post(f"{url}/api/v1/accounts", json=name, headers=admin, timeout=10)
        assert account.status_code == 201, account.text
        key = account.json()["keys"]["primary"]
        created = httpx.post(
            f"{url}/api/v1/accounts/{name}/queues",
            json={"queueName": "q"},
            headers={"Authorization": f"Key {key}"},
            timeout=10,
        )
        assert created.status_code == 201, created.text
        yield Live(f"{url}/api/v2/accounts/{name}/queues/q", key, server, joined)
    finally:
        server.should_exit = True
        thread.join(timeout=SAFETY_S)
        sock.close()


def _receive_waiting(live: Live, pool: ThreadPoolExecutor) -> Future[httpx.Response]:
    waiting = pool.submit(live.post, "/receive", {"waitSeconds": 20, "maxMessages": 5})
    assert live.joined.wait(SAFETY_S), "the receive never started waiting"
    assert not waiting.done()
    return waiting


def test_a_waiting_receive_is_answered_by_a_send(live: Live) -> None:
    with ThreadPoolExecutor(1) as pool:
        started = time.monotonic()
        waiting = _receive_waiting(live, pool)
        sent = live.post("", {"messages": [{"body": "wake up", "attributes": {"k": "v"}}]})
        assert sent.status_code == 201, sent.text
        answer = waiting.result(SAFETY_S)
        elapsed = time.monotonic() - started
    assert answer.status_code == 200, answer.text
    messages = answer.json()["messages"]
    assert [(m["body"], m["attributes"]) for m in messages] == [("wake up", {"k": "v"})]
    assert messages[0]["id"] == sent.json()["messages"][0]["id"]
    assert elapsed < 10  # woken by the send, long before the 20 s the receive would wait


def test_shutdown_answers_a_waiting_receive_at_once(live: Live) -> None:
    with ThreadPoolExecutor(1) as pool:
        waiting = _receive_waiting(live, pool)
        started = time.monotonic()
        live.server.should_exit = True
        answer = waiting.result(SAFETY_S)
        elapsed = time.monotonic() - started
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"messages": []}
    # Before uvicorn's graceful-shutdown limit (10 s) would have cut the request off.
    assert elapsed < 5
