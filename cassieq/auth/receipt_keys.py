"""Which secrets sign and verify pop receipts right now, kept fresh on every server.

Receipts are signed with the current secret and verified with it or, for a while after a
rotation, the one it replaced. Every server re-reads the secrets now and then, and at once
(at most once a second) when a receipt verifies under none of them: another server may
have started signing with a newer one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog

from cassieq.auth.receipts import ReceiptCodec, UnverifiedReceipt
from cassieq.model import PopReceipt
from cassieq.singleflight import SingleFlight
from cassieq.store.base import StoreError

REFRESH_MS = 60_000
RETRY_MS = 1_000

_log = structlog.get_logger("cassieq.receipts")


@dataclass(frozen=True)
class ReceiptSecrets:
    current: str
    previous: str | None = None
    previous_until: int | None = None  # ms since the epoch; the previous is refused after


class ReceiptSigner:
    def __init__(
        self,
        load: Callable[[], Awaitable[ReceiptSecrets]],
        now: Callable[[], int],
        *,
        refresh_ms: int = REFRESH_MS,
        retry_ms: int = RETRY_MS,
    ) -> None:
        self._load = load
        self._now = now
        self._refresh_ms = refresh_ms
        self._retry_ms = retry_ms
        self._loading: SingleFlight[str, None] = SingleFlight()
        self._secrets: ReceiptSecrets | None = None
        self._loaded_at = 0
        self._current: ReceiptCodec | None = None  # verifies with the current secret only
        self._both: ReceiptCodec | None = None  # and with the previous one

    async def start(self) -> None:
        await self._reload()

    async def encode(self, account: str, queue: str, receipt: PopReceipt) -> str:
        codec = await self._codec()
        return codec.encode(account, queue, receipt)

    async def decode(self, account: str, queue: str, token: str) -> PopReceipt:
        codec = await self._codec()
        try:
            return codec.decode(account, queue, token)
        except UnverifiedReceipt as exc:
            # Rate-limited: forged receipts must not turn into a read of the store each.
            if self._now() - self._loaded_at < self._retry_ms:
                raise
            unverified = exc
        try:
            await self._reload()
        except StoreError:
            # The secrets could not be read again: the receipt is still one that verifies
            # under none we know (a 400), not a failure of the server.
            raise unverified from None
        return (await self._codec()).decode(account, queue, token)

    async def _codec(self) -> ReceiptCodec:
        now = self._now()
        if self._secrets is None:
            await self._reload()
        elif not 0 <= now - self._loaded_at < self._refresh_ms:
            try:
                await self._reload()
            except StoreError as exc:
                # The secrets read a minute ago are still good: a store that does not
                # answer now must not fail a get whose message is already taken.
                _log.warning("receipt_secrets_refresh_failed", why=str(exc))
                self._loaded_at = now - self._refresh_ms + self._retry_ms  # again in a second
        secrets = self._secrets
        assert secrets is not None and self._current is not None and self._both is not None
        until = secrets.previous_until
        in_window = secrets.previous is not None and (until is None or now < until)
        return self._both if in_window else self._current

    async def _reload(self) -> None:
        await self._loading.run("load", self._do_reload)

    async def _do_reload(self) -> None:
        loaded = await self._load()
        if loaded != self._secrets:
            self._current = ReceiptCodec(loaded.current)
            previous = [loaded.previous] if loaded.previous else []
            self._both = ReceiptCodec(loaded.current, previous)
            self._secrets = loaded
        self._loaded_at = self._now()
