"""/api/v2 (api-v2.md): everything new; /api/v1 stays frozen to CassieQ."""

from __future__ import annotations

from typing import Any

from cassieq.api.v2.messages import MESSAGE_ROUTES
from cassieq.api.v2.purge import PURGE_ROUTES
from cassieq.api.v2.queues import QUEUE_ROUTES
from cassieq.api.v2.redrive import REDRIVE_ROUTES
from cassieq.api.v2.subscriptions import SUBSCRIPTION_ROUTES

V2_ROUTES: list[Any] = [
    *QUEUE_ROUTES,
    *MESSAGE_ROUTES,
    *PURGE_ROUTES,
    *REDRIVE_ROUTES,
    *SUBSCRIPTION_ROUTES,
]
