"""Unique, unpredictable tokens for message tags, change ids and task ids, cheap enough for
every write.

A tag is shown to its tenant (``messageTag``, SQS's MessageId is derived from it) and a
change id decides whose lightweight transaction applied when an answer was lost, so neither
may be predictable from the ones a tenant sees: they come from the kernel's CSPRNG, not from
a Mersenne Twister (whose whole state 208 tags of 96 bits would have revealed). Reading the
kernel's random source per token cost tens of microseconds and showed in the engine's
profile, so it is read in blocks: one ``os.urandom`` call per TOKENS_PER_READ tokens. A
forked child drops the block it inherited (parent and child would hand out the same tokens).
"""

from __future__ import annotations

import base64
import os
import threading

TOKEN_BYTES = 12  # 96 bits: 16 characters of URL-safe base64
TOKENS_PER_READ = 512

_lock = threading.Lock()
_block = b""
_at = 0


def _drop_block() -> None:
    global _block, _at
    _block, _at = b"", 0


os.register_at_fork(after_in_child=_drop_block)


def new_token() -> str:
    """96 bits from the kernel's CSPRNG, URL-safe base64 (16 characters)."""
    global _block, _at
    with _lock:
        if _at + TOKEN_BYTES > len(_block):
            _block, _at = os.urandom(TOKEN_BYTES * TOKENS_PER_READ), 0
        raw = _block[_at : _at + TOKEN_BYTES]
        _at += TOKEN_BYTES
    return base64.urlsafe_b64encode(raw).decode()
