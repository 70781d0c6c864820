"""The FIFO verdicts, drawn from a run's events alone (pure: no clock, no I/O).

A message is one MessageDeduplicationId (the workload gives every message its own). It is
*stored* when a send of it answered a MessageId, or when it was delivered. Per group:

- ORDER: a message is delivered only once every earlier message of its group (by send
  order) was acked, or comes before it in the same receive's answer. A delivery whose answer
  came before any ack of an earlier stored message was even sent breaks it. A redelivery of
  the same message after its lease ran out is fine; a later message delivered while an earlier
  one waits to come back is not. (Every INFLIGHT violation is an ORDER violation too: ORDER is
  the wider rule.)
- INFLIGHT: no delivery while an earlier message of the group is in flight. A delivery is
  surely in flight from its receive's answer until the first of its ack being sent and its
  lease's earliest end (the receive was sent, plus the visibility timeout); another receive
  sent and answered inside that window delivered the later message while it was.
- DOUBLE in lease: the same message delivered again inside such a window.
- DUP stored: a dedup id with two MessageIds (its sends answered different ids, or two ids
  were delivered under it).
- LOST: a stored message never acked (an ack that got no answer counts as acked, and is
  counted apart as unverified: it may have been applied).
- AFTER ACK: delivered by a receive sent after an ack of it answered success.
- ATTRIBUTES: MessageGroupId or SequenceNumber received other than sent, or sequence
  numbers that do not increase with a group's send order.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from cassieq.tools.fifo.events import Delivery, EventLog, Send

# The server's lease clock and the workload's monotonic clock drift apart by milliseconds
# over a lease: a delivery this close to a lease's end is not called a violation.
LEASE_SLACK_S = 0.05
SAMPLES = 5  # examples kept per violation kind

# The summary's violation counts, by the names the report prints.
VIOLATIONS = {
    "lost": "LOST",
    "double_in_lease": "DOUBLE-in-lease",
    "order_violations": "ORDER violations",
    "inflight_violations": "INFLIGHT violations",
    "dup_stored": "DUP stored",
    "delivered_after_ack": "delivered after ack",
    "attribute_mismatches": "attribute mismatches",
}
ACKED = ("acked", "ack_unanswered")  # outcomes after which the message may be gone


@dataclass(slots=True)
class GroupFigures:
    messages: int = 0  # stored
    deliveries: int = 0
    redeliveries: int = 0
    left: int = 0  # leases left to run out on purpose
    acked: int = 0  # messages acked
    lost: int = 0
    order_violations: int = 0
    inflight_violations: int = 0
    double_in_lease: int = 0
    dup_stored: int = 0
    delivered_after_ack: int = 0
    attribute_mismatches: int = 0


@dataclass(slots=True)
class Verdict:
    groups: dict[str, GroupFigures] = field(default_factory=dict)
    send_attempts: int = 0
    sends_unanswered: int = 0
    sends_failed: int = 0  # answered an error
    sends_retried: int = 0  # attempts that repeated a dedup id
    retries_same_id: int = 0  # of those answered, the ones that answered the first's id
    ack_refused: int = 0
    ack_unverified: int = 0  # messages whose only acks got no answer
    lost_never_delivered: int = 0
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def total(self, key: str) -> int:
        return sum(int(getattr(g, key)) for g in self.groups.values())

    def violations(self) -> dict[str, int]:
        return {key: self.total(key) for key in VIOLATIONS}

    @property
    def passed(self) -> bool:
        return not any(self.violations().values())

    def summary(self) -> dict[str, Any]:
        """The JSON summary: totals, every violation count, per-group figures, samples."""
        return {
            "passed": self.passed,
            **self.violations(),
            "groups": len(self.groups),
            "messages": self.total("messages"),
            "deliveries": self.total("deliveries"),
            "redeliveries": self.total("redeliveries"),
            "left_to_expire": self.total("left"),
            "acked": self.total("acked"),
            "lost_never_delivered": self.lost_never_delivered,
            "ack_refused": self.ack_refused,
            "ack_unverified": self.ack_unverified,
            "send_attempts": self.send_attempts,
            "sends_unanswered": self.sends_unanswered,
            "sends_failed": self.sends_failed,
            "sends_retried": self.sends_retried,
            "retries_same_id": self.retries_same_id,
            "per_group": {name: _as_dict(g) for name, g in self.groups.items()},
            "samples": self.samples,
        }

    def sample(self, kind: str, **facts: Any) -> None:
        kept = self.samples.setdefault(kind, [])
        if len(kept) < SAMPLES:
            kept.append(facts)


def _as_dict(g: GroupFigures) -> dict[str, int]:
    return {name: int(getattr(g, name)) for name in GroupFigures.__slots__}


@dataclass(slots=True)
class _Message:
    group: str
    index: int
    dedup_id: str
    answered_ids: set[str] = field(default_factory=set)
    answered_seqs: set[str] = field(default_factory=set)
    deliveries: list[Delivery] = field(default_factory=list)

    @property
    def first_ack_sent(self) -> float:
        """The earliest an ack of it may have been applied (inf: never acked)."""
        return min(
            (d.ack_sent_at or math.inf for d in self.deliveries if d.outcome in ACKED),
            default=math.inf,
        )

    @property
    def first_ack_answered(self) -> float:
        """The earliest an ack of it surely was applied (inf: none surely was): one sent
        within its delivery's lease.

        SQS answers success to a delete whose delivery is over (the message was received
        again since), without effect: an ack answered success surely deleted the message
        only when no other delivery of it may have come between its own and the ack."""
        return min(
            (
                d.ack_answered_at
                for d in self.deliveries
                if d.outcome == "acked"
                and d.ack_answered_at is not None
                # Sent after its lease may have ended: the delete may have come too late
                # (SQS answers it success all the same).
                and d.ack_sent_at is not None
                and d.ack_sent_at < d.lease_end
                and not any(
                    o is not d
                    and o.answered_at > d.received_at
                    and o.received_at < d.ack_answered_at
                    for o in self.deliveries
                )
            ),
            default=math.inf,
        )

    def acked(self) -> bool:
        """Whether an ack of it may have been applied: one answered success or none, and no
        later delivery of it surely came before it was sent (that would make it a no-op)."""
        return any(
            d.outcome in ACKED and not _superseded(d, self.deliveries) for d in self.deliveries
        )


def _superseded(d: Delivery, deliveries: list[Delivery]) -> bool:
    """Another delivery surely after ``d`` and surely before ``d``'s ack was sent."""
    sent = d.ack_sent_at if d.ack_sent_at is not None else math.inf
    return any(
        o is not d and o.received_at >= d.answered_at and o.answered_at <= sent for o in deliveries
    )


def check(log: EventLog, slack: float = LEASE_SLACK_S) -> Verdict:
    verdict = Verdict()
    messages = _messages(log.sends, log.deliveries, verdict)
    per_group: dict[str, list[_Message]] = defaultdict(list)
    for m in messages.values():
        per_group[m.group].append(m)
    for group, members in sorted(per_group.items()):
        members.sort(key=lambda m: m.index)
        figures = verdict.groups[group] = GroupFigures()
        _figures(members, figures, verdict)
        _dups(members, figures, verdict)
        _attributes(members, figures, verdict)
        _order(members, figures, verdict)
        _in_flight(members, figures, verdict, slack)
    return verdict


def _messages(
    sends: Iterable[Send], deliveries: Iterable[Delivery], verdict: Verdict
) -> dict[str, _Message]:
    messages: dict[str, _Message] = {}
    first_id: dict[str, str] = {}
    for s in sends:
        verdict.send_attempts += 1
        verdict.sends_retried += s.retried
        if s.answered_at is None:
            verdict.sends_unanswered += 1
        elif s.message_id is None:
            verdict.sends_failed += 1
        else:
            m = messages.setdefault(s.dedup_id, _Message(s.group, s.index, s.dedup_id))
            m.answered_ids.add(s.message_id)
            if s.sequence_number is not None:
                m.answered_seqs.add(s.sequence_number)
            first = first_id.setdefault(s.dedup_id, s.message_id)
            verdict.retries_same_id += s.retried and first == s.message_id
    for d in deliveries:
        m = messages.setdefault(d.dedup_id, _Message(d.body_group, d.index, d.dedup_id))
        m.deliveries.append(d)
    return messages


def _figures(members: list[_Message], g: GroupFigures, verdict: Verdict) -> None:
    for m in members:
        g.messages += 1
        g.deliveries += len(m.deliveries)
        g.redeliveries += max(0, len(m.deliveries) - 1)
        g.left += sum(d.outcome == "left" for d in m.deliveries)
        verdict.ack_refused += sum(d.outcome == "ack_refused" for d in m.deliveries)
        outcomes = {d.outcome for d in m.deliveries}
        if m.acked():
            g.acked += 1
            verdict.ack_unverified += "acked" not in outcomes
        else:
            g.lost += 1
            verdict.lost_never_delivered += not m.deliveries
            verdict.sample(
                "lost",
                group=m.group,
                index=m.index,
                dedup_id=m.dedup_id,
                deliveries=len(m.deliveries),
                outcomes=sorted(outcomes),
            )
        calls = [d.call for d in m.deliveries]
        # Twice in one receive's answer: two leases of it at once.
        g.double_in_lease += len(calls) - len(set(calls))
        acked_at = m.first_ack_answered
        for d in m.deliveries:
            if d.received_at > acked_at:
                g.delivered_after_ack += 1
                verdict.sample(
                    "delivered_after_ack",
                    dedup_id=m.dedup_id,
                    acked_at=acked_at,
                    received_at=d.received_at,
                )


def _dups(members: list[_Message], g: GroupFigures, verdict: Verdict) -> None:
    for m in members:
        delivered = {d.message_id for d in m.deliveries}
        ids = m.answered_ids | delivered
        if len(ids) > 1:
            g.dup_stored += 1
            verdict.sample(
                "dup_stored",
                dedup_id=m.dedup_id,
                answered=sorted(m.answered_ids),
                delivered=sorted(delivered),
            )


def _attributes(members: list[_Message], g: GroupFigures, verdict: Verdict) -> None:
    previous: tuple[int, int] | None = None  # (index, sequence number) of the last message
    for m in members:
        for d in m.deliveries:
            wrong_seq = m.answered_seqs and d.sequence_number not in m.answered_seqs
            if d.group != m.group or wrong_seq or d.sequence_number is None:
                g.attribute_mismatches += 1
                verdict.sample(
                    "attribute_mismatches",
                    dedup_id=m.dedup_id,
                    sent={"group": m.group, "sequence_numbers": sorted(m.answered_seqs)},
                    received={"group": d.group, "sequence_number": d.sequence_number},
                )
        seqs = {*m.answered_seqs, *(d.sequence_number for d in m.deliveries if d.sequence_number)}
        numbers = {int(s) for s in seqs if s.isdigit()}
        if len(numbers) != 1 or len(seqs) != 1:
            if seqs:  # none at all is counted above, per delivery
                g.attribute_mismatches += 1
                verdict.sample("attribute_mismatches", dedup_id=m.dedup_id, seqs=sorted(seqs))
            continue
        (number,) = numbers
        if previous is not None and number <= previous[1]:
            g.attribute_mismatches += 1
            verdict.sample(
                "attribute_mismatches",
                dedup_id=m.dedup_id,
                note="sequence number not above the previous message's",
                index=m.index,
                sequence_number=str(number),
                previous={"index": previous[0], "sequence_number": str(previous[1])},
            )
        previous = (m.index, number)


def _order(members: list[_Message], g: GroupFigures, verdict: Verdict) -> None:
    acks = [m.first_ack_sent for m in members]
    # The latest "earliest ack" of the messages before each one: a delivery answered before
    # it may be out of order (the check below then looks for the message that proves it).
    latest_before: list[float] = []
    running = -math.inf
    for a in acks:
        latest_before.append(running)
        running = max(running, a)
    for k, m in enumerate(members):
        for d in m.deliveries:
            if d.answered_at >= latest_before[k]:
                continue
            earlier = _unacked_earlier(members[:k], d)
            if earlier is not None:
                g.order_violations += 1
                verdict.sample(
                    "order_violations",
                    group=m.group,
                    delivered_index=m.index,
                    delivered_at=d.answered_at,
                    unacked_index=earlier.index,
                    its_first_ack_sent=earlier.first_ack_sent,
                )


def _unacked_earlier(earlier: list[_Message], d: Delivery) -> _Message | None:
    """An earlier message not acked when ``d`` was delivered, and not before it in its call."""
    for e in earlier:
        if e.first_ack_sent <= d.answered_at:
            continue
        if any(x.call == d.call and x.position < d.position for x in e.deliveries):
            continue
        return e
    return None


def _surely_leased(d: Delivery, slack: float) -> tuple[float, float]:
    """From its answer until its ack was sent or its lease's earliest end, whichever first."""
    end = d.lease_end - slack
    if d.ack_sent_at is not None and d.outcome != "left":
        end = min(end, d.ack_sent_at)
    return d.answered_at, end


def _in_flight(members: list[_Message], g: GroupFigures, verdict: Verdict, slack: float) -> None:
    flat = [(k, d) for k, m in enumerate(members) for d in m.deliveries]
    counted: set[int] = set()  # a delivery is one INFLIGHT violation, however many it overlaps
    for ka, a in flat:
        start, end = _surely_leased(a, slack)
        if end <= start:
            continue
        for kb, b in flat:
            if b.call == a.call or not (start <= b.received_at and b.answered_at <= end):
                continue
            if kb == ka:
                g.double_in_lease += 1
                kind = "double_in_lease"
            elif kb > ka and id(b) not in counted:
                counted.add(id(b))
                g.inflight_violations += 1
                kind = "inflight_violations"
            else:
                continue  # an earlier message delivered during a later one's lease: ORDER's
            verdict.sample(
                kind,
                group=members[ka].group,
                leased={"index": members[ka].index, "from": start, "surely_until": end},
                delivered={"index": members[kb].index, "sent": b.received_at, "at": b.answered_at},
            )
