"""/metrics series for the per-tenant limits: requests answered 429 by the request budget
(cassieq.api.rate_limit) and requests refused 403 by a quota (cassieq.api.quotas), this
server's counts since it started.

Labelled by API (and quota), never by account: the per-queue series are the only ones that
name accounts, and they are bounded (top N); a series per throttled tenant would not be.
Which accounts are refused is in the logs' answers, not in the time-series database.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily
from prometheus_client.metrics_core import Metric

if TYPE_CHECKING:
    from cassieq.api.quotas import AccountQuotas, Api, Quota
    from cassieq.api.rate_limit import AccountBudgets

APIS: tuple[Api, ...] = ("v1", "v2", "sqs")
QUOTAS: tuple[Quota, ...] = ("stored", "in_flight")


class TenantLimitsCollector:
    def __init__(self, budgets: AccountBudgets, quotas: AccountQuotas) -> None:
        self._budgets = budgets
        self._quotas = quotas

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        throttled = CounterMetricFamily(
            "cassieq_requests_throttled",
            "Requests answered 429 by the per-account request budget or fair share, by API.",
            labels=["api"],
        )
        for api in APIS:  # every API from the start: a rate() needs the zero
            throttled.add_metric([api], self._budgets.refused.get(api, 0))
        yield throttled
        refused = CounterMetricFamily(
            "cassieq_quota_refusals",
            "Puts and receives refused (403, SQS OverLimit) by a per-account quota.",
            labels=["api", "quota"],
        )
        for api in APIS:
            for quota in QUOTAS:
                refused.add_metric([api, quota], self._quotas.refused.get((api, quota), 0))
        yield refused
