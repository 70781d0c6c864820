"""Per-account request budgets (issue 40, finding 8): 429 with Retry-After in each API's error
shape, on a real socket of a server configured as `cassieq serve` configures it, on each store.

The budgets here refill at one request per 100 s: within a test nothing refills. The refill
itself is shown on an injected clock.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import boto3
import httpx
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from cassieq.api.rate_limit import AccountBudgets, retry_after
from cassieq.store.base import Store
from tests.api.test_http_limits import TOKEN, Live, live_server

# A 429 is held 0.2 s here (1 s by default): the holding itself is shown on a fake sleep.
SLOW = {
    "account_requests_per_second": 0.01,
    "account_request_burst": 3,
    "account_throttle_hold_seconds": 0.2,
}


def _new_account(live: Live) -> tuple[str, str]:
    name = f"rl-{uuid.uuid4().hex[:10]}"
    created = httpx.post(
        f"http://127.0.0.1:{live.port}/api/v1/accounts",
        json=name,
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=10,
    )
    assert created.status_code == 201, created.text
    return name, str(created.json()["keys"]["primary"])


def _get(live: Live, path: str, key: str) -> httpx.Response:
    return httpx.get(
        f"http://127.0.0.1:{live.port}{path}", headers={"Authorization": f"Key {key}"}, timeout=10
    )


def test_an_account_over_its_budget_gets_429_in_each_api_shape(store: Store) -> None:
    with live_server(store, **SLOW) as live:
        # The fixture's queue create spent one of the three: two left.
        v1 = f"/api/v1/accounts/{live.account}/queues/q"
        v2 = f"/api/v2/accounts/{live.account}/queues/q"
        assert live.get(v1).status_code == 200
        assert live.get(v2).status_code == 200
        over = live.get(v1)
        assert over.status_code == 429, over.text
        assert 1 <= int(over.headers["retry-after"]) <= 100  # less the hold
        body = over.json()
        assert body["code"] == 429 and body["message"] == "HTTP 429 Too Many Requests"
        assert "over its request budget" in body["detail"]
        over_v2 = live.get(v2)
        assert over_v2.status_code == 429, over_v2.text
        assert "retry-after" in over_v2.headers
        assert over_v2.json() == {"code": 429, "message": body["detail"]}
        # Another account has a budget of its own.
        other, key = _new_account(live)
        assert _get(live, f"/api/v1/accounts/{other}/queues", key).status_code == 200


def test_strangers_do_not_spend_an_accounts_budget(store: Store) -> None:
    with live_server(store, **SLOW) as live:
        name, key = _new_account(live)
        path = f"/api/v1/accounts/{name}/queues"
        for _ in range(10):  # unauthenticated: refused as before, the budget untouched
            assert _get(live, path, "not-the-key").status_code == 401
        assert [_get(live, path, key).status_code for _ in range(4)] == [200, 200, 200, 429]


def _sqs_query(live: Live, name: str, key: str) -> httpx.Response:
    """A query-protocol ListQueues, signed by botocore's SigV4 signer now."""
    url = f"http://127.0.0.1:{live.port}/"
    request = AWSRequest(
        method="POST",
        url=url,
        data=b"Action=ListQueues&Version=2012-11-05",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    SigV4Auth(Credentials(name, key), "sqs", "us-east-1").add_auth(request)
    return httpx.post(url, content=request.body, headers=dict(request.headers), timeout=10)


def test_sqs_answers_throttling_exception(store: Store) -> None:
    with live_server(store, **SLOW) as live:
        name, key = _new_account(live)
        client: Any = boto3.client(
            "sqs",
            endpoint_url=f"http://127.0.0.1:{live.port}",
            region_name="us-east-1",
            aws_access_key_id=name,
            aws_secret_access_key=key,
            config=Config(retries={"max_attempts": 1, "mode": "standard"}),
        )
        client.list_queues()
        client.list_queues()
        assert _sqs_query(live, name, key).status_code == 200  # the third: the last token
        with pytest.raises(ClientError) as raised:
            client.list_queues()  # JSON protocol
        error = raised.value.response
        assert error["Error"]["Code"] == "ThrottlingException"
        assert error["ResponseMetadata"]["HTTPStatusCode"] == 429
        assert "retry-after" in error["ResponseMetadata"]["HTTPHeaders"]
        query = _sqs_query(live, name, key)
        assert query.status_code == 429
        assert b"<Code>ThrottlingException</Code>" in query.content, query.text
        assert "retry-after" in query.headers


def test_a_bucket_refills_at_its_rate_and_keeps_only_accounts_in_use() -> None:
    now = [0.0]
    budgets = AccountBudgets(rate=2.0, burst=3, now=lambda: now[0])
    assert [budgets.spend("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert budgets.spend("a") == pytest.approx(0.5)  # one token back in half a second
    assert budgets.spend("b") == 0.0  # another account's bucket is its own
    now[0] += 0.5
    assert budgets.spend("a") == 0.0
    assert budgets.spend("a") > 0
    assert budgets.throttled == 2
    now[0] += 100
    assert retry_after(0.01) == "1" and retry_after(1.2) == "2"
    # Thousands of accounts that each made a request long ago: full buckets are dropped.
    for i in range(5000):
        budgets.spend(f"acct-{i}")
        now[0] += 1.0
    assert len(budgets._buckets) < 1100


async def _wait(budgets: AccountBudgets, account: str) -> float:
    """``spend_or_hold``'s wait: 0.0 when the request goes on."""
    refusal = await budgets.spend_or_hold(account)
    return 0.0 if refusal is None else refusal.wait


async def test_a_429_is_held_for_a_bounded_number_of_requests_per_account_and_in_all() -> None:
    release, both, all_three = asyncio.Event(), asyncio.Event(), asyncio.Event()
    slept: list[float] = []

    async def held(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) == 2:
            both.set()
        if len(slept) == 3:
            all_three.set()
        await release.wait()

    budgets = AccountBudgets(
        1.0, 1, lambda: 0.0, hold_s=1.0, hold_per_account=2, hold_total=3, sleep=held
    )
    assert await _wait(budgets, "a") == 0.0  # the one token
    holding = [asyncio.create_task(_wait(budgets, "a")) for _ in range(2)]
    await asyncio.wait_for(both.wait(), 10)  # both reach the hold
    assert len(slept) == 2 and all(0.5 <= s <= 1.0 for s in slept)  # jittered
    # A third of the same account is answered at once; another account is not held back.
    assert await _wait(budgets, "a") == 1.0
    assert await _wait(budgets, "b") == 0.0
    # B over its budget too: one more held (three in all), then every account at once.
    third = asyncio.create_task(_wait(budgets, "b"))
    await asyncio.wait_for(all_three.wait(), 10)
    assert await _wait(budgets, "c") == 0.0 and await _wait(budgets, "c") == 1.0
    release.set()
    await third
    # What is left to wait after the hold (the token was 1 s away): Retry-After's seconds.
    assert await asyncio.gather(*holding) == [pytest.approx(max(1.0 - s, 1e-3)) for s in slept[:2]]
    assert budgets._holding == {}  # nothing held any more, nothing kept
