"""Unique tokens for message tags and change ids, cheap enough for every write.

``secrets`` reads the kernel's random source on every call, which costs tens of
microseconds here and showed up as a top item of the engine's profile. These tokens need
to be unique, not secret: a tag travels inside a pop receipt that the server signs, and a
change id only tells apart the writes of a lightweight transaction. So a per-process
generator seeded from the kernel (and re-seeded in a forked child) makes them.
"""

from __future__ import annotations

import base64
import os
import random

_rng = random.Random(os.urandom(32))


def _reseed() -> None:
    _rng.seed(os.urandom(32))


os.register_at_fork(after_in_child=_reseed)


def new_token() -> str:
    """96 random bits, URL-safe base64 (16 characters)."""
    return base64.urlsafe_b64encode(_rng.getrandbits(96).to_bytes(12, "big")).decode()
