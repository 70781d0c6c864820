"""Message rows as the engine writes them, for store-level tests."""

from __future__ import annotations

from cassieq.model import MessageRow
from cassieq.tokens import new_token


def message(monoton: int, version: int = 1, **fields: object) -> MessageRow:
    """A message row as a put writes it (visible at 0), with its own change token."""
    values: dict[str, object] = {
        "monoton": monoton,
        "message": f"body-{monoton}",
        "version": version,
        "delivery_count": 0,
        "acked": False,
        "next_visible_on": 0,
        "tag": f"tag-{monoton}",
        "created_at": 1000,
        "updated_at": 1000,
        "change": new_token(),
        **fields,
    }
    return MessageRow(**values)  # type: ignore[arg-type]


def taken(row: MessageRow, now: int = 2000, lease_ms: int = 30_000) -> MessageRow:
    """``row`` as a receive changes it: one more delivery, leased, a new change token.
    (The new tag is written only by a full change; with ``keep_body``, as the engine
    takes, the stored tag stays.)"""
    return MessageRow(
        monoton=row.monoton,
        message=row.message,
        version=row.version + 1,
        delivery_count=row.delivery_count + 1,
        acked=False,
        next_visible_on=now + lease_ms,
        tag=new_token(),
        created_at=row.created_at,
        updated_at=now,
        change=new_token(),
        attributes=row.attributes,
        first_delivered_at=row.first_delivered_at if row.first_delivered_at else now,
    )
