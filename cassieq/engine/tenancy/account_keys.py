"""Account keys sealed before the store sees them and opened after it answers.

The store keeps only ciphertext (``auth/keyring.py``); the engine's callers only
plaintext. The key-encryption key is CASSIEQ_KEY_ENCRYPTION_KEY when given, else the
keyspace's own random one (made once, first server wins). A plaintext key found in a row
(written before keys were encrypted) is used and re-stored sealed, by a compare-and-set on
the plaintext, so a key deleted meanwhile is never brought back.
"""

from __future__ import annotations

import asyncio

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
        self, ctx: EngineContext, secrets: KeyspaceSecrets, key_encryption_key: bytes | None
    ) -> None:
        self._ctx = ctx
        self._secrets = secrets
        self._cipher = None if key_encryption_key is None else KeyCipher(key_encryption_key)
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
            except UndecryptableKey as exc:
                self._ctx.log.error(
                    "account_key_undecryptable", account=stored.name, key_name=name, why=str(exc)
                )
        # Plaintext keys are re-stored sealed side by side, not one LWT after another.
        await asyncio.gather(*(self._migrate(cipher, stored.name, n, v) for n, v in plain.items()))
        return Account(name=stored.name, keys=keys, created_at=stored.created_at)

    async def _migrate(self, cipher: KeyCipher, account: str, name: str, plain: str) -> None:
        sealed = cipher.seal(account, name, plain)
        try:
            replaced = await self._ctx.store.replace_key(account, name, plain, sealed)
        except StoreError as exc:
            # The key still works from this read; the next read tries again.
            self._ctx.log.warning(
                "account_key_encrypt_deferred", account=account, key_name=name, why=str(exc)
            )
            return
        if replaced:
            self._ctx.log.info("account_key_encrypted_at_rest", account=account, key_name=name)
