"""The v2 replay cache is no shared pool one tenant can drain (#40 finding 7).

Measured before: one account filling the cache made every other account's CQ2 requests
503; and a date up to the skew ahead was remembered for twice the skew.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from cassieq.auth.replay import ReplayCache, ReplayCacheFull
from cassieq.store.base import Store
from tests.api.test_v2_signature import Api, _api, _refused, api

__all__ = ["api"]  # the fixture (both stores)


@pytest.fixture
def budgeted(store: Store) -> Iterator[Api]:
    yield from _api(store, replay_cache_max_entries=100, replay_cache_max_entries_per_account=2)


def test_one_account_at_its_budget_leaves_the_others_room(budgeted: Api) -> None:
    busy = budgeted
    other = dataclasses.replace(busy, account=f"sig-{uuid.uuid4().hex[:10]}", keys={})
    other.create_account()
    other.create_v1_queue("q")
    assert busy.probe(b"1").status_code == 200
    assert busy.probe(b"2").status_code == 200
    full = busy.probe(b"3")
    assert full.status_code == 503, full.text
    assert "of this account" in full.json()["message"]
    # The other account still signs as usual.
    assert other.probe(b"1").status_code == 200
    assert other.probe(b"2").status_code == 200


def test_a_date_ahead_of_the_servers_clock_is_refused(api: Api) -> None:
    path = f"{api.base}/q/probe"
    ahead = datetime.now(UTC) + timedelta(seconds=30)
    refused = api.probe(headers=api.signed("POST", path, body=b"hello", now=ahead))
    _refused(refused, "x-cassieq-date is more than 5 s ahead")
    slightly = datetime.now(UTC) + timedelta(seconds=2)
    accepted = api.probe(headers=api.signed("POST", path, body=b"hello", now=slightly))
    assert accepted.status_code == 200, accepted.text


def test_the_cache_counts_each_accounts_entries_and_forgets_them_at_expiry() -> None:
    cache = ReplayCache(max_entries=10, per_account=2)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    expires = t0 + timedelta(seconds=60)
    assert not cache.seen("a1", expires, t0, "a")
    assert not cache.seen("a2", expires, t0, "a")
    with pytest.raises(ReplayCacheFull, match="of this account"):
        cache.seen("a3", expires, t0, "a")
    assert not cache.seen("b1", expires, t0, "b")
    assert (cache.held_by("a"), cache.held_by("b")) == (2, 1)
    later = t0 + timedelta(seconds=61)
    assert not cache.seen("a3", later + timedelta(seconds=60), later, "a")
    assert (cache.held_by("a"), cache.held_by("b"), len(cache)) == (1, 0, 1)
