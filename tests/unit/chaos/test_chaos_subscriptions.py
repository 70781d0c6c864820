"""The chaos run's ordered-subscription checks (issue 36): the verdicts from hand-made
ledgers, and the reader against a scripted subscription whose commits lose their answers —
including deliberately broken readers, which the verdicts must catch."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from cassieq.tools.chaos import sub_reader
from cassieq.tools.chaos.ledger import Call
from cassieq.tools.chaos.sub_ledger import (
    SubCommit,
    SubLedger,
    SubMessage,
    SubRead,
    SubVerdicts,
    judge_subscription,
    settle,
    split_id,
    stored_bodies,
)
from cassieq.tools.chaos.sub_reader import SubscriptionReader


class Book:
    """A subscription's ledger written the way the reader writes it."""

    def __init__(self) -> None:
        self.book = SubLedger("sub-0")
        self.book.final_lag = 0

    def read(self, at: float, *ids_bodies: tuple[str, str], nxt: str = "p") -> int:
        msgs = [SubMessage(i, b) for i, b in ids_bodies]
        self.book.reads.append(SubRead("A", at, at + 0.01, 200, msgs, nxt))
        return len(self.book.reads) - 1

    def commit(
        self,
        read: int,
        at: float,
        status: int | None = 200,
        applied: bool | None = True,
        known_at: float | None = None,
        how: str = "answer",
    ) -> SubCommit:
        c = SubCommit(
            read, "A", at, at + 0.01, status, f"p{read}", "p", applied,
            at + 0.01 if known_at is None else known_at, how,
        )  # fmt: skip
        self.book.commits.append(c)
        return c

    def judge(self, stored: set[str], attempted: set[str] | None = None) -> SubVerdicts:
        return judge_subscription(self.book, stored, attempted or stored)


def only(v: SubVerdicts, **expected: int) -> None:
    """The named violation counters have these values, every other one is zero."""
    counters = ("lost", "double", "order", "unknown_bodies", "unexplained_positions")
    got = {k: getattr(v, k) for k in counters}
    assert got == {k: expected.get(k, 0) for k in counters}


# ---------------------------------------------------------------------- verdicts


def test_every_body_read_and_committed_once_passes() -> None:
    b = Book()
    b.commit(b.read(1.0, ("0", "x0"), ("1", "x1")), 1.1)
    b.commit(b.read(2.0, ("2", "x2")), 2.1)
    v = b.judge({"x0", "x1", "x2"})
    only(v)
    assert (v.reads, v.read, v.done, v.commits, v.commits_applied) == (2, 3, 3, 2, 2)
    assert v.violations() == []


def test_a_stored_body_never_read_is_lost() -> None:
    b = Book()
    b.commit(b.read(1.0, ("0", "x0")), 1.1)
    v = b.judge({"x0", "x1"})
    only(v, lost=1)
    assert v.samples["lost"] == [{"body": "x1", "read": False}]
    assert v.violations() == ["sub-0 LOST 1"]


def test_a_body_read_but_never_committed_is_lost() -> None:
    b = Book()
    b.commit(b.read(1.0, ("0", "x0")), 1.1, status=409, applied=False)
    only(b.judge({"x0"}), lost=1)


def test_a_body_covered_only_by_an_unresolved_commit_is_lost() -> None:
    b = Book()
    b.commit(b.read(1.0, ("0", "x0")), 1.1, status=None, applied=None, how="unresolved")
    v = b.judge({"x0"})
    only(v, lost=1)
    assert (v.commits_unknown, v.unresolved) == (1, 1)


def test_an_unconfirmed_put_never_read_is_not_lost() -> None:
    stored, attempted = stored_bodies([("a", 201), ("b", None)], delivered=set())
    assert (stored, attempted) == ({"a"}, {"a", "b"})
    b = Book()
    b.commit(b.read(1.0, ("0", "a")), 1.1)
    only(b.judge(stored, attempted))


def test_an_unconfirmed_put_a_consumer_got_must_be_read() -> None:
    stored, attempted = stored_bodies([("a", 201), ("b", None)], delivered={"b", "stray"})
    assert stored == {"a", "b"}  # a delivered body nobody sent is not "stored" here
    b = Book()
    b.commit(b.read(1.0, ("0", "a")), 1.1)
    only(b.judge(stored, attempted), lost=1)


def test_reading_again_after_a_known_commit_is_a_double() -> None:
    b = Book()
    b.commit(b.read(1.0, ("0", "x0"), ("1", "x1")), 1.1)  # known applied at 1.11
    b.commit(b.read(2.0, ("1", "x1"), ("2", "x2")), 2.1)
    v = b.judge({"x0", "x1", "x2"})
    only(v, double=1, order=1)  # x1 again, and monoton 1 after 1 in the committed sequence
    assert v.samples["double"][0]["body"] == "x1"


def test_reading_again_after_a_refused_commit_is_at_least_once() -> None:
    b = Book()
    b.commit(b.read(1.0, ("0", "x0")), 1.1, status=409, applied=False)
    b.commit(b.read(2.0, ("0", "x0"), ("1", "x1")), 2.1)
    v = b.judge({"x0", "x1"})
    only(v)
    assert (v.read, v.done, v.commits_refused) == (3, 2, 1)


def test_a_read_sent_before_the_commit_was_known_is_no_double() -> None:
    """A commit without an answer, found applied only later: the reads before that moment
    may return its bodies again."""
    b = Book()
    b.commit(b.read(1.0, ("0", "x0")), 1.1, status=None, known_at=5.0, how="late")
    b.read(3.0, ("0", "x0"))  # its commit got a 409 (the first one had landed)
    b.book.commits.append(SubCommit(1, "A", 3.1, 3.2, 409, "p1", "p", False, 3.2, "answer"))
    v = b.judge({"x0"})
    only(v)
    assert (v.applied_late, v.commits_unknown, v.commits_refused) == (1, 1, 1)


def test_ids_going_back_in_a_partition_are_an_order_violation() -> None:
    b = Book()
    b.commit(b.read(1.0, ("5", "x5"), ("3", "x3")), 1.1)
    v = b.judge({"x5", "x3"})
    only(v, order=1)
    assert v.samples["order"] == [{"partition": 0, "id": "3", "after": "5"}]


def test_order_is_per_partition_and_over_committed_reads_only() -> None:
    b = Book()
    # Partitions interleave freely; each goes up.
    b.commit(b.read(1.0, ("9", "a"), ("1-2", "b"), ("10", "c"), ("1-3", "d")), 1.1)
    # A read whose commit was refused does not count: re-reading from earlier is fine.
    b.commit(b.read(2.0, ("11", "e")), 2.1, status=409, applied=False)
    b.commit(b.read(3.0, ("11", "e"), ("1-4", "f")), 3.1)
    only(b.judge(set("abcdef")))


def test_a_body_read_that_nobody_sent_is_counted() -> None:
    b = Book()
    b.commit(b.read(1.0, ("0", "x0"), ("1", "ghost")), 1.1)
    only(b.judge({"x0"}), unknown_bodies=1)


def test_a_reader_that_did_not_catch_up_fails() -> None:
    b = Book()
    b.book.final_lag = 7
    assert b.judge(set()).violations() == ["sub-0 not caught up (lag 7)"]


def test_split_id_inverts_the_wire_id() -> None:
    from cassieq.wire_limits import message_id

    for partition, monoton in [(0, 0), (0, 1204), (3, 1204), (255, 7)]:
        assert split_id(message_id(partition, monoton)) == (partition, monoton)


# ---------------------------------------------------------------------- settle


def commit_to(position: str) -> SubCommit:
    return SubCommit(0, "A", 0.0, 0.0, None, position, "p0")


def test_settle_stored_equal_to_the_tried_position_proves_it_applied() -> None:
    trying = commit_to("p1")
    assert settle("p1", trying, []) is trying


def test_settle_stored_elsewhere_proves_nothing_applied() -> None:
    assert settle("p0", commit_to("p1"), [commit_to("p2")]) is None
    assert settle("p9", None, [commit_to("p1")]) is None


def test_settle_finds_an_earlier_write_that_landed_late() -> None:
    early, later = commit_to("p1"), commit_to("p2")
    assert settle("p1", commit_to("p3"), [early, later]) is early
    assert settle("p2", None, [early, later]) is later


# ---------------------------------------------------------------------- the reader


class ScriptedSubscription:
    """One subscription over a fixed list of messages, through two servers. ``script``: one
    entry per commit: "ok", "lost-applied" (applied, the answer lost), "lost" (not applied,
    answer lost), "lost-late" (not applied now, lands when the next commit arrives: a
    compare-and-set finished by the next one's Paxos round)."""

    def __init__(self, bodies: list[str], script: list[str]) -> None:
        self.messages = [(str(m), b) for m, b in enumerate(bodies)]
        self.stored = 0
        self.script = iter(script)
        self.late: int | None = None
        self.ticks = itertools.count()

    def now(self) -> float:
        return float(next(self.ticks))

    def other(self, server: str) -> str:
        return "B" if server == "A" else "A"

    async def read_subscription(self, server: str, name: str, limit: int) -> SubRead:
        send = self.now()
        got = self.messages[self.stored : self.stored + limit]
        return SubRead(
            server, send, self.now(), 200,
            [SubMessage(i, b) for i, b in got], str(self.stored + len(got)),
        )  # fmt: skip

    async def commit_subscription(
        self, server: str, name: str, position: str, expected: str
    ) -> Call:
        send = self.now()
        if self.late is not None:
            self.stored, self.late = self.late, None
        step = next(self.script, "ok")
        status: int | None = 200
        if str(self.stored) != expected:
            status = 409
        elif step == "ok":
            self.stored = int(position)
        elif step == "lost-applied":
            self.stored, status = int(position), None
        elif step == "lost":
            status = None
        elif step == "lost-late":
            self.late, status = int(position), None
        return Call("sub commit", server, send, self.now(), status)

    async def subscription(self, server: str, name: str) -> tuple[Call, str | None, int | None]:
        send = self.now()
        call = Call("sub get", server, send, self.now(), 200)
        return call, str(self.stored), len(self.messages) - self.stored


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    # The reader's pacing between requests; the scripted subscription answers at once.
    monkeypatch.setattr(sub_reader, "IDLE_S", 0.0)
    monkeypatch.setattr(sub_reader, "RETRY_S", 0.0)


BODIES = [f"m{i}" for i in range(12)]


async def run_reader(
    script: list[str], cls: type[SubscriptionReader] = SubscriptionReader
) -> tuple[SubLedger, SubVerdicts]:
    sub = ScriptedSubscription(BODIES, script)
    book = SubLedger("sub-0")
    reader = cls(sub, book, "A", over=lambda: False, finishing=lambda: True, limit=5, clock=sub.now)
    await reader.run()
    return book, judge_subscription(book, set(BODIES), set(BODIES))


async def test_reader_with_every_answer_reads_everything_once() -> None:
    book, v = await run_reader([])
    only(v)
    assert (v.read, v.done, v.commits_applied, book.final_lag) == (12, 12, 3, 0)


async def test_reader_settles_a_lost_answer_that_applied() -> None:
    book, v = await run_reader(["ok", "lost-applied"])
    only(v)
    assert (v.read, v.commits_unknown, v.unknown_resolved_applied) == (12, 1, 1)
    assert book.commits[1].how == "read back"


async def test_reader_reads_again_after_a_lost_answer_that_did_not_apply() -> None:
    _, v = await run_reader(["lost"])
    only(v)
    # The first five were read twice (at least once), and committed once.
    assert (v.read, v.done, v.unknown_resolved_not_applied) == (17, 12, 1)


async def test_reader_finds_a_write_that_landed_after_its_read_back() -> None:
    book, v = await run_reader(["lost-late"])
    only(v)
    assert v.applied_late == 1 and v.commits_refused == 1
    assert [c.how for c in book.commits][:2] == ["late", "answer"]


class AssumesApplied(SubscriptionReader):
    """Broken: takes a commit without an answer for applied, without reading back."""

    def _learn(self, stored: str, trying: SubCommit | None, expected: str) -> str:
        if trying is None:
            return super()._learn(stored, trying, expected)
        trying.applied, trying.known_at, trying.how = True, trying.recv, "assumed"
        return trying.position


class AssumesNotApplied(SubscriptionReader):
    """Broken: takes a commit without an answer for not applied, whatever is stored."""

    def _learn(self, stored: str, trying: SubCommit | None, expected: str) -> str:
        if trying is None:
            return stored
        trying.applied, trying.known_at, trying.how = False, trying.recv, "assumed"
        return expected


async def test_checker_catches_a_reader_that_assumes_a_lost_commit_applied() -> None:
    # The commit did not apply: the server gives the same five messages again, twice (its
    # next commit is refused, its read-back shows a position it cannot explain), after the
    # reader took them for done; and they come again in the committed sequence.
    _, v = await run_reader(["lost"], AssumesApplied)
    only(v, double=10, order=1, unexplained_positions=1)
    assert "sub-0 DOUBLE 10" in v.violations()


async def test_checker_catches_a_reader_that_assumes_a_lost_commit_did_not() -> None:
    # The commit applied: the reader never learns that its messages are done.
    _, v = await run_reader(["lost-applied"], AssumesNotApplied)
    assert v.lost == 5
    assert "sub-0 LOST 5" in v.violations()


# ---------------------------------------------------------------------- the report


def table_text(results: dict[str, dict[str, object]]) -> str:
    from rich.console import Console

    from cassieq.tools.chaos.report import print_table

    console = Console(width=240, record=True)
    print_table(results, console)
    return console.export_text()


def test_report_shows_each_subscription_before_the_verdict() -> None:
    b = Book()
    b.commit(b.read(1.0, ("0", "x0")), 1.1)
    figures = dataclasses.asdict(b.judge({"x0", "x1"}))
    text = table_text({"baseline": {"passed": False, "violations": ["sub-0 LOST 1"],
                                    "subscriptions": {"sub-0": figures}}})  # fmt: skip
    lines = text.splitlines()
    row = next(line for line in lines if "sub-0: read / done / LOST / DOUBLE / ORDER" in line)
    assert "1 / 1 / 1 / 0 / 0 (lag 0)" in row
    commits = next(line for line in lines if "sub-0 commits applied" in line)
    assert "1 / 0 / 0 (0 / 0 / 0)" in commits
    verdict = next(i for i, line in enumerate(lines) if "verdict" in line)
    assert lines.index(row) < verdict
    assert "FAIL: sub-0 LOST 1" in lines[verdict]


def test_report_without_subscriptions_has_no_subscription_rows() -> None:
    assert "sub-" not in table_text({"baseline": {"passed": True, "violations": []}})
