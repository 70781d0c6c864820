"""v2 queue routes: create/update/show/delete, purge, statistics, peek, redrive."""

from __future__ import annotations

from typing import Any

QUEUE_ROUTES: list[Any] = []
