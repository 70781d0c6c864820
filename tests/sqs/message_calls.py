"""SqsCall built by hand against a QueueEngine (both stores), for the message actions'
tests below the HTTP route."""

from __future__ import annotations

from typing import Any

from cassieq.api.sqs.actions.messages import ACTIONS
from cassieq.api.sqs.context import SqsCall
from cassieq.auth.receipt_keys import ReceiptSecrets, ReceiptSigner
from cassieq.engine import QueueEngine

BASE = "http://localhost:8080"


class Caller:
    def __init__(self, engine: QueueEngine, account: str) -> None:
        self.engine = engine
        self.account = account

        async def load() -> ReceiptSecrets:
            return ReceiptSecrets("a-test-receipt-secret")

        self.receipts = ReceiptSigner(load, engine.ctx.clock.now)

    def url(self, queue: str) -> str:
        return f"{BASE}/{self.account}/{queue}"

    async def __call__(self, action: str, **params: Any) -> dict[str, Any]:
        call = SqsCall(
            engine=self.engine,
            account=self.account,
            key_name="primary",
            action=action,
            params=params,
            base_url=BASE,
            region="us-east-1",
            protocol="json",
            receipts=self.receipts,
        )
        return await ACTIONS[action](call)
