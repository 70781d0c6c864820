"""base64url without padding: how keys, secrets, signatures and sealed keys are written."""

from __future__ import annotations

import base64


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    """Padding optional. binascii.Error (a ValueError) for text that is not base64url."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
