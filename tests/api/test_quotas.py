"""Per-account quotas of messages stored and in flight (issue 40, finding 8), on a real
socket of a server configured as `cassieq serve` configures it, on each store; and the
/metrics counters of requests the budget (429) and the quotas (403) refused.

The quotas' figures are the /metrics sample's per-account sums: a scrape (cache period 0
here) refreshes them where `cassieq serve` refreshes them every
CASSIEQ_ACCOUNT_QUOTA_REFRESH_SECONDS. Between refreshes they are not counted: shown too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import httpx
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from prometheus_client.parser import text_string_to_metric_families

from cassieq.store.base import Store
from tests.api.test_http_limits import TOKEN, Live, live_server
from tests.api.test_rate_limit import SLOW, _new_account, _sqs_query

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
QUOTAS = {
    "account_max_stored_messages": 3,
    "account_max_in_flight_messages": 2,
    "metrics_cache_seconds": 0.0,
    # A scrape waits for its refresh however long it takes on a loaded machine (by default
    # it answers the previous sample after 5 s, and the figures would be the old ones).
    "metrics_scrape_wait_seconds": 300.0,
}


def _scrape(live: Live) -> Samples:
    answer = httpx.get(
        f"http://127.0.0.1:{live.port}/metrics",
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=300,
    )
    assert answer.status_code == 200, answer.text
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }


class _Tenant:
    def __init__(self, live: Live, account: str, key: str) -> None:
        self.base = f"http://127.0.0.1:{live.port}"
        self.account, self.key = account, key
        self.headers = {"Authorization": f"Key {key}"}
        self.sqs: Any = boto3.client(
            "sqs",
            endpoint_url=self.base,
            region_name="us-east-1",
            aws_access_key_id=account,
            aws_secret_access_key=key,
            config=Config(retries={"max_attempts": 1, "mode": "standard"}),
        )

    def v1(self, method: str, suffix: str, **kw: Any) -> httpx.Response:
        url = f"{self.base}/api/v1/accounts/{self.account}/queues/q/messages{suffix}"
        headers = {**self.headers, **kw.pop("headers", {})}
        return httpx.request(method, url, headers=headers, timeout=10, **kw)

    def put(self) -> httpx.Response:
        return self.v1("POST", "", content=b"m", headers={"Content-Type": "text/plain"})

    def v2(self, suffix: str, body: Any) -> httpx.Response:
        url = f"{self.base}/api/v2/accounts/{self.account}/queues/q/messages{suffix}"
        return httpx.post(url, json=body, headers=self.headers, timeout=10)

    def sqs_error(self, call: str, **params: Any) -> dict[str, Any]:
        url = self.sqs.get_queue_url(QueueName="q")["QueueUrl"]
        with pytest.raises(ClientError) as raised:
            getattr(self.sqs, call)(QueueUrl=url, **params)
        response: dict[str, Any] = raised.value.response
        return response


@pytest.fixture
def live(store: Store) -> Iterator[Live]:
    with live_server(store, **QUOTAS) as running:
        yield running


def _v1_refusal(response: httpx.Response, setting: str) -> None:
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["code"] == 403 and body["message"] == "HTTP 403 Forbidden", body
    assert setting in body["detail"] and "over its quota" in body["detail"], body


def _v2_refusal(response: httpx.Response, setting: str) -> None:
    assert response.status_code == 403, response.text
    body = response.json()
    assert set(body) == {"code", "message"} and body["code"] == 403, body
    assert setting in body["message"], body


def _over_limit(error: dict[str, Any], setting: str) -> None:
    assert error["Error"]["Code"] == "OverLimit", error
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert setting in error["Error"]["Message"]


def test_puts_are_refused_once_the_account_stores_its_quota(live: Live) -> None:
    tenant = _Tenant(live, live.account, live.key)
    assert [tenant.put().status_code for _ in range(3)] == [201, 201, 201]
    # Not counted until the figures are refreshed: the quota is approximate.
    assert tenant.put().status_code == 201
    _scrape(live)  # four stored, the quota three
    setting = "CASSIEQ_ACCOUNT_MAX_STORED_MESSAGES"
    _v1_refusal(tenant.put(), setting)
    _v2_refusal(tenant.v2("", {"messages": [{"body": "m"}]}), setting)
    _over_limit(tenant.sqs_error("send_message", MessageBody="m"), setting)
    _over_limit(
        tenant.sqs_error("send_message_batch", Entries=[{"Id": "1", "MessageBody": "m"}]),
        setting,
    )
    # Receives are not held back by the stored quota, nor is another account.
    got = tenant.v1("GET", "/next")
    assert got.status_code == 200, got.text
    name, key = _new_account(live)
    other = _Tenant(live, name, key)
    created = httpx.post(
        f"{other.base}/api/v1/accounts/{name}/queues",
        json={"queueName": "q"},
        headers=other.headers,
        timeout=10,
    )
    assert created.status_code == 201, created.text
    assert other.put().status_code == 201
    # Two acked: under the quota at the next refresh, and puts go through again.
    receipt = got.json()["popReceipt"]
    assert tenant.v1("DELETE", "", params={"popReceipt": receipt}).status_code == 204
    second = tenant.v1("GET", "/next").json()["popReceipt"]
    assert tenant.v1("DELETE", "", params={"popReceipt": second}).status_code == 204
    _scrape(live)
    assert tenant.put().status_code == 201
    samples = _scrape(live)
    for api, n in (("v1", 1), ("v2", 1), ("sqs", 2)):
        labels = frozenset({("api", api), ("quota", "stored")})
        assert samples[("cassieq_quota_refusals_total", labels)] == n


def test_receives_are_refused_once_the_account_has_its_quota_in_flight(live: Live) -> None:
    tenant = _Tenant(live, live.account, live.key)
    assert [tenant.put().status_code for _ in range(3)] == [201, 201, 201]
    assert tenant.v1("GET", "/next").status_code == 200
    received = tenant.v2("/receive", {"maxMessages": 1, "visibilityTimeoutSeconds": 60})
    assert received.status_code == 200 and len(received.json()["messages"]) == 1
    _scrape(live)  # two in flight, the quota two
    setting = "CASSIEQ_ACCOUNT_MAX_IN_FLIGHT_MESSAGES"
    _v1_refusal(tenant.v1("GET", "/next"), setting)
    _v2_refusal(tenant.v2("/receive", {"maxMessages": 1}), setting)
    _over_limit(tenant.sqs_error("receive_message", MaxNumberOfMessages=1), setting)
    # Puts are not held back by the in-flight quota (three stored, the quota three: no).
    # Acking one makes room at the next refresh.
    receipt = received.json()["messages"][0]["popReceipt"]
    acked = tenant.v2("/ack", {"popReceipts": [receipt]})
    assert acked.status_code == 200, acked.text
    _scrape(live)
    assert tenant.v1("GET", "/next").status_code == 200
    samples = _scrape(live)
    for api in ("v1", "v2", "sqs"):
        labels = frozenset({("api", api), ("quota", "in_flight")})
        assert samples[("cassieq_quota_refusals_total", labels)] == 1


def test_no_quota_by_default(store: Store) -> None:
    with live_server(store, metrics_cache_seconds=0.0, metrics_scrape_wait_seconds=300.0) as live:
        tenant = _Tenant(live, live.account, live.key)
        for _ in range(3):
            assert tenant.put().status_code == 201
            assert tenant.v1("GET", "/next").status_code == 200
            _scrape(live)
        samples = _scrape(live)
    assert not any(v for (name, _), v in samples.items() if name == "cassieq_quota_refusals_total")


def test_429s_are_counted_per_api_without_an_account_label(store: Store) -> None:
    with live_server(store, **SLOW) as live:
        # The fixture's queue create spent one of the three tokens.
        v1 = f"/api/v1/accounts/{live.account}/queues/q"
        v2 = f"/api/v2/accounts/{live.account}/queues/q"
        assert live.get(v1).status_code == 200
        assert live.get(v1).status_code == 200
        assert [live.get(v1).status_code, live.get(v2).status_code] == [429, 429]
        assert live.get(v2).status_code == 429
        assert _sqs_query(live, live.account, live.key).status_code == 429
        samples = _scrape(live)
    throttled = {
        dict(labels)["api"]: value
        for (name, labels), value in samples.items()
        if name == "cassieq_requests_throttled_total"
    }
    assert throttled == {"v1": 1, "v2": 2, "sqs": 1}
    assert all(
        set(dict(labels)) == {"api"}
        for (name, labels) in samples
        if name == "cassieq_requests_throttled_total"
    )
