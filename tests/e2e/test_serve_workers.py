"""`cassieq serve --workers 2` on the real Cassandra: both workers answer on the one port,
/metrics adds up what each served, a long poll waiting on one worker is answered by a put
served by the other within the bound a put on another server has, a worker killed is
replaced while the port keeps answering, and SIGTERM stops them all with exit status 0."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.api.conftest import Server, start_server, stop_server
from tests.conftest import CassandraNode

CHECK_MS = 500  # CASSIEQ_LONG_POLL_CHECK_MS of the server under test
DEADLINE_S = 60  # bounds a test that would hang; nothing waits for it to pass
# Between two looks at a process starting or ending (bounded by DEADLINE_S). Looking in a
# loop with no pause took the CPU the other worker needed to start, on 2 cores.
POLL_S = 0.1
PUT_ROUTE = "/api/v1/accounts/{account}/queues/{queue}/messages"


def _start_two(node: CassandraNode, log: Path, **env: str) -> Server:
    """`cassieq serve --workers 2`, once both workers answer (the first may answer alone)."""
    server = start_server(node, log, None, **{"CASSIEQ_WORKERS": "2", **env})
    deadline = time.monotonic() + DEADLINE_S
    while len(_worker_pids(server)) < 2:
        assert server.process.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, f"one worker only:\n{log.read_text()[-3000:]}"
        time.sleep(POLL_S)  # the second worker's start, polled
    return server


@pytest.fixture(scope="module")
def workers(
    cassandra_store: object, cassandra_node: CassandraNode, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("workers") / "serve.log"
    running = _start_two(cassandra_node, log, CASSIEQ_LONG_POLL_CHECK_MS=str(CHECK_MS))
    yield running
    stop_server(running)


@contextmanager
def _connection_to(server: Server, worker: str, headers: dict[str, str]) -> Iterator[httpx.Client]:
    """A client whose (kept-alive) connection reached ``worker``: new connections until one
    does (the kernel hands each to one of the processes waiting on the socket)."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        with httpx.Client(base_url=server.url, headers=headers, timeout=DEADLINE_S) as client:
            if client.get("/health").headers["x-cassieq-worker"] == worker:
                yield client
                return
    raise AssertionError(f"no connection reached worker {worker} in {DEADLINE_S} s")


def _metrics(server: Server) -> dict[str, list[tuple[dict[str, str], float]]]:
    with server.admin() as admin:
        text = admin.get("/metrics").text
    samples: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples.setdefault(s.name, []).append((s.labels, s.value))
    return samples


def _puts_served(server: Server) -> float:
    return sum(
        value
        for labels, value in _metrics(server)["cassieq_http_request_duration_seconds_count"]
        if labels["route"] == PUT_ROUTE and labels["status"] == "201"
    )


def _account(server: Server) -> tuple[str, dict[str, str]]:
    name = f"workers-{uuid.uuid4().hex[:10]}"
    with server.admin() as admin:
        created = admin.post("/api/v1/accounts", json=name)
    assert created.status_code == 201, created.text
    return name, {"Authorization": f"Key {created.json()['keys']['primary']}"}


def _worker_pids(server: Server) -> dict[str, str]:
    return {
        labels["worker"]: labels["pid"] for labels, _ in _metrics(server)["cassieq_worker_info"]
    }


def test_both_workers_answer_on_the_one_port(workers: Server) -> None:
    with _connection_to(workers, "0", {}) as first, _connection_to(workers, "1", {}) as second:
        assert first.get("/health").status_code == second.get("/health").status_code == 200
    pids = _worker_pids(workers)
    assert sorted(pids) == ["0", "1"] and len(set(pids.values())) == 2
    assert str(workers.process.pid) not in pids.values()  # the supervisor serves nothing
    states = {labels["state"]: value for labels, value in _metrics(workers)["cassieq_workers"]}
    assert states == {"configured": 2, "answered": 2}


def test_metrics_add_up_the_puts_each_worker_served(workers: Server) -> None:
    account, key = _account(workers)
    with _connection_to(workers, "0", key) as a:
        assert a.post(f"/api/v1/accounts/{account}/queues", json={"queueName": "q"}).is_success
    before = _puts_served(workers)
    for worker, count in (("0", 3), ("1", 4)):
        for _ in range(count):
            # A connection of its own each time: a kept-alive one idle past uvicorn's
            # keep-alive timeout (5 s: a slow scrape on a loaded machine) is closed, and
            # its client's next connection may reach the other worker.
            with _connection_to(workers, worker, key) as client:
                put = client.post(f"/api/v1/accounts/{account}/queues/q/messages", content=b"m")
            assert put.status_code == 201, put.text
            assert put.headers["x-cassieq-worker"] == worker
    # 3 served by one worker, 4 by the other: whichever answers the scrape counts all 7.
    assert _puts_served(workers) - before == 7


def test_a_put_on_one_worker_answers_a_long_poll_waiting_on_the_other(workers: Server) -> None:
    account, key = _account(workers)
    queue = f"/api/v2/accounts/{account}/queues/q"
    with (
        _connection_to(workers, "0", key) as waiting_on,
        _connection_to(workers, "1", key) as putting_on,
        ThreadPoolExecutor(1) as pool,
    ):
        created = putting_on.post(f"/api/v1/accounts/{account}/queues", json={"queueName": "q"})
        assert created.status_code == 201, created.text
        waiting = pool.submit(
            waiting_on.post, f"{queue}/messages/receive", json={"waitSeconds": 20}
        )
        deadline = time.monotonic() + DEADLINE_S
        while sum(v for _, v in _metrics(workers)["cassieq_long_poll_waiting"]) < 1:
            assert not waiting.done(), waiting.result().text
            assert time.monotonic() < deadline, "the receive never started waiting"
        sent = putting_on.post(f"{queue}/messages", json={"messages": [{"body": "wake"}]})
        assert sent.status_code == 201, sent.text
        put_answered = time.monotonic()
        answer = waiting.result(DEADLINE_S)
        woken_after = time.monotonic() - put_answered
    assert answer.status_code == 200 and answer.headers["x-cassieq-worker"] == "0"
    assert [m["body"] for m in answer.json()["messages"]] == ["wake"]
    # The bound of a put on another server: the waiting worker's next check of the queue,
    # or the probe after it, two CASSIEQ_LONG_POLL_CHECK_MS at most (with room for a
    # receive on this busy machine); unwoken, it would wait its 20 s.
    assert woken_after < 2 * CHECK_MS / 1000 + 2.0


def test_a_killed_worker_is_replaced_and_the_port_keeps_answering(workers: Server) -> None:
    before = _worker_pids(workers)
    os.kill(int(before["1"]), signal.SIGKILL)
    deadline = time.monotonic() + DEADLINE_S
    while True:
        # Worker 0 answers meanwhile (every connection the kernel hands to a live worker).
        assert httpx.get(f"{workers.url}/health", timeout=DEADLINE_S).status_code == 200
        now = _worker_pids(workers)
        if now.get("1") not in (None, before["1"]):
            break
        assert time.monotonic() < deadline, f"worker 1 was not replaced: {now}"
        time.sleep(POLL_S)  # the replacement's start, polled
    assert now["0"] == before["0"]
    with _connection_to(workers, "1", {}) as replaced:
        assert replaced.get("/health").status_code == 200


def test_sigterm_stops_every_worker_and_exits_0(
    cassandra_store: object, cassandra_node: CassandraNode, tmp_path: Path
) -> None:
    server = _start_two(cassandra_node, tmp_path / "serve.log")
    try:
        pids = [int(pid) for pid in _worker_pids(server).values()]
        assert len(pids) == 2
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=DEADLINE_S) == 0
    finally:
        if server.process.poll() is None:
            server.process.kill()
    for pid in pids:
        with pytest.raises(ProcessLookupError):  # exited and reaped by the supervisor
            os.kill(pid, 0)
    assert '"event": "workers_stopped"' in (tmp_path / "serve.log").read_text()


def test_a_supervisor_killed_takes_its_workers_with_it(
    cassandra_store: object, cassandra_node: CassandraNode, tmp_path: Path
) -> None:
    server = _start_two(cassandra_node, tmp_path / "serve.log")
    pids = [int(pid) for pid in _worker_pids(server).values()]
    server.process.kill()
    server.process.wait(timeout=DEADLINE_S)
    deadline = time.monotonic() + DEADLINE_S
    for pid in pids:
        # Killed by the kernel when their parent died; init reaps them (bounded poll).
        while Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid):
            assert time.monotonic() < deadline, f"worker {pid} outlived its supervisor"
            time.sleep(POLL_S)  # its end, polled
    # The port is free again (no listener left): a server started on it can bind.
    port = int(server.url.rsplit(":", 1)[1])
    while True:
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port))
                break
            except OSError as exc:
                if time.monotonic() > deadline:
                    listeners = subprocess.run(
                        ["ss", "-ltnp", f"sport = :{port}"], capture_output=True, text=True
                    ).stdout
                    raise AssertionError(f"{exc}; still listening:\n{listeners}") from exc
        time.sleep(POLL_S)  # the listener's end, polled


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split("\n")[0]
    except (OSError, IndexError):
        return "zombie"  # gone between the two reads
