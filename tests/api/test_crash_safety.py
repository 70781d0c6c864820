"""SIGKILL the server twice under load: every message whose put returned 201 is delivered
and acked in the end (at least once; duplicates from expired leases are counted)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from cassieq.tools.bench.servers import free_port
from tests.api.conftest import AccountCtx, start_server, stop_server
from tests.conftest import CassandraNode

PRODUCERS, CONSUMERS, PER_PRODUCER = 4, 4, 500
TOTAL = PRODUCERS * PER_PRODUCER
DEADLINE_S = 300


def _nothing_left(url: str, account: str, auth: dict[str, str]) -> bool:
    try:
        stats = httpx.get(f"{url}/api/v1/accounts/{account}/queues/crash/statistics", headers=auth)
    except httpx.TransportError:
        return False
    return stats.status_code == 200 and stats.json()["size"] == 0


def test_no_acknowledged_put_is_lost_across_two_sigkills(
    cassandra_node: CassandraNode, account: AccountCtx, tmp_path: Path
) -> None:
    port = free_port()
    log = tmp_path / "crashing-server.log"
    server = start_server(cassandra_node, log, port=port)
    base = f"{server.url}/api/v1/accounts/{account.name}/queues/crash"
    auth = {"Authorization": f"Key {account.keys['primary']}"}
    options = {
        "queueName": "crash",
        "repairWorkerPollSeconds": 1,
        "repairWorkerBucketFinalizeTimeSeconds": 2,
    }
    assert (
        httpx.post(
            f"{server.url}/api/v1/accounts/{account.name}/queues", json=options, headers=auth
        ).status_code
        == 201
    )

    lock = threading.Lock()
    put_ok: set[str] = set()
    deliveries: Counter[str] = Counter()
    acked: set[str] = set()
    kills = 0
    stop = threading.Event()

    def produce(p: int) -> None:
        with httpx.Client(headers=auth, timeout=10) as c:
            for i in range(PER_PRODUCER):
                payload = f"p{p}-{i}"
                while not stop.is_set():
                    try:
                        if c.post(f"{base}/messages", content=payload.encode()).status_code == 201:
                            with lock:
                                put_ok.add(payload)
                            break
                    except httpx.TransportError:
                        time.sleep(0.05)  # the server is down: retry the same message

    def consume() -> None:
        with httpx.Client(headers=auth, timeout=10) as c:
            while not stop.is_set():
                try:
                    got = c.get(f"{base}/messages/next", params={"invisibilityTimeSeconds": 5})
                    if got.status_code == 204:
                        time.sleep(0.05)  # empty now; producers or repair will add more
                        continue
                    body = got.json()
                    with lock:
                        deliveries[body["message"]] += 1
                    ack = c.delete(f"{base}/messages", params={"popReceipt": body["popReceipt"]})
                    if ack.status_code == 204:
                        with lock:
                            acked.add(body["message"])
                except httpx.TransportError:
                    time.sleep(0.05)

    with ThreadPoolExecutor(PRODUCERS + CONSUMERS) as pool:
        futures = [pool.submit(produce, p) for p in range(PRODUCERS)]
        futures += [pool.submit(consume) for _ in range(CONSUMERS)]
        started = time.monotonic()
        try:
            for threshold in (TOTAL // 5, TOTAL // 2):
                while len(acked) < threshold and time.monotonic() - started < DEADLINE_S:
                    time.sleep(0.05)
                server.process.kill()  # SIGKILL: no shutdown hooks, requests cut mid-way
                server.process.wait()
                kills += 1
                server = start_server(cassandra_node, log, port=port)
            while time.monotonic() - started < DEADLINE_S:
                with lock:
                    all_delivered = len(put_ok) == TOTAL and put_ok <= set(deliveries)
                # An ack the server applied may have lost its answer to a kill: the server's
                # own count says whether anything is left unacked.
                if all_delivered and _nothing_left(server.url, account.name, auth):
                    break
                time.sleep(0.1)
        finally:
            stop.set()
            for f in futures:
                f.result()
            stop_server(server)

    lost = put_ok - set(deliveries)
    twice = sum(1 for n in deliveries.values() if n > 1)
    print(
        f"\ncrash safety: kills={kills} put_201={len(put_ok)} acks_answered={len(acked)} "
        f"lost={len(lost)} delivered_more_than_once={twice} "
        f"seconds={time.monotonic() - started:.1f}"
    )
    assert kills == 2
    assert len(put_ok) == TOTAL
    assert lost == set(), f"lost {len(lost)} messages, e.g. {sorted(lost)[:5]}"
    restarted = start_server(cassandra_node, log, port=port)  # to read the final statistics
    try:
        # The v2 statistics: v1 answers only the size.
        final = httpx.get(f"{base.replace('/api/v1/', '/api/v2/')}/statistics", headers=auth).json()
    finally:
        stop_server(restarted)
    assert (final["size"], final["inFlight"]) == (0, 0), final
    assert final["acked"] == final["published"] >= TOTAL
    assert "unhandled_error" not in log.read_text()
