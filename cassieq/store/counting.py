"""A Store wrapper that counts calls per primitive (tests and the benchmark)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

# Primitives that are a lightweight transaction in the Cassandra store.
LWT_PRIMITIVES = frozenset(
    {
        "insert_account",
        "delete_account",
        "add_key",
        "replace_key",
        "insert_secret",
        "replace_secret",
        "insert_queue",
        "replace_queue",
        "cas_monoton",
        "insert_messages",
        "cas_message",
        "ack_message",
        "seal_bucket",
        "finalize_bucket",
        "cas_pointer",
        "cas_invisibility",
        "acquire_lease",
        "cas_messages",  # one call may send several rounds (see batch_lwt)
        "ack_messages",
    }
)

# Those of them that run on a bucket partition of the messages table (the rest are on the
# monoton, pointer, invisibility, queue, account and lease rows).
BUCKET_PARTITION_LWTS = frozenset(
    {
        "insert_messages",
        "cas_message",
        "ack_message",
        "seal_bucket",
        "finalize_bucket",
        "cas_messages",
        "ack_messages",
    }
)


class CountingStore:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.inner, name)
        if not callable(target):
            return target

        def counted(*args: Any, **kwargs: Any) -> Awaitable[Any]:
            self.calls[name] += 1
            fn: Callable[..., Awaitable[Any]] = target
            return fn(*args, **kwargs)

        return counted

    def reset(self) -> None:
        self.calls.clear()

    @property
    def lwts(self) -> int:
        return sum(n for name, n in self.calls.items() if name in LWT_PRIMITIVES)
