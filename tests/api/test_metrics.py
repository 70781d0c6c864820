"""GET /metrics on each store: per-queue figures from the statistics (bounded by top N and
the allow-list, cached on the engine's clock), LWTs by primitive and outcome, request
latency by route template, pointer lag, background loop health; operator only.

The app runs in-process on the memory store and on the real Cassandra, with a FakeClock.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

from cassieq.api.app import create_app
from cassieq.api.metrics.sampler import QueueSampler
from cassieq.config import Settings
from cassieq.engine import FakeClock, QueueEngine
from cassieq.model import Account, QueueOptions
from cassieq.store.base import Store, StoreUnavailable
from cassieq.store.memory import MemoryStore
from tests.conftest import AppClient, app_client

TOKEN = "metrics-operator-token"
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
CACHE_S = 10.0

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@dataclass
class Api(AppClient[FakeClock]):
    store_kind: str = ""

    def send(self, queue: str, *messages: dict[str, Any]) -> None:
        sent = self.client.post(
            f"/api/v2/accounts/{self.account}/queues/{queue}/messages",
            json={"messages": list(messages)},
            headers={"Authorization": f"Key {self.key}"},
        )
        assert sent.status_code == 201, sent.text

    def receive(self, queue: str, n: int) -> list[dict[str, Any]]:
        got = self.client.post(
            f"/api/v2/accounts/{self.account}/queues/{queue}/messages/receive",
            json={"maxMessages": n, "visibilityTimeoutSeconds": 300},
            headers={"Authorization": f"Key {self.key}"},
        )
        assert got.status_code == 200, got.text
        messages: list[dict[str, Any]] = got.json()["messages"]
        return messages

    def ack(self, queue: str, receipt: str) -> None:
        acked = self.client.post(
            f"/api/v2/accounts/{self.account}/queues/{queue}/messages/ack",
            json={"popReceipts": [receipt]},
            headers={"Authorization": f"Key {self.key}"},
        )
        assert acked.status_code == 200 and acked.json()["acked"] == [receipt], acked.text

    def scrape(self) -> Samples:
        answer = self.client.get("/metrics", headers=ADMIN)
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
        return {
            (s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(answer.text)
            for s in family.samples
        }

    def queue_value(self, samples: Samples, name: str, queue: str) -> float | None:
        return samples.get((name, frozenset({("account", self.account), ("queue", queue)})))


def _app(store: Store, store_kind: str, **settings: Any) -> Iterator[Api]:
    clock = FakeClock()
    account = f"met-{uuid.uuid4().hex[:10]}"  # the Cassandra keyspace is shared
    merged = {
        "admin_token": TOKEN,
        "metrics_cache_seconds": CACHE_S,
        # A pass over the shared keyspace's every queue can take long on a loaded machine:
        # these tests read the pass's figures, never the previous ones.
        "metrics_scrape_wait_seconds": 300.0,
        # The shared keyspace holds other tests' queues, some deeper than these.
        "metrics_queues": (f"{account}/q", f"{account}/other"),
        **settings,
    }
    settings_ = Settings(**merged)
    with app_client(
        Api, store, settings_, clock, prefix="met", name=account, store_kind=store_kind
    ) as api:
        api.create_queue("q")
        yield api


@pytest.fixture
def api(store: Store, store_kind: str) -> Iterator[Api]:
    yield from _app(store, store_kind)


def test_queue_figures_come_from_the_statistics(api: Api) -> None:
    api.send("q", *({"body": f"m{i}"} for i in range(4)), {"body": "later", "delaySeconds": 600})
    first, second = api.receive("q", 2)
    api.ack("q", first["popReceipt"])
    api.clock.advance(5)
    samples = api.scrape()
    expected = {
        "cassieq_queue_depth": 2,
        "cassieq_queue_in_flight": 1,
        "cassieq_queue_delayed": 1,
        "cassieq_queue_size": 4,
        "cassieq_queue_messages_published_total": 5,
        "cassieq_queue_messages_delivered_total": 2,
        "cassieq_queue_messages_acked_total": 1,
        "cassieq_queue_messages_dead_lettered_total": 0,
        "cassieq_queue_messages_expired_total": 0,
    }
    got = {name: api.queue_value(samples, name, "q") for name in expected}
    assert got == expected
    age = api.queue_value(samples, "cassieq_queue_oldest_message_age_seconds", "q")
    assert age is not None and age >= 5
    assert second["popReceipt"]  # still in flight: counted above
    assert samples[("cassieq_metrics_queues_listed", frozenset())] == 1
    assert samples[("cassieq_metrics_sample_seconds", frozenset())] > 0


def test_pointer_lag_matches_the_debug_route(api: Api) -> None:
    api.send("q", {"body": "x"})
    samples = api.scrape()
    pointers = api.client.get(
        f"/api/v1/debug/accounts/{api.account}/queues/q/pointers", headers=ADMIN
    )
    assert pointers.status_code == 200, pointers.text
    body = pointers.json()
    inv = api.queue_value(samples, "cassieq_queue_invisibility_lag_buckets", "q")
    rep = api.queue_value(samples, "cassieq_queue_repair_lag_buckets", "q")
    assert (inv, rep) == (body["invisibilityLag"], body["repairLag"])
    maxima = {
        dict(labels)["pointer"]: v
        for (name, labels), v in samples.items()
        if name == "cassieq_pointer_lag_max_buckets"
    }
    assert set(maxima) == {"invisibility", "repair"}
    assert maxima["invisibility"] >= inv and maxima["repair"] >= rep  # type: ignore[operator]


def test_queue_figures_are_cached_for_the_cache_period(api: Api) -> None:
    api.send("q", {"body": "one"})
    assert api.queue_value(api.scrape(), "cassieq_queue_depth", "q") == 1
    api.send("q", {"body": "two"})
    api.clock.advance(CACHE_S - 1)
    assert api.queue_value(api.scrape(), "cassieq_queue_depth", "q") == 1  # the cached sample
    api.clock.advance(1)
    assert api.queue_value(api.scrape(), "cassieq_queue_depth", "q") == 2


def test_lwt_series_by_primitive_and_outcome(api: Api) -> None:
    api.send("q", {"body": "x"})
    api.receive("q", 1)
    lwts = {
        (dict(labels)["primitive"], dict(labels)["outcome"]): v
        for (name, labels), v in api.scrape().items()
        if name == "cassieq_lwt_total"
    }
    if api.store_kind == "memory":
        assert lwts == {}  # the memory store sends none
    else:
        applied = {p for (p, outcome), n in lwts.items() if outcome == "applied" and n > 0}
        # A put takes monotons and writes its row by compare-and-set; a receive consumes
        # its message by one.
        assert {"cas_monoton", "insert_messages"} <= applied, lwts
        assert any(p in applied for p in ("cas_message", "cas_messages")), lwts


def test_deliveries_dead_letters_and_repair_moves_of_this_server(api: Api) -> None:
    def events() -> tuple[float, float, float]:
        samples = api.scrape()
        return (
            samples[("cassieq_deliveries_total", frozenset())],
            samples[("cassieq_dead_letters_total", frozenset())],
            samples[("cassieq_repair_moves_total", frozenset())],
        )

    assert events() == (0, 0, 0)
    api.create_queue("once", max_delivery_count=1)
    api.send("q", {"body": "a"}, {"body": "b"})
    api.send("once", {"body": "spent"})
    assert len(api.receive("q", 2)) == 2
    assert len(api.receive("once", 1)) == 1
    assert events() == (3, 0, 0)
    api.clock.advance(301)  # past the leases: "spent" has used its one delivery
    assert api.receive("once", 1) == []  # dropped as dead-lettered (no DLQ set)
    assert events() == (3, 1, 0)  # repair moves: tests/engine/test_observers.py


def test_request_latency_is_labelled_by_route_template(api: Api) -> None:
    api.send("q", {"body": "x"})
    assert api.client.get("/no/such/path").status_code == 404
    samples = api.scrape()
    counts = {
        (dict(labels)["method"], dict(labels)["route"], dict(labels)["status"]): v
        for (name, labels), v in samples.items()
        if name == "cassieq_http_request_duration_seconds_count"
    }
    route = "/api/v2/accounts/{account}/queues/{queue}/messages"
    assert counts[("POST", route, "201")] == 1
    assert counts[("GET", "unmatched", "404")] == 1
    # Bounded labels: no account (or other raw path) in any route label.
    assert not any(api.account in r for _, r, _ in counts)


def test_metrics_need_the_operator_token(api: Api) -> None:
    missing = api.client.get("/metrics")
    assert missing.status_code == 401
    assert "Bearer" in missing.json()["detail"]
    wrong = api.client.get("/metrics", headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 401
    account_key = api.client.get("/metrics", headers={"Authorization": f"Key {api.key}"})
    assert account_key.status_code == 401


def test_background_figures_without_a_loop(api: Api) -> None:
    samples = api.scrape()
    assert samples[("cassieq_background_running", frozenset())] == 0
    assert samples[("cassieq_background_failures_total", frozenset())] == 0
    assert ("cassieq_background_last_success_age_seconds", frozenset()) not in samples


@pytest.fixture
def top_one(store: Store, store_kind: str) -> Iterator[Api]:
    # Only the deepest queue, plus the allow-list (here: just `q`).
    yield from _app(store, store_kind, metrics_top_queues=1, metrics_queues=())


def test_per_queue_series_are_bounded(top_one: Api) -> None:
    api = top_one
    for name, depth in (("deep", 40), ("mid", 2), ("low", 1)):
        api.create_queue(name)
        api.send(name, *({"body": str(i)} for i in range(depth)))
    samples = api.scrape()
    depths = {
        (dict(labels)["account"], dict(labels)["queue"]): v
        for (name, labels), v in samples.items()
        if name == "cassieq_queue_depth"
    }
    assert len(depths) == 1  # one series per figure, however many queues
    ((_, chosen_depth),) = depths.items()
    # The deepest queue of the keyspace: at least as deep as this account's deepest.
    assert chosen_depth >= 40
    assert (api.account, "mid") not in depths and (api.account, "low") not in depths
    assert samples[("cassieq_queues", frozenset())] >= 4
    assert samples[("cassieq_queues_depth", frozenset())] >= 43


@pytest.fixture
def allow_listed(store: Store, store_kind: str) -> Iterator[Api]:
    yield from _app(store, store_kind, metrics_top_queues=0)


def test_allow_listed_queues_are_always_shown(allow_listed: Api) -> None:
    api = allow_listed
    api.create_queue("other")
    api.create_queue("unlisted")
    api.send("unlisted", *({"body": str(i)} for i in range(3)))
    samples = api.scrape()
    shown = {
        dict(labels)["queue"]
        for (name, labels), _ in samples.items()
        if name == "cassieq_queue_depth" and dict(labels)["account"] == api.account
    }
    assert shown == {"q", "other"}


def test_each_app_has_its_own_registry() -> None:
    one = create_app(Settings(admin_token=TOKEN), MemoryStore(), background=False)
    two = create_app(Settings(admin_token=TOKEN), MemoryStore(), background=False)
    with TestClient(app=one) as a, TestClient(app=two) as b:
        for _ in range(3):
            assert a.get("/health").status_code == 200
        text = b.get("/metrics", headers=ADMIN).text
    counts = [
        s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "cassieq_http_request_duration_seconds_count"
        and s.labels["route"] == "/health"
    ]
    assert counts == []  # app one's requests are not in app two's registry


class FailingListing(MemoryStore):
    async def list_accounts(self) -> list[Account]:
        raise StoreUnavailable("no answer")


def test_a_store_that_does_not_answer_still_gives_the_other_figures() -> None:
    app = create_app(Settings(admin_token=TOKEN), FailingListing(), background=False)
    with TestClient(app=app) as client:
        assert client.get("/health").status_code == 200
        answer = client.get("/metrics", headers=ADMIN)
    assert answer.status_code == 200, answer.text
    samples = {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }
    assert samples[("cassieq_metrics_queues_listed", frozenset())] == 0
    health = frozenset({("method", "GET"), ("route", "/health"), ("status", "200")})
    assert samples[("cassieq_http_request_duration_seconds_count", health)] == 1


class HeldListing(MemoryStore):
    """A store whose queue listing waits until the test lets it go: a pass that outlasts
    the scrape's wait, as on a slow cluster with many queues."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()

    async def list_accounts(self) -> list[Account]:
        await self.release.wait()
        return await super().list_accounts()


async def test_a_slow_refresh_answers_the_previous_sample() -> None:
    store = HeldListing()
    engine = QueueEngine(store, FakeClock())
    await engine.accounts.create("acct")
    await engine.create_queue("acct", "q", QueueOptions())
    sampler = QueueSampler(engine, top=5, allow=(), cache_ms=0, wait_s=0.01)
    first = await sampler.refresh()
    assert first.listed is False and first.queues == []  # nothing read yet: answered anyway
    store.release.set()
    await sampler.settle()
    assert sampler.sample.listed is True
    assert [(q.account, q.queue) for q in sampler.sample.queues] == [("acct", "q")]
    await sampler.close()


def test_a_partitioned_queue_shows_each_partitions_lag_and_the_largest(api: Api) -> None:
    created = api.client.put(
        f"/api/v2/accounts/{api.account}/queues/other",
        json={"partitions": 3, "bucketSize": 2},
        headers={"Authorization": f"Key {api.key}"},
    )
    assert created.status_code == 201, created.text
    for i in range(12):
        api.send("other", {"body": f"m{i}"})
    api.receive("other", 10)  # left in flight: the readers move on, invisibility stays
    samples = api.scrape()
    lags: dict[tuple[str, str], float] = {}
    for (name, labels), value in samples.items():
        found = dict(labels)
        # (The shared keyspace holds other tests' partitioned queues too.)
        if name == "cassieq_queue_partition_lag_buckets" and found["account"] == api.account:
            assert found["queue"] == "other"
            lags[(found["partition"], found["pointer"])] = value
    assert set(lags) == {(p, k) for p in "012" for k in ("invisibility", "repair")}
    inv = api.queue_value(samples, "cassieq_queue_invisibility_lag_buckets", "other")
    assert inv == max(v for (_, k), v in lags.items() if k == "invisibility")
    assert inv is not None and inv > 0
    # A queue of one partition has no per-partition series (this account's "q").
    assert not any(
        dict(labels).get("account") == api.account and dict(labels).get("queue") == "q"
        for (name, labels) in samples
        if name == "cassieq_queue_partition_lag_buckets"
    )


def test_fifo_duplicates_and_held_groups_of_this_server(api: Api) -> None:
    def events() -> tuple[float, float]:
        samples = api.scrape()
        return (
            samples[("cassieq_fifo_duplicates_total", frozenset())],
            samples[("cassieq_fifo_groups_held_total", frozenset())],
        )

    assert events() == (0, 0)
    api.create_queue("f", fifo=True)
    api.send("f", {"body": "a", "groupId": "g", "deduplicationId": "1"})
    api.send("f", {"body": "a", "groupId": "g", "deduplicationId": "1"})  # a retry
    api.send("f", {"body": "b", "groupId": "g", "deduplicationId": "2"})
    assert events() == (1, 0)
    assert [m["body"] for m in api.receive("f", 1)] == ["a"]
    assert api.receive("f", 10) == []  # b waits for a, in flight: the group is held
    assert events()[1] >= 1
