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
from cassieq.engine.queues import QueueDirectory
from cassieq.engine.recent import Recent
from cassieq.model import Account, name_problem

DEFAULT_KEY_NAMES = ("primary", "secondary")


def new_key() -> str:
    """64 random bytes, base64url without padding (wire contract)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(64)).rstrip(b"=").decode()


class Accounts:
    def __init__(self, ctx: EngineContext, queues: QueueDirectory) -> None:
        self._ctx = ctx
        self._queues = queues
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
        """Delete the account: its queues (their rows by deletion jobs, as a queue DELETE
        does; their statistics snapshots with them), then the account row and its keys.

        A new account of the same name starts empty. The order makes it so:
        1. mark the account as being deleted: a queue created in it from now on deletes
           itself (``QueueDirectory.create`` looks after its insert);
        2. delete every queue: the version bump hides its messages at once (a re-created
           queue of that name gets a new version), the deletion job removes the rows;
        3. delete the account row, only the account marked in 1: while it exists its name
           cannot be created again, so no new account can meet step 2 half done;
        4. remove the mark.
        A crash half way leaves the account (or its mark) in place: deleting it again
        finishes the work (each step is idempotent; step 2 also runs for an account that
        is already gone, sweeping what a crash left behind).
        Other servers trust their cached account (keys) and queue definitions for
        ``account_cache_ms`` / ``queue_cache_ms`` more at most.
        """
        store, now = self._ctx.store, self._ctx.clock.now()
        account = await store.read_account(name)
        if account is not None:
            await store.mark_account_deleting(name, account.created_at, now)
        queues = await self._queues.delete_all(name)
        self._cache.drop(name)
        if account is not None:
            await store.delete_account(name, account.created_at)
        self._cache.drop(name)
        await store.unmark_account_deleting(name)
        self._ctx.log.info("account_deleted", account=name, queues=queues)

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
