"""GET /metrics per subscription (issue 36), on each store: lag and oldest unread age from
the periodic sample, messages read and commits (applied | conflict), and a shared
subscription's deliveries, acks and expired messages, counted by this server's observer;
all bounded as the per-queue series are (the labelled queues only).

The app runs in-process on the memory store and on the real Cassandra, with a FakeClock:
ages are the ones the test set. The rest of /metrics: tests/api/test_metrics.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cassieq.api.metrics import observer as metrics_observer
from cassieq.api.metrics.observer import EngineEventsCollector, MetricsObserver, only_labelled
from cassieq.api.metrics.sampler import QueueSampler
from cassieq.api.metrics.workers import dump, merge
from cassieq.engine import FakeClock, QueueEngine
from cassieq.engine.observe import CallCounter
from cassieq.model import QueueDefinition, QueueOptions
from cassieq.store.base import Store
from cassieq.store.memory import MemoryStore
from tests.api.test_metrics import CACHE_S, Api, Samples, _app

LAG = "cassieq_subscription_lag_messages"
AGE = "cassieq_subscription_oldest_unread_age_seconds"
READ = "cassieq_subscription_messages_read_total"
COMMITS = "cassieq_subscription_commits_total"
DELIVERIES = "cassieq_subscription_deliveries_total"
ACKS = "cassieq_subscription_acks_total"
EXPIRED = "cassieq_subscription_expired_total"


class Subscribed(Api):
    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        url = f"/api/v2/accounts/{self.account}/queues/{path}"
        auth = {"Authorization": f"Key {self.key}"}
        return self.client.request(method, url, headers=auth, **kwargs)

    def subscribe(
        self, queue: str, name: str, start: str = "earliest", mode: str = "ordered"
    ) -> None:
        made = self.call(
            "PUT", f"{queue}/subscriptions/{name}", json={"mode": mode, "start": start}
        )
        assert made.status_code == 201, made.text

    def take(self, queue: str, name: str, **body: Any) -> list[Any]:
        """A shared subscription's receive."""
        got = self.call("POST", f"{queue}/subscriptions/{name}/receive", json=body)
        assert got.status_code == 200, got.text
        messages: list[Any] = got.json()["messages"]
        return messages

    def read(self, queue: str, name: str, limit: int) -> Any:
        got = self.call("GET", f"{queue}/subscriptions/{name}/messages", params={"limit": limit})
        assert got.status_code == 200, got.text
        return got.json()

    def commit(self, queue: str, name: str, **body: Any) -> httpx.Response:
        return self.call("POST", f"{queue}/subscriptions/{name}/position", json=body)

    def series(self, samples: Samples, name: str, **labels: str) -> dict[str, float]:
        """``name``'s samples of this account, by subscription (and outcome, if any)."""
        found = {}
        for (sample, pairs), value in samples.items():
            got = dict(pairs)
            if sample != name or got.get("account") != self.account:
                continue
            if any(got.get(k) != v for k, v in labels.items()):
                continue
            key = got["subscription"] + (f"/{got['outcome']}" if "outcome" in got else "")
            found[key] = value
        return found


def _subscribed(store: Store, store_kind: str, **settings: Any) -> Iterator[Subscribed]:
    for api in _app(store, store_kind, **settings):
        yield Subscribed(**vars(api))


@pytest.fixture
def api(store: Store, store_kind: str) -> Iterator[Subscribed]:
    yield from _subscribed(store, store_kind)


def test_lag_and_oldest_unread_age_per_subscription(api: Subscribed) -> None:
    api.send("q", *({"body": f"m{i}"} for i in range(3)))
    api.clock.advance(5)
    api.subscribe("q", "from-start")
    api.subscribe("q", "from-now", start="latest")
    api.clock.advance(7)
    samples = api.scrape()
    assert api.series(samples, LAG, queue="q") == {"from-start": 3, "from-now": 0}
    # Sent 12 s ago; a subscription with nothing unread shows 0, not an absent series.
    assert api.series(samples, AGE, queue="q") == {"from-start": 12.0, "from-now": 0.0}
    first = api.read("q", "from-start", 2)
    assert api.commit("q", "from-start", position=first["next"]).status_code == 200
    api.send("q", {"body": "late"})
    api.clock.advance(CACHE_S)
    samples = api.scrape()
    assert api.series(samples, LAG, queue="q") == {"from-start": 2, "from-now": 1}
    # m2 was sent at the start (22 s ago), "late" a cache period ago.
    assert api.series(samples, AGE, queue="q") == {"from-start": 22.0, "from-now": CACHE_S}


def test_messages_read_and_commits_by_outcome(api: Subscribed) -> None:
    api.send("q", *({"body": f"m{i}"} for i in range(3)))
    api.subscribe("q", "s")
    api.subscribe("q", "idle")
    assert api.series(api.scrape(), READ) == {}  # nothing read yet: no series
    first = api.read("q", "s", 2)
    again = api.read("q", "s", 10)  # not committed: the same two again, and m2
    assert len(first["messages"]) == 2 and len(again["messages"]) == 3
    assert api.commit("q", "s", position=first["next"]).status_code == 200
    stale = api.commit("q", "s", position=again["next"], expected=again["messages"][0]["position"])
    assert stale.status_code == 409, stale.text
    seek = api.call("POST", "q/subscriptions/s/seek", json={"to": "earliest"})
    assert seek.status_code == 200, seek.text
    samples = api.scrape()
    assert api.series(samples, READ, queue="q") == {"s": 5}
    # A seek moves the position as a commit does: counted with them.
    assert api.series(samples, COMMITS, queue="q") == {"s/applied": 2, "s/conflict": 1}


def test_shared_deliveries_acks_and_expired(api: Subscribed) -> None:
    api.subscribe("q", "work", mode="shared")
    api.subscribe("q", "idle", mode="shared")
    api.send("q", *({"body": f"m{i}"} for i in range(3)))
    assert api.series(api.scrape(), DELIVERIES) == {}  # nothing delivered yet: no series
    first = api.take("q", "work", maxMessages=2, visibilityTimeoutSeconds=30)
    acked = api.call(
        "POST", "q/subscriptions/work/ack", json={"popReceipts": [first[0]["popReceipt"]]}
    )
    assert acked.status_code == 200 and acked.json()["failed"] == [], acked.text
    api.clock.advance(31)  # the second's lease runs out: delivered again, with m2
    assert len(api.take("q", "work", maxMessages=10)) == 2
    # Past the queue's retention before it was acked: expired in the subscription, never
    # delivered again.
    retained = api.call("PUT", "other", json={"messageRetentionSeconds": 60})
    assert retained.status_code == 201, retained.text
    api.subscribe("other", "late", mode="shared")
    api.send("other", {"body": "old"})
    assert len(api.take("other", "late", visibilityTimeoutSeconds=10)) == 1
    api.clock.advance(61)
    assert api.take("other", "late", maxMessages=10) == []
    samples = api.scrape()
    assert api.series(samples, DELIVERIES, queue="q") == {"work": 4}
    assert api.series(samples, ACKS) == {"work": 1}
    assert api.series(samples, EXPIRED) == {"late": 1}
    assert api.series(samples, DELIVERIES, queue="other") == {"late": 1}


@pytest.fixture
def allow_listed(store: Store, store_kind: str) -> Iterator[Subscribed]:
    # Only "q" and "other" (the allow-list) are labelled.
    yield from _subscribed(store, store_kind, metrics_top_queues=0)


def test_subscriptions_of_unlabelled_queues_have_no_series(allow_listed: Subscribed) -> None:
    api = allow_listed
    api.create_queue("unlisted")
    for queue in ("q", "unlisted"):
        api.send(queue, {"body": "x"})
        api.subscribe(queue, "s")
        api.read(queue, "s", 1)
        assert api.commit(queue, "s", position=api.read(queue, "s", 1)["next"]).status_code == 200
    samples = api.scrape()
    for name in (LAG, AGE, READ):
        assert {
            dict(p)["queue"]
            for (n, p) in samples
            if n == name and dict(p).get("account") == api.account
        } == {"q"}, name
    assert api.series(samples, COMMITS, queue="unlisted") == {}
    assert api.series(samples, COMMITS, queue="q") == {"s/applied": 1}


async def test_the_sample_lists_subscriptions_once_per_labelled_queue() -> None:
    calls = CallCounter()
    engine = QueueEngine(MemoryStore(), FakeClock(), observers=[calls])
    await engine.accounts.create("acct")
    for depth, name in enumerate(("a", "b", "c")):
        await engine.create_queue("acct", name, QueueOptions())
        for i in range(depth):
            await engine.put("acct", name, f"m{i}")
        await engine.subscriptions.create("acct", name, "s1", "ordered", "earliest")
        await engine.subscriptions.create("acct", name, "s2", "ordered", "earliest")
    sampler = QueueSampler(engine, top=2, allow=(), cache_ms=0)
    calls.reset()
    sample = await sampler.refresh()
    # The two deepest queues are labelled: their subscriptions listed, once each.
    assert calls.calls["read_subscriptions"] == 2
    assert [(q.queue, [(s.name, s.lag) for s in q.subscriptions]) for q in sample.queues] == [
        ("c", [("s1", 2), ("s2", 2)]),
        ("b", [("s1", 1), ("s2", 1)]),
    ]
    await sampler.close()


def _queue(account: str, name: str) -> QueueDefinition:
    return QueueDefinition(
        account=account, name=name, version=1, status="active", options=QueueOptions(), created_at=0
    )


def test_workers_counts_are_summed_then_kept_for_the_labelled_queues() -> None:
    # What the scraped worker of `cassieq serve --workers 2` does with its own and a
    # sibling's families (Metrics.render): add them up, then keep the labelled queues'.
    one, two = MetricsObserver(), MetricsObserver()
    one.subscription_read(_queue("a", "shown"), "s", 3)
    two.subscription_read(_queue("a", "shown"), "s", 4)
    two.subscription_read(_queue("a", "hidden"), "s", 5)
    one.subscription_committed(_queue("a", "shown"), "s", True)
    two.subscription_committed(_queue("a", "shown"), "s", False)
    two.subscription_committed(_queue("a", "hidden"), "s", True)
    merged = merge([dump(EngineEventsCollector(o).collect()) for o in (one, two)])
    kept = only_labelled(merged, {("a", "shown")})
    values = {(s.name, tuple(sorted(s.labels.items()))): s.value for m in kept for s in m.samples}
    labels = (("account", "a"), ("queue", "shown"), ("subscription", "s"))
    subscription_series = {k: v for k, v in values.items() if k[0].startswith("cassieq_subscr")}
    assert subscription_series == {
        (READ, labels): 7,
        (COMMITS, (*labels[:1], ("outcome", "applied"), *labels[1:])): 1,
        (COMMITS, (*labels[:1], ("outcome", "conflict"), *labels[1:])): 1,
    }
    # The other families pass as they are.
    assert values[("cassieq_deliveries_total", ())] == 0


def test_shared_events_are_summed_over_workers_and_bounded() -> None:
    one, two = MetricsObserver(), MetricsObserver()
    shown, hidden = _queue("a", "shown"), _queue("a", "hidden")
    one.subscription_delivered(shown, "s", 3)
    two.subscription_delivered(shown, "s", 2)
    two.subscription_delivered(hidden, "s", 9)
    one.subscription_acked(shown, "s", 2)
    two.subscription_expired(shown, "t", 1)
    merged = merge([dump(EngineEventsCollector(o).collect()) for o in (one, two)])
    kept = only_labelled(merged, {("a", "shown")})
    values = {
        (m.name, s.labels["subscription"]): s.value
        for m in kept
        for s in m.samples
        if s.labels.get("account") == "a"
    }
    assert values == {
        ("cassieq_subscription_deliveries", "s"): 5,
        ("cassieq_subscription_acks", "s"): 2,
        ("cassieq_subscription_expired", "t"): 1,
    }


def test_the_observer_keeps_a_bounded_number_of_label_sets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(metrics_observer, "MAX_SUBSCRIPTION_KEYS", 3)
    seen = MetricsObserver()
    q = _queue("a", "q")
    for name in ("s1", "s2"):
        seen.subscription_read(q, name, 1)
    seen.subscription_committed(q, "s1", True)
    seen.subscription_read(q, "s1", 4)  # a label set it has: counted on
    assert (dict(seen.subscription_reads), dict(seen.subscription_commits)) == (
        {("a", "q", "s1"): 5, ("a", "q", "s2"): 1},
        {("a", "q", "s1", "applied"): 1},
    )
    seen.subscription_committed(q, "s1", False)  # a fourth: forgets the others first
    assert (dict(seen.subscription_reads), dict(seen.subscription_commits)) == (
        {},
        {("a", "q", "s1", "conflict"): 1},
    )
    # A shared subscription's events share the bound.
    seen.subscription_delivered(q, "s3", 2)
    seen.subscription_acked(q, "s3", 1)
    assert dict(seen.subscription_events) == {
        ("a", "q", "s3", "delivered"): 2,
        ("a", "q", "s3", "acked"): 1,
    }
    seen.subscription_expired(q, "s3", 1)
    assert (seen.subscription_commits, dict(seen.subscription_events)) == (
        {},
        {("a", "q", "s3", "expired"): 1},
    )
