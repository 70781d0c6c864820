"""Secrets shared by every server of a keyspace, made at random by the first that needs one.

The receipt signing secret and the key-encryption key, when the operator gives none, live
in the keyspace (the ``secrets`` table): the first server to need one writes a random value
with a compare-and-set that only creates (first writer wins) and every server, losers
included, then uses the stored one. Nothing here is derived from another secret, so no
receipt or ciphertext tells anything about the operator token.
"""

from __future__ import annotations

import secrets

from cassieq.auth.b64url import b64url_decode, b64url_encode
from cassieq.engine.context import EngineContext
from cassieq.model import KeyspaceSecret
from cassieq.store.base import StoreError

# Row names in the secrets table (not secrets themselves).
RECEIPT_SECRET = "receipt"  # noqa: S105
KEY_ENCRYPTION_SECRET = "key-encryption"  # noqa: S105
CONSOLE_SESSION_SECRET = "console-session"  # noqa: S105
SECRET_BYTES = 32
# A create that lost finds the winner's row; only a row deleted in between needs another
# round, so a few are plenty.
_CREATE_ROUNDS = 3


def new_secret_value() -> str:
    return b64url_encode(secrets.token_bytes(SECRET_BYTES))


def secret_bytes(value: str) -> bytes:
    return b64url_decode(value)


class KeyspaceSecrets:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx

    async def get_or_create(self, name: str) -> KeyspaceSecret:
        """The keyspace's secret ``name``, created now if there is none yet."""
        store = self._ctx.store
        for _ in range(_CREATE_ROUNDS):
            found = await store.read_secret(name)
            if found is not None:
                return found
            mine = KeyspaceSecret(
                name=name, value=new_secret_value(), created_at=self._ctx.clock.now()
            )
            if await store.insert_secret(mine):
                # The name only: a secret's value is never logged.
                self._ctx.log.info("keyspace_secret_created", secret=name)
                return mine
            # Another server created it first: read and use theirs.
        raise StoreError(f"the keyspace secret {name!r} could not be created nor read")

    async def rotate(self, name: str, grace_ms: int) -> KeyspaceSecret:
        """Replace the secret with a new random one; the replaced one stays accepted for
        ``grace_ms`` (a rotation within that window drops the one before it)."""
        if grace_ms < 0:
            raise ValueError("the grace period cannot be negative")
        for _ in range(self._ctx.tuning.max_cas_attempts):
            current = await self.get_or_create(name)
            rotated = KeyspaceSecret(
                name=name,
                value=new_secret_value(),
                version=current.version + 1,
                previous=current.value,
                previous_until=self._ctx.clock.now() + grace_ms,
                created_at=current.created_at,
            )
            if await self._ctx.store.replace_secret(rotated, current.version):
                self._ctx.log.info(
                    "keyspace_secret_rotated",
                    secret=name,
                    version=rotated.version,
                    previous_until=rotated.previous_until,
                )
                return rotated
        raise StoreError(f"the keyspace secret {name!r} kept changing while it was rotated")
