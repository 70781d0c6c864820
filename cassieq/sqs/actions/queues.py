"""SQS actions (filled by their owner; the route merges this table)."""

from __future__ import annotations

from cassieq.sqs.context import Handler

ACTIONS: dict[str, Handler] = {}
