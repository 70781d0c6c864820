"""A receipt that verifies under no known secret stays a client error (400) even when the
secrets cannot be read again to look for a newer one."""

from __future__ import annotations

import pytest

from cassieq.auth.receipt_keys import ReceiptSecrets, ReceiptSigner
from cassieq.auth.receipts import UnverifiedReceipt
from cassieq.model import PopReceipt
from cassieq.store.base import StoreUnavailable


async def test_a_forged_receipt_is_unverified_while_the_store_fails() -> None:
    now = [0]
    store_up = [True]

    async def load() -> ReceiptSecrets:
        if not store_up[0]:
            raise StoreUnavailable("no quorum")
        return ReceiptSecrets(current="s" * 40)

    signer = ReceiptSigner(load, lambda: now[0], refresh_ms=60_000, retry_ms=1_000)
    await signer.start()
    genuine = await signer.encode("acct", "q", PopReceipt(1, 5, 2, "tag"))
    store_up[0] = False
    now[0] = 2_000  # past the re-read limit: an unverified receipt makes it read again
    with pytest.raises(UnverifiedReceipt):
        await signer.decode("acct", "q", genuine[:-3] + "AAA")
    # A genuine receipt still decodes from the secrets already held.
    assert await signer.decode("acct", "q", genuine) == PopReceipt(1, 5, 2, "tag")
