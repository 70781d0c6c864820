"""What each ordered subscription's reader read and committed in a chaos run, and the
verdicts drawn from it (issue 36: LOST 0 per subscription under faults).

A subscription's promise: every message stored is read, in id order within each partition,
and a message passed by a committed position is never read again. The reader records each
read and each commit; a commit's outcome is known only from its answer (200 applied, 409
refused) or, when no answer came, from the stored position read back afterwards, never
assumed. A body is *done* once a commit covering it is known to have applied: from then on
no read may return it (DOUBLE), and by the end every stored message must be done (LOST).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SAMPLE_LIMIT = 10


@dataclass(frozen=True, slots=True)
class SubMessage:
    id: str  # the wire id: "<monoton>" (partition 0) or "<partition>-<monoton>"
    body: str


@dataclass(slots=True)
class SubRead:
    server: str
    send: float
    recv: float
    status: int | None
    messages: list[SubMessage]
    next: str | None  # None when the read failed


@dataclass(slots=True)
class SubCommit:
    """A commit of ``reads[read].next`` with ``expected`` the position the reader knew
    committed. ``applied``: True/False once known, None while (or if it stays) unknown."""

    read: int  # index in SubLedger.reads of the read it covers
    server: str
    send: float
    recv: float
    status: int | None
    position: str
    expected: str
    applied: bool | None = None
    known_at: float | None = None  # when the reader learnt the outcome (answer or read-back)
    # answer (200 / 409 / other 4xx), read back (no answer or 5xx, then the stored position
    # read), late (thought not applied, later found stored), unresolved (never settled)
    how: str = "unresolved"


@dataclass
class SubLedger:
    name: str
    reads: list[SubRead] = field(default_factory=list)
    commits: list[SubCommit] = field(default_factory=list)
    # Read backs that found a position that was neither the one the reader knew nor one it
    # had tried: something moved the subscription that nobody asked to (a server bug).
    unexplained: int = 0
    final_lag: int | None = None  # the last lag read (0: caught up)


def settle(
    stored: str, trying: SubCommit | None, open_commits: list[SubCommit]
) -> SubCommit | None:
    """Which commit the read-back ``stored`` position shows applied, or None.

    ``trying``: the commit just sent without a known outcome (None after a refusal);
    ``open_commits``: earlier ones thought not applied, whose write might still have landed
    (a server killed in the middle of its compare-and-set). The stored position equal to
    ``trying``'s proves it applied; equal to an earlier open one's (the latest first),
    that one did, late. Anything else proves nothing applied."""
    if trying is not None and stored == trying.position:
        return trying
    for c in reversed(open_commits):
        if stored == c.position:
            return c
    return None


def split_id(message_id: str) -> tuple[int, int]:
    """(partition, monoton) of a wire id (cassieq.wire_limits.message_id's inverse)."""
    partition, _, monoton = message_id.rpartition("-")
    return (int(partition) if partition else 0), int(monoton)


@dataclass
class SubVerdicts:
    name: str
    reads: int = 0
    read: int = 0  # messages returned by reads, repeats included
    done: int = 0  # distinct bodies done
    lost: int = 0
    double: int = 0
    order: int = 0
    unknown_bodies: int = 0
    commits: int = 0
    commits_applied: int = 0
    commits_refused: int = 0
    commits_unknown: int = 0  # no answer or a 5xx
    unknown_resolved_applied: int = 0
    unknown_resolved_not_applied: int = 0
    applied_late: int = 0
    unresolved: int = 0
    unexplained_positions: int = 0
    final_lag: int | None = None  # None: never read back
    samples: dict[str, list[dict[str, object]]] = field(default_factory=dict)

    def violations(self) -> list[str]:
        checks = {
            "LOST": self.lost,
            "DOUBLE": self.double,
            "ORDER": self.order,
            "unknown bodies": self.unknown_bodies,
            "positions moved by nobody": self.unexplained_positions,
        }
        out = [f"{self.name} {label} {n}" for label, n in checks.items() if n > 0]
        if self.final_lag != 0:
            # The reader stops only once caught up after the drain: it never got there.
            lag = "unknown" if self.final_lag is None else self.final_lag
            out.append(f"{self.name} not caught up (lag {lag})")
        return out


def judge_subscription(
    book: SubLedger, stored: set[str], attempted: set[str], origin: float = 0.0
) -> SubVerdicts:
    """``stored``: the bodies the queue certainly holds (put answered 201, or delivered to a
    queue consumer); ``attempted``: every body a producer sent."""
    v = SubVerdicts(name=book.name, final_lag=book.final_lag)
    v.unexplained_positions = book.unexplained
    v.reads = len(book.reads)
    v.read = sum(len(r.messages) for r in book.reads)
    _count_commits(v, book.commits)
    applied = sorted((c for c in book.commits if c.applied), key=lambda c: c.send)

    done_at: dict[str, float] = {}
    for c in sorted(applied, key=lambda c: c.known_at or c.recv):
        for m in book.reads[c.read].messages:
            done_at.setdefault(m.body, c.known_at if c.known_at is not None else c.recv)
    v.done = len(done_at)

    seen: set[str] = set()
    for r in book.reads:
        for m in r.messages:
            if m.body not in attempted and m.body not in seen:
                v.unknown_bodies += 1
                _sample(v, "unknown_bodies", {"body": m.body, "id": m.id})
            seen.add(m.body)
            done = done_at.get(m.body)
            # Done before this read was sent: the committed position had passed it.
            if done is not None and r.send > done:
                v.double += 1
                _sample(
                    v,
                    "double",
                    {
                        "body": m.body,
                        "id": m.id,
                        "done_s": round(done - origin, 3),
                        "read_again_s": round(r.send - origin, 3),
                        "server": r.server,
                    },
                )

    # The committed sequence: the applied commits' reads in the order they were committed
    # (one reader per subscription: its commits are sequential).
    last: dict[int, tuple[int, str]] = {}
    for c in applied:
        for m in book.reads[c.read].messages:
            partition, monoton = split_id(m.id)
            before = last.get(partition)
            if before is not None and monoton <= before[0]:
                v.order += 1
                _sample(v, "order", {"partition": partition, "id": m.id, "after": before[1]})
            last[partition] = (monoton, m.id)

    for body in sorted(stored - done_at.keys()):
        v.lost += 1
        _sample(v, "lost", {"body": body, "read": body in seen})
    return v


def _count_commits(v: SubVerdicts, commits: list[SubCommit]) -> None:
    v.commits = len(commits)
    for c in commits:
        if c.applied:
            v.commits_applied += 1
        if c.status is not None and c.status < 500 and c.status != 200:
            v.commits_refused += 1  # 409 (expected not the stored one) or another 4xx
        if c.status is None or c.status >= 500:
            v.commits_unknown += 1
            if c.how == "read back":
                if c.applied:
                    v.unknown_resolved_applied += 1
                else:
                    v.unknown_resolved_not_applied += 1
        if c.how == "late":
            v.applied_late += 1
        if c.applied is None:
            v.unresolved += 1


def stored_bodies(
    puts: list[tuple[str, int | None]], delivered: set[str]
) -> tuple[set[str], set[str]]:
    """(stored, attempted) from the puts (body, status) and the bodies queue consumers got."""
    attempted = {b for b, _ in puts}
    stored = {b for b, status in puts if status == 201} | (delivered & attempted)
    return stored, attempted


def _sample(v: SubVerdicts, kind: str, item: dict[str, object]) -> None:
    bucket = v.samples.setdefault(kind, [])
    if len(bucket) < SAMPLE_LIMIT:
        bucket.append(item)
