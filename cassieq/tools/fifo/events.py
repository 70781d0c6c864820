"""What a FIFO run records: every send attempt, and every delivery with what became of it.

All times are the workload's own ``time.monotonic()`` seconds (one process, one clock). A
request's effect happened somewhere between the moment it was sent and the moment its answer
came, so each event keeps both ends: the checker only calls something a violation when the
two ends prove it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

# What became of a delivery's lease: acked (the delete answered success), ack refused (the
# delete answered a failure, e.g. the lease had run out), ack unanswered (no answer: it may
# or may not have been applied), left (not acked on purpose: the lease must run out and the
# message come back) or none (the run ended first).
Outcome = Literal["acked", "ack_refused", "ack_unanswered", "left", "none"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Send:
    group: str
    index: int  # the message's place in its group's send order (0, 1, ...)
    dedup_id: str
    sent_at: float
    answered_at: float | None  # None: no answer (connection refused or cut, timeout)
    message_id: str | None = None  # the MessageId the send answered
    sequence_number: str | None = None
    # A repeat with the same MessageDeduplicationId: on purpose (--retry-fraction) or after
    # an attempt that got no answer or an error.
    retried: bool = False
    error: str | None = None  # the error code or exception of a failed attempt


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    consumer: int
    call: int  # the receive call that delivered it (a batch holds several deliveries)
    position: int  # its place in that call's answer
    message_id: str
    group: str | None  # the MessageGroupId attribute, as received
    sequence_number: str | None  # the SequenceNumber attribute, as received
    body_group: str  # the group and index the body says it was sent with
    index: int
    dedup_id: str
    received_at: float  # the receive request was sent
    answered_at: float  # its answer came
    lease_end: float  # received_at + the visibility timeout: the earliest the lease can end
    outcome: Outcome = "none"
    ack_sent_at: float | None = None
    ack_answered_at: float | None = None
    receive_count: int | None = None  # ApproximateReceiveCount, as received


@dataclass(slots=True)
class EventLog:
    sends: list[Send] = field(default_factory=list)
    deliveries: list[Delivery] = field(default_factory=list)


def message_body(group: str, index: int, dedup_id: str) -> str:
    """The body every message carries: a delivery says what it is whatever its attributes say."""
    return json.dumps({"g": group, "i": index, "d": dedup_id}, separators=(",", ":"))


def parse_body(body: str) -> tuple[str, int, str] | None:
    try:
        value = json.loads(body)
        return str(value["g"]), int(value["i"]), str(value["d"])
    except (ValueError, KeyError, TypeError):
        return None


def write_jsonl(log: EventLog, path: Path) -> None:
    """One event a line: ``{"kind": "send", ...}`` or ``{"kind": "delivery", ...}``."""
    with path.open("w") as out:
        for kind, events in (("send", log.sends), ("delivery", log.deliveries)):
            for event in events:
                out.write(json.dumps({"kind": kind, **asdict(event)}) + "\n")


def read_jsonl(path: Path) -> EventLog:
    return from_records(json.loads(line) for line in path.read_text().splitlines() if line)


def from_records(records: Iterable[dict[str, Any]]) -> EventLog:
    log = EventLog()
    for record in records:
        kind = record.pop("kind", None)
        if kind == "send":
            log.sends.append(Send(**record))
        elif kind == "delivery":
            log.deliveries.append(Delivery(**record))
        else:
            raise ValueError(f"an event of unknown kind {kind!r}")
    return log


def by_group(deliveries: Iterable[Delivery]) -> Iterator[tuple[str, list[Delivery]]]:
    """Deliveries per group (the group the body names: a wrong attribute is judged apart)."""
    groups: dict[str, list[Delivery]] = {}
    for d in deliveries:
        groups.setdefault(d.body_group, []).append(d)
    yield from sorted(groups.items())
