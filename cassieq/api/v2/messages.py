"""v2 message routes: batch send, receive (long polling), batch ack, batch visibility."""

from __future__ import annotations

from typing import Any

MESSAGE_ROUTES: list[Any] = []
