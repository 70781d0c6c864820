"""The chaos ledger's verdicts, from records made by hand: each counts what it should and
nothing else (a positive must be a real violation)."""

from __future__ import annotations

from cassieq.tools.chaos.ledger import (
    LEASE_TOLERANCE_S,
    Ack,
    Call,
    Delivery,
    FaultEvent,
    Ledger,
    Put,
    Verdicts,
    judge,
    recoveries,
)

LEASE = 30.0


class Book:
    """A ledger written the way the workload writes it."""

    def __init__(self) -> None:
        self.ledger = Ledger()

    def put(self, body: str, status: int | None = 201, at: float = 0.0, server: str = "A") -> None:
        self.ledger.puts.append(Put(body, server, at, at + 0.05, status))

    def deliver(
        self,
        body: str,
        send: float,
        recv: float | None = None,
        *,
        server: str = "A",
        count: int = 1,
        left_unacked: bool = False,
    ) -> Delivery:
        d = Delivery(
            id=self.ledger.new_delivery_id(),
            body=body,
            server=server,
            send=send,
            recv=send + 0.05 if recv is None else recv,
            delivery_count=count,
            left_unacked=left_unacked,
        )
        self.ledger.deliveries.append(d)
        return d

    def ack(
        self,
        d: Delivery,
        send: float,
        status: int | None = 204,
        recv: float | None = None,
        row_acked: bool | None = None,
    ) -> Ack:
        a = Ack(d.id, "A", send, send + 0.05 if recv is None else recv, status, row_acked)
        self.ledger.acks.append(a)
        return a

    def judge(self) -> Verdicts:
        return judge(self.ledger, LEASE)


def only(v: Verdicts, **expected: int) -> None:
    """The named violation counters have these values and every other one is zero."""
    counters = (
        "lost",
        "lost_never_delivered",
        "lost_not_redelivered",
        "ack_unverifiable",
        "double_within_lease",
        "delivered_after_ack",
        "acks_409_valid",
        "acks_409_after_unanswered",
        "acks_409_after_redelivery",
        "http_5xx",
        "unknown_bodies",
    )
    assert {c: getattr(v, c) for c in counters} == {c: expected.get(c, 0) for c in counters}


def test_a_clean_run_has_no_violation() -> None:
    b = Book()
    for i in range(5):
        b.put(f"m{i}", at=i)
        b.ack(b.deliver(f"m{i}", send=i + 1), send=i + 1.1)
    v = b.judge()
    only(v)
    assert (v.puts_201, v.deliveries, v.redeliveries, v.acks_204) == (5, 5, 0, 5)
    assert v.violations() == []


def test_a_put_answered_201_and_never_delivered_is_lost() -> None:
    b = Book()
    b.put("m")
    only(b.judge(), lost=1, lost_never_delivered=1)


def test_a_put_without_201_is_not_owed() -> None:
    b = Book()
    b.put("no-answer", status=None)
    b.put("failed", status=503)
    v = b.judge()
    only(v)
    assert (v.puts_201, v.put_attempts, v.put_unanswered) == (0, 2, 1)


def test_a_delivery_of_an_unconfirmed_put_is_counted_but_fine() -> None:
    b = Book()
    b.put("m", status=None)
    b.ack(b.deliver("m", send=1), send=1.1)
    v = b.judge()
    only(v)
    assert v.delivered_unconfirmed_put == 1


def test_a_delivery_left_unacked_must_come_back() -> None:
    b = Book()
    b.put("m")
    b.deliver("m", send=1, left_unacked=True)
    only(b.judge(), lost=1, lost_not_redelivered=1)


def test_a_delivery_left_unacked_that_came_back_after_its_lease_is_fine() -> None:
    b = Book()
    b.put("m")
    b.deliver("m", send=1, left_unacked=True)
    again = b.deliver("m", send=1 + LEASE + 0.5, count=2)
    b.ack(again, send=again.recv)
    v = b.judge()
    only(v)
    assert (v.redeliveries, v.left_unacked) == (1, 1)


def test_a_delivery_before_the_previous_lease_ended_is_a_double() -> None:
    b = Book()
    b.put("m")
    first = b.deliver("m", send=10, left_unacked=True)
    second = b.deliver("m", send=35, recv=10 + LEASE - 0.2, count=2, server="B")
    b.ack(second, send=second.recv + 0.1)
    v = b.judge()
    only(v, double_within_lease=1)
    assert v.samples["double_within_lease"][0]["body"] == "m"
    assert first.left_unacked


def test_a_delivery_within_the_clock_tolerance_of_the_lease_end_is_not_a_double() -> None:
    b = Book()
    b.put("m")
    b.deliver("m", send=10, left_unacked=True)
    late = b.deliver("m", send=39, recv=10 + LEASE - LEASE_TOLERANCE_S / 2, count=2)
    b.ack(late, send=late.recv)
    only(b.judge())


def test_a_delivery_after_an_ack_answered_is_delivered_after_ack_not_double() -> None:
    b = Book()
    b.put("m")
    first = b.deliver("m", send=1)
    b.ack(first, send=1.1, recv=1.2)
    b.deliver("m", send=2, count=2)  # within the lease, but the message was acked
    only(b.judge(), delivered_after_ack=1)


def test_a_delivery_overlapping_the_ack_within_the_lease_is_a_double() -> None:
    b = Book()
    b.put("m")
    first = b.deliver("m", send=1)
    b.ack(first, send=1.1, recv=3.0)
    b.deliver("m", send=2, recv=2.5, count=2)  # sent before the ack's answer came
    only(b.judge(), double_within_lease=1)


def test_a_409_early_in_the_lease_is_a_409_on_a_valid_receipt() -> None:
    b = Book()
    b.put("m")
    d = b.deliver("m", send=1)
    b.ack(d, send=6, status=409)
    v = b.judge()
    # The message is lost too, unless it comes back: that is a separate, real, violation.
    only(v, acks_409_valid=1, lost=1, lost_not_redelivered=1)
    assert v.acks_409 == 1


def test_a_409_sent_in_the_last_second_of_the_lease_is_not_counted() -> None:
    b = Book()
    b.put("m")
    d = b.deliver("m", send=1)
    b.ack(d, send=1 + LEASE - 0.5, status=409)
    again = b.deliver("m", send=1 + LEASE + 1, count=2)
    b.ack(again, send=again.recv)
    v = b.judge()
    only(v)
    assert v.acks_409 == 1


def test_a_409_after_an_unanswered_attempt_is_not_counted_unless_the_row_says_unacked() -> None:
    b = Book()
    b.put("m")
    d = b.deliver("m", send=1)
    b.ack(d, send=2, status=None)
    b.ack(d, send=3, status=409, row_acked=True)  # our first attempt had acked it
    only(b.judge(), acks_409_after_unanswered=1)

    b = Book()
    b.put("m")
    d = b.deliver("m", send=1)
    b.ack(d, send=2, status=None)
    b.ack(d, send=3, status=409)  # the row could not be read: the 409 may be right
    only(b.judge(), acks_409_after_unanswered=1, ack_unverifiable=1)

    b = Book()
    b.put("m")
    d = b.deliver("m", send=1)
    b.ack(d, send=2, status=None)
    b.ack(d, send=3, status=409, row_acked=False)  # the row was not acked: a false 409
    only(b.judge(), acks_409_valid=1, lost=1, lost_not_redelivered=1)


def test_a_slow_ack_overtaken_by_a_redelivery_after_the_lease_is_rightly_refused() -> None:
    b = Book()
    b.put("m")
    d = b.deliver("m", send=0)
    b.ack(d, send=LEASE - 1.5, recv=LEASE + 2, status=409)
    again = b.deliver("m", send=LEASE + 0.5, count=2, server="B")
    b.ack(again, send=again.recv)
    v = b.judge()
    only(v, acks_409_after_redelivery=1)


def test_an_ack_without_answer_whose_row_shows_acked_counts_as_acked() -> None:
    b = Book()
    b.put("m")
    d = b.deliver("m", send=1)
    b.ack(d, send=2, status=None)
    b.ack(d, send=3, status=None, row_acked=True)
    only(b.judge())


def test_an_ack_without_answer_and_no_redelivery_is_unverifiable_not_lost() -> None:
    b = Book()
    b.put("m")
    d = b.deliver("m", send=1)
    b.ack(d, send=2, status=None)
    b.ack(d, send=3, status=502)
    v = b.judge()
    only(v, ack_unverifiable=1)
    assert v.acks_unanswered == 1


def test_5xx_are_counted_per_route_and_no_answers_per_server() -> None:
    b = Book()
    b.ledger.calls += [
        Call("put", "A", 0, 1, 500),
        Call("get", "B", 0, 1, 503),
        Call("get", "B", 0, 1, 204),
        Call("ack", "A", 0, 1, 409),
        Call("get", "A", 0, 1, 404),
        Call("put", "B", 0, 1, None, "ClientConnectorError"),
    ]
    v = b.judge()
    only(v, http_5xx=2)
    assert v.http_5xx_by_route == {"get": 1, "put": 1}
    assert v.unanswered_by_server == {"B": 1}
    assert v.violations() == ["5xx 2"]


def test_a_delivered_body_nobody_put_is_an_unknown_body() -> None:
    b = Book()
    b.ack(b.deliver("stranger", send=1), send=1.1)
    only(b.judge(), unknown_bodies=1)


def test_recovery_is_measured_through_the_affected_server_and_through_any() -> None:
    b = Book()
    b.ledger.faults.append(FaultEvent("kill server B", at=100.0, affected_server="B"))
    b.ledger.faults.append(FaultEvent("kill node 2", at=200.0, affected_server=None))
    b.put("before", at=99.0, server="B")  # sent before the fault: not a sign of recovery
    b.put("a1", at=100.5, server="A")
    b.deliver("a1", send=101.0, server="A")
    b.put("b1", at=110.0, server="B")
    b.deliver("b1", send=112.0, server="B")
    b.put("late", at=201.0, server="A")
    b.put("refused", status=None, at=200.1, server="B")
    b.deliver("late", send=203.0, server="B")
    out = {r.event: r for r in recoveries(b.ledger, start=50.0)}
    kill_b = out["kill server B"]
    assert (kill_b.at_s, kill_b.recovered_s, kill_b.any_server_s) == (50.0, 12.05, 1.05)
    node = out["kill node 2"]
    assert (node.recovered_s, node.any_server_s) == (3.05, 3.05)


def test_no_recovery_within_the_run_is_none() -> None:
    b = Book()
    b.ledger.faults.append(FaultEvent("kill server B", at=100.0, affected_server="B"))
    b.put("a", at=101.0, server="A")
    (rec,) = recoveries(b.ledger, start=0.0)
    assert (rec.recovered_s, rec.any_server_s) == (None, None)


def test_a_refused_attempt_never_applied_so_the_409_after_it_counts() -> None:
    b = Book()
    b.put("m")
    d = b.deliver("m", send=1)
    b.ledger.acks.append(Ack(d.id, "B", 2, 2.01, None, error="ClientConnectorError"))
    b.ack(d, send=3, status=409)
    only(b.judge(), acks_409_valid=1, lost=1, lost_not_redelivered=1)


def test_a_409_whose_ack_had_applied_is_a_false_refusal_but_nothing_is_lost() -> None:
    b = Book()
    b.put("m")
    d = b.deliver("m", send=1)
    b.ack(d, send=2, status=409, row_acked=True)  # the row: acked, one version on
    v = b.judge()
    only(v, acks_409_valid=1)
    assert v.acks_409_applied == 1
