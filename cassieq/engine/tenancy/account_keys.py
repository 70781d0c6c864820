"""Account keys sealed before the store sees them and opened after it answers.

The store keeps only ciphertext (``auth/keyring.py``); the engine's callers only
plaintext. The key-encryption key is CASSIEQ_KEY_ENCRYPTION_KEY when given, else the
keyspace's own random one (made once, first server wins). A plaintext key found in a row
(written before keys were encrypted) is used and re-stored sealed, by a compare-and-set on
the plaintext, so a key deleted meanwhile is never brought back.

Rotation: a key sealed under an earlier key-encryption key (one of
CASSIEQ_KEY_ENCRYPTION_KEY_PREVIOUS, or the keyspace's own when an operator's key is given
now) opens with it and is re-stored under the current one the same way, by a
compare-and-set on what was read. So moving the keys out of the keyspace's reach is setting
CASSIEQ_KEY_ENCRYPTION_KEY on every server (`cassieq secrets reseal-keys` then re-seals every
account at once); rotating it is the same with the old one kept as the previous one until
the reseal is done.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from cassieq.auth.keyring import KeyCipher, UndecryptableKey, is_sealed
from cassieq.engine.context import EngineContext
from cassieq.engine.tenancy.keyspace_secrets import (
    KEY_ENCRYPTION_SECRET,
    KeyspaceSecrets,
    secret_bytes,
)
from cassieq.model import Account
from cassieq.singleflight import SingleFlight
from cassieq.store.base import StoreError


class AccountKeys:
    def __init__(
        self,
        ctx: EngineContext,
        secrets: KeyspaceSecrets,
        key_encryption_key: bytes | None,
        previous_key_encryption_keys: Sequence[bytes] = (),
    ) -> None:
        self._ctx = ctx
        self._secrets = secrets
        self._cipher = None if key_encryption_key is None else KeyCipher(key_encryption_key)
        self._previous = {c.kek_id: c for c in map(KeyCipher, previous_key_encryption_keys)}
        # With an operator's key, the keyspace's own (if one was ever made) is an earlier one.
        self._look_in_keyspace = key_encryption_key is not None
        self._loading: SingleFlight[str, KeyCipher] = SingleFlight()

    async def cipher(self) -> KeyCipher:
        if self._cipher is None:
            self._cipher = await self._loading.run("kek", self._load_cipher)
        return self._cipher

    async def _load_cipher(self) -> KeyCipher:
        secret = await self._secrets.get_or_create(KEY_ENCRYPTION_SECRET)
        return KeyCipher(secret_bytes(secret.value))

    async def seal(self, account: str, keys: dict[str, str]) -> dict[str, str]:
        cipher = await self.cipher()
        return {name: cipher.seal(account, name, key) for name, key in keys.items()}

    async def open(self, stored: Account) -> Account:
        """The account with its keys in plaintext. A key that does not decrypt is left out
        (it authenticates nothing) and logged; a plaintext one is re-stored sealed."""
        cipher = await self.cipher()
        keys: dict[str, str] = {}
        plain: dict[str, str] = {}
        for name, value in stored.keys.items():
            if not is_sealed(value):
                keys[name] = plain[name] = value
                continue
            try:
                keys[name] = cipher.open(stored.name, name, value)
                continue
            except UndecryptableKey as exc:
                earlier = await self._earlier_cipher(value)
                if earlier is None:
                    self._ctx.log.error(
                        "account_key_undecryptable",
                        account=stored.name,
                        key_name=name,
                        why=str(exc),
                    )
                    continue
            # Sealed under an earlier key-encryption key: used, and re-sealed under this one.
            try:
                keys[name] = earlier.open(stored.name, name, value)
            except UndecryptableKey as exc:
                self._ctx.log.error(
                    "account_key_undecryptable", account=stored.name, key_name=name, why=str(exc)
                )
                continue
            plain[name] = keys[name]
        # Re-stored sealed side by side, not one LWT after another.
        await asyncio.gather(
            *(self._reseal(cipher, stored.name, n, stored.keys[n], v) for n, v in plain.items())
        )
        return Account(name=stored.name, keys=keys, created_at=stored.created_at)

    async def _earlier_cipher(self, stored: str) -> KeyCipher | None:
        """The earlier key-encryption key ``stored`` was sealed under, if this server has it."""
        kek_id = stored.split(":", 2)[1] if stored.count(":") >= 2 else ""
        if kek_id not in self._previous and self._look_in_keyspace:
            self._look_in_keyspace = False  # read once: it never changes once made
            own = await self._ctx.store.read_secret(KEY_ENCRYPTION_SECRET)
            if own is not None:
                keyspace_cipher = KeyCipher(secret_bytes(own.value))
                self._previous[keyspace_cipher.kek_id] = keyspace_cipher
        return self._previous.get(kek_id)

    async def _reseal(
        self, cipher: KeyCipher, account: str, name: str, stored: str, plain: str
    ) -> None:
        """Store ``plain`` sealed under ``cipher`` in place of ``stored`` (plaintext, or
        sealed under an earlier key), unless the row changed meanwhile."""
        sealed = cipher.seal(account, name, plain)
        try:
            replaced = await self._ctx.store.replace_key(account, name, stored, sealed)
        except StoreError as exc:
            # The key still works from this read; the next read tries again.
            self._ctx.log.warning(
                "account_key_encrypt_deferred", account=account, key_name=name, why=str(exc)
            )
            return
        if replaced:
            self._ctx.log.info(
                "account_key_encrypted_at_rest", account=account, key_name=name, kek=cipher.kek_id
            )
