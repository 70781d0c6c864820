"""Every put, delivery and ack of a chaos run, and the verdicts drawn from them.

The project's correctness claims rest on these numbers, so each verdict counts only what is
certainly a violation, from times taken on this machine (``time.monotonic``, the clock the
servers' leases run on is the same machine's). A request's *send* time is taken just before
it goes out and its *recv* time once its answer is in: whatever the server did, it did
between the two.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from cassieq.tools.chaos.sub_ledger import SubLedger

# The server stores lease ends in whole milliseconds of its wall clock; the ledger measures
# on the monotonic clock. Over one lease the two can drift apart by a few milliseconds
# (NTP slews by at most 0.05 %): a delivery this close to the lease's end is not called a
# double.
LEASE_TOLERANCE_S = 0.05
# The contract's margin for "409 on a valid receipt": an ack sent in the last second of the
# lease may reach the server after the lease ended.
ACK_MARGIN_S = 1.0


@dataclass(slots=True)
class Call:
    """One HTTP request. ``status`` is None when no answer came (refused, reset, timed out):
    its outcome is unknown."""

    route: str
    server: str
    send: float
    recv: float
    status: int | None
    error: str | None = None
    answer: str | None = None  # a 5xx's body (its start), for the samples


@dataclass(slots=True)
class Put:
    body: str
    server: str
    send: float
    recv: float
    status: int | None


@dataclass(slots=True)
class Delivery:
    id: int
    body: str
    server: str
    send: float
    recv: float
    delivery_count: int
    monoton: int = -1  # from the pop receipt (-1: not decoded)
    version: int = -1
    partition: int = 0
    left_unacked: bool = False  # on purpose: its lease must run out and it must come back


# The status an ack that applied has in the ledger: v1's answer to it. A v2 batch entry
# that was acked is recorded with it too, a failed entry with its code (409 stale, ...).
ACKED = 204


@dataclass(slots=True)
class Ack:
    delivery_id: int
    server: str
    send: float
    recv: float
    status: int | None
    # After a 409, or when no attempt got an answer, the consumer reads the message row
    # (operator debug route): True acked by this delivery's receipt, False still held by it
    # (not acked, same version), None neither (row gone, moved on, unreadable).
    row_acked: bool | None = None
    row: str | None = None  # what that read found, for the samples
    error: str | None = None  # why no answer came (an exception's name)

    @property
    def may_have_applied(self) -> bool:
        """An attempt whose outcome is unknown: no answer (except a refused connection: the
        request never reached a server), or a 5xx."""
        if self.status is None:
            return self.error != REFUSED
        return self.status >= 500


# aiohttp's name for a connection that could not be made (nothing listens on the port).
REFUSED = "ClientConnectorError"


@dataclass(frozen=True, slots=True)
class FaultEvent:
    name: str  # e.g. "kill node 2", "restart server B"
    at: float  # monotonic time the fault was injected (a restart: when it was begun)
    affected_server: str | None  # the server the fault hit; None: the cluster under both
    done: float | None = None  # a restart: when the node or server answered again


@dataclass
class Ledger:
    calls: list[Call] = field(default_factory=list)
    puts: list[Put] = field(default_factory=list)
    deliveries: list[Delivery] = field(default_factory=list)
    acks: list[Ack] = field(default_factory=list)
    faults: list[FaultEvent] = field(default_factory=list)
    # Each ordered subscription's reads and commits (--subscriptions; none by default).
    subscriptions: dict[str, SubLedger] = field(default_factory=dict)
    # Each shared subscription's own ledger (--shared-subscriptions; none by default).
    shared: dict[str, Ledger] = field(default_factory=dict)

    def new_delivery_id(self) -> int:
        return len(self.deliveries)

    def add_shared(self, name: str) -> Ledger:
        """A shared subscription's ledger: its own calls, deliveries and acks, judged as the
        queue's are; the puts are the queue's (the same list), since every message put must
        be delivered in each subscription too."""
        book = Ledger(puts=self.puts)
        self.shared[name] = book
        return book


@dataclass
class Verdicts:
    puts_201: int = 0
    put_attempts: int = 0
    put_unanswered: int = 0
    deliveries: int = 0
    messages_delivered: int = 0
    redeliveries: int = 0
    left_unacked: int = 0
    lost: int = 0
    lost_never_delivered: int = 0
    lost_not_redelivered: int = 0
    ack_unverifiable: int = 0
    double_within_lease: int = 0
    delivered_after_ack: int = 0
    acks_204: int = 0
    acks_409: int = 0
    acks_409_valid: int = 0
    acks_409_applied: int = 0  # of those, the row showed the ack applied: a false refusal
    acks_409_after_unanswered: int = 0
    acks_409_after_redelivery: int = 0
    acks_unanswered: int = 0
    http_5xx: int = 0
    http_5xx_by_route: dict[str, int] = field(default_factory=dict)
    unanswered_by_server: dict[str, int] = field(default_factory=dict)
    unknown_bodies: int = 0
    delivered_unconfirmed_put: int = 0
    samples: dict[str, list[dict[str, object]]] = field(default_factory=dict)

    def violations(self) -> list[str]:
        """What makes the run fail, by name; empty when it passed."""
        checks = {
            "LOST": self.lost,
            "DOUBLE WITHIN LEASE": self.double_within_lease,
            "delivered after ack": self.delivered_after_ack,
            "409 on valid receipt": self.acks_409_valid,
            "5xx": self.http_5xx,
            "unknown bodies": self.unknown_bodies,
        }
        return [f"{name} {n}" for name, n in checks.items() if n > 0]


SAMPLE_LIMIT = 10


def judge(ledger: Ledger, lease: float, origin: float = 0.0) -> Verdicts:
    """Draw every verdict from the ledger (pure: the unit tests feed it by hand). Times in
    the samples are seconds since ``origin`` (the put phase's start)."""
    v = Verdicts()
    confirmed = _put_bodies(ledger, v)
    by_body: dict[str, list[Delivery]] = defaultdict(list)
    for d in ledger.deliveries:
        by_body[d.body].append(d)
    acks_of: dict[int, list[Ack]] = defaultdict(list)
    for a in sorted(ledger.acks, key=lambda a: a.send):
        acks_of[a.delivery_id].append(a)
    attempted = {p.body for p in ledger.puts}

    v.deliveries = len(ledger.deliveries)
    v.messages_delivered = len(by_body)
    v.left_unacked = sum(1 for d in ledger.deliveries if d.left_unacked)
    for body, ds in by_body.items():
        ds.sort(key=lambda d: d.send)
        v.redeliveries += len(ds) - 1
        if body not in attempted:
            v.unknown_bodies += 1
            _sample(v, "unknown_bodies", {"body": body})
        elif body not in confirmed:
            v.delivered_unconfirmed_put += 1
        _judge_repeats(v, ds, acks_of, lease, origin)

    _judge_acks(v, ledger, by_body, acks_of, lease, origin)
    _judge_lost(v, confirmed, by_body, acks_of)
    _judge_calls(v, ledger.calls)
    return v


def _put_bodies(ledger: Ledger, v: Verdicts) -> set[str]:
    """The bodies whose put answered 201: the messages the queue must deliver."""
    v.put_attempts = len(ledger.puts)
    v.put_unanswered = sum(1 for p in ledger.puts if p.status is None)
    confirmed = {p.body for p in ledger.puts if p.status == 201}
    v.puts_201 = len(confirmed)
    return confirmed


def _applied_ack(acks: list[Ack]) -> Ack | None:
    """The attempt known to have acked the delivery: a 204, or an attempt (no answer, a 5xx
    or a 409) after which the row showed it acked by this delivery's receipt."""
    for a in acks:
        if a.status == ACKED:
            return a
    for a in acks:
        if a.row_acked:
            return a
    return None


def _judge_repeats(
    v: Verdicts, ds: list[Delivery], acks_of: dict[int, list[Ack]], lease: float, origin: float
) -> None:
    """Deliveries of one message in send order: a later one is a violation when it surely
    came after an ack had applied, or while the previous delivery's lease was in force."""
    for i in range(1, len(ds)):
        prev, cur = ds[i - 1], ds[i]
        applied = [a for p in ds[:i] if (a := _applied_ack(acks_of[p.id])) is not None]
        # After the ack's answer came back, the message was acked: nothing may deliver it.
        if any(cur.send > a.recv for a in applied):
            v.delivered_after_ack += 1
            _sample(v, "delivered_after_ack", _pair(prev, cur, origin))
            continue
        # The server set prev's lease at a time >= prev.send, so it ran at least until
        # prev.send + lease; cur was delivered by cur.recv at the latest.
        if cur.recv < prev.send + lease - LEASE_TOLERANCE_S:
            v.double_within_lease += 1
            _sample(v, "double_within_lease", _pair(prev, cur, origin))


def _judge_acks(
    v: Verdicts,
    ledger: Ledger,
    by_body: dict[str, list[Delivery]],
    acks_of: dict[int, list[Ack]],
    lease: float,
    origin: float,
) -> None:
    delivery = {d.id: d for d in ledger.deliveries}
    for a in ledger.acks:
        if a.status == ACKED:
            v.acks_204 += 1
        elif a.status is None:
            v.acks_unanswered += 1
        if a.status != 409:
            continue
        v.acks_409 += 1
        d = delivery.get(a.delivery_id)
        if d is None or a.send >= d.send + lease - ACK_MARGIN_S:
            continue  # sent too late in the lease to be sure the receipt was still valid
        earlier = [e for e in acks_of[a.delivery_id] if e.send < a.send]
        if a.row_acked is not False and any(e.may_have_applied for e in earlier):
            # An earlier attempt may have acked it: the 409 may be the right answer (unless
            # the row, read right after, showed the message not acked).
            v.acks_409_after_unanswered += 1
            continue
        if any(
            o.id != d.id and o.send > d.send and o.send < a.recv and o.recv >= d.send + lease
            for o in by_body[d.body]
        ):
            # A slow ack overtaken by a redelivery after the lease ran out: rightly refused.
            v.acks_409_after_redelivery += 1
            continue
        v.acks_409_valid += 1
        if a.row_acked:
            v.acks_409_applied += 1
        _sample(
            v,
            "acks_409_valid",
            {
                "body": d.body,
                "monoton": d.monoton,
                "version": d.version,
                "delivered": _span(d.server, d.send, d.recv, origin),
                "attempts": [
                    {
                        **_span(e.server, e.send, e.recv, origin),
                        "status": e.status,
                        "error": e.error,
                    }
                    for e in acks_of[a.delivery_id]
                    if e.send <= a.send
                ],
                "row_after": a.row,
            },
        )


def _judge_lost(
    v: Verdicts,
    confirmed: set[str],
    by_body: dict[str, list[Delivery]],
    acks_of: dict[int, list[Ack]],
) -> None:
    """A message put with 201 must end acked; consumers ack everything but the deliveries
    left unacked on purpose, which must come back after their lease and be acked then."""
    for body in sorted(confirmed):
        ds = by_body.get(body, [])
        if any(_applied_ack(acks_of[d.id]) is not None for d in ds):
            continue
        if not ds:
            v.lost += 1
            v.lost_never_delivered += 1
            _sample(v, "lost", {"body": body, "why": "never delivered"})
            continue
        last = ds[-1]
        last_acks = acks_of[last.id]
        if any(a.may_have_applied for a in last_acks) and not any(
            a.row_acked is False for a in last_acks
        ):
            # The last ack got no answer and the row could not be read since; had that ack
            # not applied, its lease would have run out and the drain seen it again.
            v.ack_unverifiable += 1
            continue
        v.lost += 1
        v.lost_not_redelivered += 1
        _sample(
            v,
            "lost",
            {
                "body": body,
                "why": "lease ran out, never delivered again",
                "deliveries": len(ds),
                "last_left_unacked": last.left_unacked,
                "last_acks": [a.status for a in last_acks],
                "monoton": last.monoton,
            },
        )


def _judge_calls(v: Verdicts, calls: list[Call]) -> None:
    by_route: Counter[str] = Counter()
    unanswered: Counter[str] = Counter()
    for c in calls:
        if c.status is None:
            unanswered[c.server] += 1
        elif c.status >= 500:
            by_route[c.route] += 1
            _sample(
                v,
                "5xx",
                {"route": c.route, "status": c.status, "answer": c.answer, "server": c.server},
            )
    v.http_5xx = sum(by_route.values())
    v.http_5xx_by_route = dict(sorted(by_route.items()))
    v.unanswered_by_server = dict(sorted(unanswered.items()))


@dataclass(frozen=True, slots=True)
class Recovery:
    event: str
    at_s: float  # since the start of the put phase
    # From the fault until a put answered 201 and a delivery came, both sent after the
    # fault and both through the affected server (any server for a node fault).
    recovered_s: float | None
    # The same through any server: how long the service as a whole answered nothing.
    any_server_s: float | None


def recoveries(ledger: Ledger, start: float) -> list[Recovery]:
    out = []
    for f in ledger.faults:
        out.append(
            Recovery(
                event=f.name,
                at_s=round(f.at - start, 1),
                recovered_s=_recovered(ledger, f.at, f.affected_server),
                any_server_s=_recovered(ledger, f.at, None),
            )
        )
    return out


def _recovered(ledger: Ledger, at: float, server: str | None) -> float | None:
    def through(s: str) -> bool:
        return server is None or s == server

    put = min(
        (p.recv for p in ledger.puts if p.status == 201 and p.send >= at and through(p.server)),
        default=None,
    )
    got = min(
        (d.recv for d in ledger.deliveries if d.send >= at and through(d.server)), default=None
    )
    if put is None or got is None:
        return None
    return round(max(put, got) - at, 2)


def _pair(prev: Delivery, cur: Delivery, origin: float) -> dict[str, object]:
    return {
        "body": cur.body,
        "previous": {
            **_span(prev.server, prev.send, prev.recv, origin),
            "monoton": prev.monoton,
            "version": prev.version,
        },
        "this": {
            **_span(cur.server, cur.send, cur.recv, origin),
            "monoton": cur.monoton,
            "version": cur.version,
        },
        "after_previous_send_s": round(cur.recv - prev.send, 3),
    }


def _span(server: str, send: float, recv: float, origin: float) -> dict[str, object]:
    """Where a request went and when (seconds since the put phase began)."""
    return {
        "server": server,
        "sent_s": round(send - origin, 3),
        "answered_s": round(recv - origin, 3),
    }


def _sample(v: Verdicts, kind: str, item: dict[str, object]) -> None:
    bucket = v.samples.setdefault(kind, [])
    if len(bucket) < SAMPLE_LIMIT:
        bucket.append(item)
