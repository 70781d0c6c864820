"""Accounts and their keys."""

from __future__ import annotations

import math
import secrets
from collections.abc import Sequence

import msgspec

from cassieq.auth.b64url import b64url_encode
from cassieq.engine.context import EngineContext
from cassieq.engine.errors import (
    AccountExists,
    AccountNotFound,
    InvalidArgument,
    KeyExists,
    KeyNotFound,
)
from cassieq.engine.recent import Recent
from cassieq.engine.tenancy.account_keys import AccountKeys
from cassieq.engine.tenancy.keyspace_secrets import KeyspaceSecrets
from cassieq.engine.tenancy.queues import QueueDirectory
from cassieq.model import Account, name_problem
from cassieq.singleflight import SingleFlight

DEFAULT_KEY_NAMES = ("primary", "secondary")


def new_key() -> str:
    """64 random bytes, base64url without padding (wire contract)."""
    return b64url_encode(secrets.token_bytes(64))


class Accounts:
    def __init__(
        self,
        ctx: EngineContext,
        queues: QueueDirectory,
        secrets: KeyspaceSecrets,
        key_encryption_key: bytes | None = None,
        previous_key_encryption_keys: Sequence[bytes] = (),
    ) -> None:
        self._ctx = ctx
        self._queues = queues
        self._keys = AccountKeys(ctx, secrets, key_encryption_key, previous_key_encryption_keys)
        ttl, entries = ctx.tuning.account_cache_ms, ctx.tuning.account_cache_entries
        self._cache: Recent[str, Account] = Recent(ctx, ttl, max_entries=entries)
        # Names found missing, trusted as long, bounded apart: names sprayed at random
        # neither grow memory nor push the real accounts out.
        self._unknown: Recent[str, bool] = Recent(ctx, ttl, max_entries=entries)
        self._creates = 0  # accounts created through this server (see get_for_auth)
        self._auth_loads: SingleFlight[tuple[str, int], Account] = SingleFlight()

    async def get_for_auth(self, name: str) -> Account:
        """The account for checking credentials, trusted for ``account_cache_ms``: every
        request would otherwise read it. Changes made through this server apply at once;
        a key deleted through another server stops working here within that time.

        A name found missing is remembered as long: a second lookup costs the same whether
        the account exists or not, so answer times do not tell which names exist. An
        account created through this server is known here at once; one created through
        another server, within that time."""
        if name_problem("accountName", name):
            # No account can have this name: nothing to read, nothing to remember.
            raise AccountNotFound(f"account {name!r} not found")
        if self._unknown.get(name):
            raise AccountNotFound(f"account {name!r} not found")
        known = self._cache.get(name)
        if known is not None:
            return known
        # Requests that miss together share one read (and one decryption). A lookup that
        # starts after a create through this server does not join a read from before it.
        creates = self._creates
        return await self._auth_loads.run((name, creates), lambda: self._load_for_auth(name))

    async def _load_for_auth(self, name: str) -> Account:
        creates = self._creates
        try:
            account = await self.get(name)
        except AccountNotFound:
            # Not when an account was created here while this read ran: it may be this one.
            if creates == self._creates:
                self._unknown.put(name, True)
            raise
        self._cache.put(name, account)
        return account

    async def create(self, name: str, keys: dict[str, str] | None = None) -> Account:
        if problem := name_problem("accountName", name):
            raise InvalidArgument(problem)
        account = Account(
            name=name,
            keys=keys or {k: new_key() for k in DEFAULT_KEY_NAMES},
            created_at=self._ctx.clock.now(),
        )
        marked = await self._refuse_if_just_deleted(name)
        sealed = await self._keys.seal(name, account.keys)
        stored = msgspec.structs.replace(account, keys=sealed)
        if not await self._ctx.store.insert_account(stored):
            raise AccountExists(f"account {name!r} already exists")
        self._creates += 1
        self._unknown.drop(name)
        if marked:
            # The old account's mark has served its purpose (a stale one would be harmless:
            # it names the old incarnation).
            await self._ctx.store.unmark_account_deleting(name)
        self._ctx.log.info("account_created", account=name)
        return account  # the plaintext keys, for the operator who created it

    async def _refuse_if_just_deleted(self, name: str) -> bool:
        """Refuse a name deleted moments ago; whether a deletion mark of it is there."""
        mark = await self._ctx.store.read_account_deletion(name)
        if mark is None:
            return False
        wait_ms = mark[1] + self.recreate_after_ms - self._ctx.clock.now()
        if wait_ms > 0:
            raise AccountExists(
                f"account {name!r} was deleted moments ago; it can be created again in "
                f"{math.ceil(wait_ms / 1000)} s"
            )
        return True

    @property
    def recreate_after_ms(self) -> int:
        """How long a deleted account's name stays refused: past every server's cache of it."""
        return 2 * self._ctx.tuning.account_cache_ms

    async def get(self, name: str) -> Account:
        account = await self._ctx.store.read_account(name)
        if account is None:
            raise AccountNotFound(f"account {name!r} not found")
        return await self._keys.open(account)

    async def list(self) -> list[Account]:
        return [await self._keys.open(a) for a in await self._ctx.store.list_accounts()]

    async def reseal_all(self) -> tuple[int, int]:
        """Open every account's keys, which re-seals those under an earlier key-encryption
        key (or in plaintext) under the current one; (accounts read, keys that open under
        no key this server has: they authenticate nothing, and are logged)."""
        stored = await self._ctx.store.list_accounts()
        unreadable = 0
        for account in stored:
            opened = await self._keys.open(account)
            unreadable += len(account.keys) - len(opened.keys)
        return len(stored), unreadable

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
        4. write the mark again, with the time the deletion ended: ``create`` refuses the
           name for ``recreate_after_ms`` more, so that no other server, trusting its
           cached account for ``account_cache_ms``, takes the old keys for the new account.
        A crash half way leaves the account (or its mark) in place: deleting it again
        finishes the work (each step is idempotent; step 2 also runs for an account that
        is already gone, sweeping what a crash left behind).
        """
        store, now = self._ctx.store, self._ctx.clock.now()
        account = await store.read_account(name)
        if account is not None:
            await store.mark_account_deleting(name, account.created_at, now)
        queues = await self._queues.delete_all(name)
        if account is not None:
            await store.delete_account(name, account.created_at)
        self._cache.drop(name)
        ended = self._ctx.clock.now()
        await store.mark_account_deleting(name, account.created_at if account else 0, ended)
        self._ctx.log.info("account_deleted", account=name, queues=queues)

    async def add_key(self, account: str, key_name: str) -> str:
        if problem := name_problem("keyName", key_name):
            raise InvalidArgument(problem)
        await self.get(account)
        key = new_key()
        sealed = (await self._keys.seal(account, {key_name: key}))[key_name]
        self._cache.drop(account)
        if not await self._ctx.store.add_key(account, key_name, sealed):
            raise KeyExists(f"account {account!r} already has a key named {key_name!r}")
        self._ctx.log.info("key_added", account=account, key_name=key_name)
        return key

    async def delete_key(self, account: str, key_name: str) -> None:
        # The stored row, not the opened one: a key that no longer decrypts can be deleted.
        current = await self._ctx.store.read_account(account)
        if current is None:
            raise AccountNotFound(f"account {account!r} not found")
        if key_name not in current.keys:
            raise KeyNotFound(f"account {account!r} has no key named {key_name!r}")
        self._cache.drop(account)
        await self._ctx.store.remove_key(account, key_name)
        self._ctx.log.info("key_deleted", account=account, key_name=key_name)
