"""The store's tenancy rows: accounts and their keys, keyspace secrets, the queue directory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cassieq.model import (
    Account,
    KeyspaceSecret,
    QueueDefinition,
)
from cassieq.store.cassandra.execution import (
    APPLIED,
    CONTENDED,
    LIST_PAGE_ROWS,
    REJECTED,
    CassandraBase,
)
from cassieq.store.cassandra.lwt import (
    Outcome,
    Resolver,
)
from cassieq.store.cassandra.rows import (
    account_of,
    queue_of,
    queue_params,
    queue_replace_params,
    secret_of,
)


class TenancyRows(CassandraBase):
    # ----------------------------------------------------------------- accounts

    async def insert_account(self, account: Account) -> bool:
        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.account_read, (account.name,))
            if not rows:
                return CONTENDED
            # Keys are 64 random bytes each: equal keys mean this very insert.
            return APPLIED if dict(rows[0].keys or {}) == account.keys else REJECTED

        applied, _ = await self._lwt(
            "insert_account",
            self._q.account_insert,
            (account.name, account.keys, account.created_at),
            resolve,
        )
        return applied

    async def read_account(self, name: str) -> Account | None:
        rows = await self._run(self._q.account_read, (name,))
        return account_of(rows[0]) if rows else None

    async def list_accounts(self) -> list[Account]:
        rows = await self._run(self._q.account_list, (), page_rows=LIST_PAGE_ROWS)
        return sorted((account_of(r) for r in rows), key=lambda a: a.name)

    async def delete_account(self, name: str, created_at: int) -> None:
        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.account_read, (name,))
            if not rows:
                return APPLIED  # gone: by this delete or another, the account is deleted
            # Still that account: not applied, its condition holding. Another one: a later
            # account of the name, left alone.
            return CONTENDED if account_of(rows[0]).created_at == created_at else REJECTED

        await self._lwt("delete_account", self._q.account_delete, (name, created_at), resolve)

    async def mark_account_deleting(self, name: str, created_at: int, now: int) -> None:
        await self._run(self._q.account_deletion_mark, (name, created_at, now))

    async def read_account_deletion(self, name: str) -> tuple[int, int] | None:
        rows = await self._run(self._q.account_deletion_read, (name,))
        if not rows:
            return None
        return int(rows[0].account_created_at), int(rows[0].started_at or 0)

    async def unmark_account_deleting(self, name: str) -> None:
        await self._run(self._q.account_deletion_unmark, (name,))

    async def add_key(self, account: str, key_name: str, key: str) -> bool:
        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.account_read, (account,))
            if not rows or rows[0].created_at is None:
                return REJECTED  # no such account
            keys = rows[0].keys or {}
            if keys.get(key_name) == key:
                return APPLIED
            return REJECTED if key_name in keys else CONTENDED

        applied, _ = await self._lwt(
            "add_key", self._q.key_add, (key_name, key, account, key_name), resolve
        )
        return applied

    async def remove_key(self, account: str, key_name: str) -> None:
        await self._run(self._q.key_remove, (key_name, account))

    async def replace_key(self, account: str, key_name: str, expected: str, new: str) -> bool:
        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.account_read, (account,))
            stored = (rows[0].keys or {}).get(key_name) if rows else None
            # A new value is fresh ciphertext (a random nonce): equal means ours.
            if stored == new:
                return APPLIED
            return CONTENDED if stored == expected else REJECTED

        params = (key_name, new, account, key_name, expected)
        applied, _ = await self._lwt("replace_key", self._q.key_replace, params, resolve)
        return applied

    # ----------------------------------------------------------------- secrets

    async def read_secret(self, name: str) -> KeyspaceSecret | None:
        rows = await self._run(self._q.secret_read, (name,))
        return secret_of(rows[0]) if rows and rows[0].value is not None else None

    async def insert_secret(self, secret: KeyspaceSecret) -> bool:
        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.secret_read, (secret.name,))
            if not rows or rows[0].value is None:
                return CONTENDED
            # A value is random bytes: the stored one is ours only if this insert applied.
            return APPLIED if rows[0].value == secret.value else REJECTED

        params = (
            secret.name, secret.value, secret.version, secret.previous, secret.previous_until,
            secret.created_at,
        )  # fmt: skip
        applied, _ = await self._lwt("insert_secret", self._q.secret_insert, params, resolve)
        return applied

    async def replace_secret(self, secret: KeyspaceSecret, expected_version: int) -> bool:
        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.secret_read, (secret.name,))
            row = rows[0] if rows else None
            if row is not None and row.value == secret.value:
                return APPLIED
            holds = row is not None and row.version == expected_version
            return CONTENDED if holds else REJECTED

        params = (
            secret.value, secret.version, secret.previous, secret.previous_until, secret.name,
            expected_version,
        )  # fmt: skip
        applied, _ = await self._lwt("replace_secret", self._q.secret_replace, params, resolve)
        return applied

    # ----------------------------------------------------------------- queues

    async def insert_queue(self, queue: QueueDefinition) -> QueueDefinition | None:
        resolve = self._queue_resolver(queue, lambda row: row is None)
        applied, row = await self._lwt(
            "insert_queue", self._q.queue_insert, queue_params(queue), resolve
        )
        if applied:
            return None
        if row is not None and row.version is not None:
            return queue_of(row)
        return await self.read_queue(queue.account, queue.name)

    async def replace_queue(
        self, queue: QueueDefinition, expected_version: int, expected_rev: int | None = None
    ) -> bool:
        def holds(row: Any) -> bool:
            if row is None or int(row.version) != expected_version:
                return False
            return expected_rev is None or int(row.options_rev or 0) == expected_rev

        resolve = self._queue_resolver(queue, holds)
        p = queue_replace_params(queue)
        # UPDATE order: every column but the key, then the key, then the condition.
        params: tuple[Any, ...] = (*p[2:], p[0], p[1], expected_version)
        stmt = self._q.queue_replace
        if expected_rev == 0:
            stmt = self._q.queue_replace_rev_first
        elif expected_rev is not None:
            stmt, params = self._q.queue_replace_rev, (*params, expected_rev)
        applied, _ = await self._lwt("replace_queue", stmt, params, resolve)
        return applied

    def _queue_resolver(self, queue: QueueDefinition, holds: Callable[[Any], bool]) -> Resolver:
        """Applied if the queue row is stored as ours (a queue row carries no change
        token: its whole content, creation time included, tells ours from another's)."""

        async def resolve() -> Outcome:
            rows = await self._read_serial(self._q.queue_read, (queue.account, queue.name))
            row = rows[0] if rows else None
            if row is not None and queue_of(row) == queue:
                return APPLIED
            return CONTENDED if holds(row) else REJECTED

        return resolve

    async def read_queue(self, account: str, name: str) -> QueueDefinition | None:
        rows = await self._run(self._q.queue_read, (account, name))
        return queue_of(rows[0]) if rows else None

    async def list_queues(self, account: str) -> list[QueueDefinition]:
        rows = await self._run(self._q.queue_list, (account,), page_rows=LIST_PAGE_ROWS)
        return [queue_of(r) for r in rows]

    async def list_queues_page(
        self, account: str, after: str | None, limit: int
    ) -> list[QueueDefinition]:
        if after is None:
            rows = await self._run(self._q.queue_page_first, (account, limit))
        else:
            rows = await self._run(self._q.queue_page_after, (account, after, limit))
        return [queue_of(r) for r in rows]
