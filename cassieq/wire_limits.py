"""What names and messages may be on the wire: name rules, message sizes, message ids and
peek cursors. Re-exported by ``cassieq.model`` (where every caller imports them from)."""

from __future__ import annotations

import re

MAX_NAME_LENGTH = 255
NAME_PATTERN = r"^[a-zA-Z0-9_.-]+$"
"""Account, queue and key names, as CassieQ accepts them (dots and a leading '_', '-' or '.'
included: clients name queues `orders.v1`), at most MAX_NAME_LENGTH characters.

':' is excluded on purpose: it separates the parts of a queue id.
"""
_NAME_RE = re.compile(NAME_PATTERN)

MAX_MESSAGE_BYTES = 256 * 1024
"""The largest payload a v1 put or update (CassieQ's wire, kept as it was) or the pipeline's
ingest accepts, in bytes of UTF-8."""

MAX_QUEUE_MESSAGE_BYTES = 1024 * 1024
"""The largest ``maxMessageBytes`` a queue can have, and its default: SQS's current limit
(1 MiB, botocore's model). A message that size is one row of 1 MiB, well inside Cassandra's
limits (a mutation up to half a commit log segment, 16 MiB by default); the store writes
larger sets in parts (store.batches.MAX_BATCH_BYTES)."""


PEEK_CURSOR_PATTERN = r"^[0-9]{1,18}$|^[0-9]{0,18}(\.[0-9]{0,18}){1,255}$"
"""A peek cursor (opaque to clients): a monoton; of a queue of many partitions, one per
partition joined by "." (an empty one: that partition from its start)."""


def message_id(partition: int, monoton: int) -> str:
    """A message's id on the wire (v2): its monoton, prefixed by its partition beyond the
    first (``3-1204``), so ids stay unique in a queue and a queue of one partition's are as
    they were before partitions."""
    return f"{partition}-{monoton}" if partition else str(monoton)


def utf8_len(text: str) -> int:
    """Bytes of ``text`` in UTF-8. ASCII text (``isascii`` is a flag lookup in CPython) is
    not encoded: this runs for every message of every batch the store writes."""
    return len(text) if text.isascii() else len(text.encode())


def message_bytes(body: str, attributes: dict[str, str]) -> int:
    """Bytes of UTF-8 a message counts against ``maxMessageBytes``: body, names, values."""
    return utf8_len(body) + sum(utf8_len(k) + utf8_len(v) for k, v in attributes.items())


def valid_name(name: str) -> bool:
    # fullmatch: with match, "$" would also accept a name ending in a newline.
    return len(name) <= MAX_NAME_LENGTH and bool(_NAME_RE.fullmatch(name))


def name_problem(label: str, name: str) -> str | None:
    """The contract's 422 message for an invalid name (None when it is valid)."""
    if not _NAME_RE.fullmatch(name):
        return f"{label} must match [a-zA-Z0-9_.-]+"
    if len(name) > MAX_NAME_LENGTH:
        return f"{label} must be at most {MAX_NAME_LENGTH} characters"
    return None
