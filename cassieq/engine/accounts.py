"""Accounts and their keys."""

from __future__ import annotations

import base64
import secrets

from cassieq.engine.context import EngineContext
from cassieq.engine.errors import (
    AccountExists,
    AccountNotFound,
    InvalidArgument,
    KeyExists,
    KeyNotFound,
)
from cassieq.engine.recent import Recent
from cassieq.model import Account, name_problem

DEFAULT_KEY_NAMES = ("primary", "secondary")


def new_key() -> str:
    """64 random bytes, base64url without padding (wire contract)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(64)).rstrip(b"=").decode()


class Accounts:
    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx
        self._cache: Recent[str, Account] = Recent(
            ctx, ctx.tuning.account_cache_ms, max_entries=10_000
        )

    async def get_for_auth(self, name: str) -> Account:
        """The account for checking credentials, trusted for ``account_cache_ms``: every
        request would otherwise read it. Changes made through this server apply at once;
        a key deleted through another server stops working here within that time."""
        return await self._cache.get_or_load(name, lambda: self.get(name))

    async def create(self, name: str, keys: dict[str, str] | None = None) -> Account:
        if problem := name_problem("accountName", name):
            raise InvalidArgument(problem)
        account = Account(
            name=name,
            keys=keys or {k: new_key() for k in DEFAULT_KEY_NAMES},
            created_at=self._ctx.clock.now(),
        )
        if not await self._ctx.store.insert_account(account):
            raise AccountExists(f"account {name!r} already exists")
        self._ctx.log.info("account_created", account=name)
        return account

    async def get(self, name: str) -> Account:
        account = await self._ctx.store.read_account(name)
        if account is None:
            raise AccountNotFound(f"account {name!r} not found")
        return account

    async def list(self) -> list[Account]:
        return await self._ctx.store.list_accounts()

    async def delete(self, name: str) -> None:
        self._cache.drop(name)
        await self._ctx.store.delete_account(name)
        self._ctx.log.info("account_deleted", account=name)

    async def add_key(self, account: str, key_name: str) -> str:
        if problem := name_problem("keyName", key_name):
            raise InvalidArgument(problem)
        await self.get(account)
        key = new_key()
        self._cache.drop(account)
        if not await self._ctx.store.add_key(account, key_name, key):
            raise KeyExists(f"account {account!r} already has a key named {key_name!r}")
        self._ctx.log.info("key_added", account=account, key_name=key_name)
        return key

    async def delete_key(self, account: str, key_name: str) -> None:
        current = await self.get(account)
        if key_name not in current.keys:
            raise KeyNotFound(f"account {account!r} has no key named {key_name!r}")
        self._cache.drop(account)
        await self._ctx.store.remove_key(account, key_name)
        self._ctx.log.info("key_deleted", account=account, key_name=key_name)
