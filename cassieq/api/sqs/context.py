"""What an SQS action handler gets: the authenticated call, its parameters in the JSON
protocol's shape (a query-protocol request is converted to it by the codec)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from cassieq.auth.receipt_keys import ReceiptSigner
from cassieq.engine import QueueEngine

Protocol = Literal["json", "query"]


@dataclass(frozen=True)
class SqsCall:
    engine: QueueEngine
    account: str  # the authenticated account (from the access key id); never another's data
    key_name: str
    action: str
    # Member names as in the SQS API reference / botocore's model, e.g. {"QueueUrl": ..,
    # "Entries": [{"Id": .., "MessageBody": .., "MessageAttributes": {"n": {"DataType":
    # "String", "StringValue": "v"}}}]}. BinaryValue values are bytes (the codecs do base64).
    params: dict[str, Any]
    base_url: str  # scheme://host[:port] as the client addressed us (Host header)
    region: str  # from the SigV4 credential scope, for ARNs
    protocol: Protocol
    # The app's receipt signer (receipt handles as v1/v2 encode them); None in tests that
    # build a call without an app.
    receipts: ReceiptSigner | None = None


# The result in the JSON protocol's output shape (the codec turns it into XML for query).
Handler = Callable[[SqsCall], Awaitable[dict[str, Any]]]
