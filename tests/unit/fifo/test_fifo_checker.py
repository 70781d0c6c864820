"""The FIFO checker's verdicts, from event logs written by hand: a clean log passes, and a
log holding each violation fails on that count and on no other (a positive must be real)."""

from __future__ import annotations

import json
from pathlib import Path

from cassieq.tools.fifo.checker import VIOLATIONS, Verdict, check
from cassieq.tools.fifo.events import Delivery, EventLog, Outcome, Send, read_jsonl, write_jsonl

VIS = 5.0  # the visibility timeout of every receive


class Book:
    """An event log written the way the workload writes it, on a clock the test moves."""

    def __init__(self) -> None:
        self.log = EventLog()
        self.calls = 0
        self.seq = 1000

    def send(
        self,
        group: str,
        index: int,
        at: float,
        *,
        message_id: str | None = None,
        seq: str | None = None,
        retried: bool = False,
        answered: bool = True,
    ) -> str:
        """A send answered 50 ms later; its message id is the dedup id's unless given."""
        dedup = f"{group}-{index}"
        if seq is None and answered:
            self.seq += 10
            seq = str(self.seq)
        self.log.sends.append(
            Send(
                group=group,
                index=index,
                dedup_id=dedup,
                sent_at=at,
                answered_at=at + 0.05 if answered else None,
                message_id=(message_id or f"id-{dedup}") if answered else None,
                sequence_number=seq if answered else None,
                retried=retried,
            )
        )
        return dedup

    def seq_of(self, dedup: str) -> str | None:
        sent = (s.sequence_number for s in self.log.sends if s.dedup_id == dedup)
        return next((n for n in sent if n is not None), None)

    def receive(
        self,
        at: float,
        items: list[tuple[str, Outcome]],
        *,
        consumer: int = 0,
        ack_at: float | None = None,
        message_ids: dict[str, str] | None = None,
        group_attr: str | None = None,
        seq_attr: str | None = None,
    ) -> list[Delivery]:
        """One receive call sent at ``at`` answered 50 ms later, delivering ``items`` (dedup
        id, outcome); acks are sent at ``ack_at`` (default: 100 ms after the answer)."""
        self.calls += 1
        ack_sent = at + 0.15 if ack_at is None else ack_at
        out = []
        for position, (dedup, outcome) in enumerate(items):
            group, index = dedup.rsplit("-", 1)
            acks = outcome in ("acked", "ack_refused", "ack_unanswered")
            d = Delivery(
                consumer=consumer,
                call=self.calls,
                position=position,
                message_id=(message_ids or {}).get(dedup, f"id-{dedup}"),
                group=group_attr or group,
                sequence_number=seq_attr or self.seq_of(dedup),
                body_group=group,
                index=int(index),
                dedup_id=dedup,
                received_at=at,
                answered_at=at + 0.05,
                lease_end=at + VIS,
                outcome=outcome,
                ack_sent_at=ack_sent if acks else None,
                ack_answered_at=ack_sent + 0.05 if outcome in ("acked", "ack_refused") else None,
            )
            self.log.deliveries.append(d)
            out.append(d)
        return out

    def clean_group(self, group: str, n: int, start: float) -> float:
        """n messages sent, each delivered and acked before the next: the time after."""
        t = start
        for i in range(n):
            self.send(group, i, t)
            t += 0.1
        for i in range(n):
            self.receive(t, [(f"{group}-{i}", "acked")])
            t += 0.3
        return t


def only(verdict: Verdict, **expected: int) -> None:
    """Every violation count is 0 but the ones named, which have the values given."""
    assert verdict.violations() == {k: expected.get(k, 0) for k in VIOLATIONS}
    assert verdict.passed is (not any(expected.values()))


def test_a_clean_run_passes_with_its_figures() -> None:
    book = Book()
    end = book.clean_group("a", 5, 0.0)
    book.clean_group("b", 3, end)
    verdict = check(book.log)
    only(verdict)
    summary = verdict.summary()
    assert summary["groups"] == 2
    assert summary["messages"] == 8
    assert summary["acked"] == 8
    assert summary["deliveries"] == 8
    assert summary["per_group"]["a"]["messages"] == 5
    json.dumps(summary)  # the summary is JSON as it is


def test_a_lease_left_to_expire_then_redelivered_in_order_passes() -> None:
    book = Book()
    for i in range(3):
        book.send("g", i, i * 0.1)
    # 0 and 1 in one batch; 0 is left to run out, so 1 is not acked either (the consumer's
    # rule: nothing after an unacked message of its group in the batch).
    book.receive(1.0, [("g-0", "left"), ("g-1", "left")])
    book.receive(1.0 + VIS + 0.1, [("g-0", "acked"), ("g-1", "acked")])
    book.receive(7.0, [("g-2", "acked")])
    verdict = check(book.log)
    only(verdict)
    assert verdict.summary()["redeliveries"] == 2
    assert verdict.summary()["left_to_expire"] == 2


def test_a_message_never_acked_is_lost() -> None:
    book = Book()
    book.clean_group("g", 2, 0.0)
    book.send("g", 2, 5.0)
    book.receive(6.0, [("g-2", "left")])
    book.send("h", 0, 5.0)  # never delivered
    verdict = check(book.log)
    only(verdict, lost=2)
    assert verdict.lost_never_delivered == 1


def test_an_unanswered_ack_counts_as_acked_but_unverified() -> None:
    book = Book()
    book.send("g", 0, 0.0)
    book.receive(1.0, [("g-0", "ack_unanswered")])
    verdict = check(book.log)
    only(verdict)
    assert verdict.ack_unverified == 1


def test_a_later_message_delivered_before_an_earlier_one_breaks_order() -> None:
    book = Book()
    for i in range(3):
        book.send("g", i, i * 0.1)
    book.receive(1.0, [("g-0", "acked")])
    book.receive(2.0, [("g-2", "acked")])  # 1 skipped
    book.receive(3.0, [("g-1", "acked")])
    verdict = check(book.log)
    only(verdict, order_violations=1)
    assert verdict.samples["order_violations"][0]["unacked_index"] == 1


def test_a_later_message_delivered_while_an_expired_one_waits_breaks_order() -> None:
    book = Book()
    book.send("g", 0, 0.0)
    book.send("g", 1, 0.1)
    book.receive(1.0, [("g-0", "left")])
    book.receive(1.0 + VIS + 0.5, [("g-1", "acked")])  # 0's lease ran out, 0 never came back
    book.receive(9.0, [("g-0", "acked")])
    verdict = check(book.log)
    only(verdict, order_violations=1)


def test_order_within_one_batch_is_judged_by_position() -> None:
    book = Book()
    book.send("g", 0, 0.0)
    book.send("g", 1, 0.1)
    book.receive(1.0, [("g-1", "acked"), ("g-0", "acked")])
    only(check(book.log), order_violations=1)


def test_a_delivery_while_an_earlier_message_is_leased_is_inflight_and_order() -> None:
    book = Book()
    book.send("g", 0, 0.0)
    book.send("g", 1, 0.1)
    book.receive(1.0, [("g-0", "acked")], consumer=0, ack_at=4.0)
    book.receive(2.0, [("g-1", "acked")], consumer=1)  # 0 leased until 4.0 (its ack)
    verdict = check(book.log)
    only(verdict, inflight_violations=1, order_violations=1)
    assert verdict.samples["inflight_violations"][0]["leased"]["index"] == 0


def test_a_delivery_right_after_the_earlier_ack_is_not_inflight() -> None:
    book = Book()
    book.send("g", 0, 0.0)
    book.send("g", 1, 0.1)
    book.receive(1.0, [("g-0", "acked")], ack_at=2.0)
    # Sent after the ack was sent: the ack may have been applied before it.
    book.receive(2.01, [("g-1", "acked")], consumer=1)
    only(check(book.log))


def test_the_same_message_twice_inside_its_lease_is_double() -> None:
    book = Book()
    book.send("g", 0, 0.0)
    book.receive(1.0, [("g-0", "acked")], ack_at=4.0)
    book.receive(2.0, [("g-0", "acked")], consumer=1)
    only(check(book.log), double_in_lease=1)


def test_a_redelivery_after_the_lease_ran_out_is_not_double() -> None:
    book = Book()
    book.send("g", 0, 0.0)
    book.receive(1.0, [("g-0", "left")])
    book.receive(1.0 + VIS, [("g-0", "acked")])
    only(check(book.log))


def test_a_retried_send_answered_with_another_id_is_a_dup_stored() -> None:
    book = Book()
    book.send("g", 0, 0.0)
    seq = book.seq_of("g-0")
    book.send("g", 0, 0.2, message_id="id-other", seq=seq, retried=True)
    book.receive(1.0, [("g-0", "acked")])
    verdict = check(book.log)
    only(verdict, dup_stored=1)
    assert verdict.retries_same_id == 0


def test_a_retried_send_answered_with_the_same_id_is_fine() -> None:
    book = Book()
    book.send("g", 0, 0.0)
    book.send("g", 0, 0.2, seq=book.seq_of("g-0"), retried=True)
    book.receive(1.0, [("g-0", "acked")])
    verdict = check(book.log)
    only(verdict)
    assert (verdict.sends_retried, verdict.retries_same_id) == (1, 1)


def test_two_ids_delivered_for_one_dedup_id_is_a_dup_stored() -> None:
    book = Book()
    book.send("g", 0, 0.0, answered=False)  # no answer: retried; both stored
    book.send("g", 0, 0.5, retried=True)
    book.receive(1.0, [("g-0", "acked")])
    book.receive(2.0, [("g-0", "acked")], message_ids={"g-0": "id-ghost"})
    verdict = check(book.log)
    # The ghost is also the same message delivered after its ack answered.
    only(verdict, dup_stored=1, delivered_after_ack=1)
    assert verdict.sends_unanswered == 1


def test_a_message_delivered_after_its_ack_answered() -> None:
    book = Book()
    book.send("g", 0, 0.0)
    book.receive(1.0, [("g-0", "acked")])
    book.receive(3.0, [("g-0", "acked")])
    only(check(book.log), delivered_after_ack=1)


def test_a_stale_delete_answered_success_proves_no_ack() -> None:
    """SQS answers success to a delete whose delivery is over: X's late delete came after
    the message went to Y, so a delivery after it is no delivery after an ack."""
    book = Book()
    book.send("g", 0, 0.0)
    book.receive(1.0, [("g-0", "acked")], ack_at=7.0)  # X: its lease ended at 6.0
    book.receive(6.5, [("g-0", "left")], consumer=1)  # Y, before X's delete
    book.receive(12.0, [("g-0", "acked")], consumer=2)
    only(check(book.log))


def test_a_delete_sent_after_its_lease_ended_proves_no_ack() -> None:
    """A receive whose answer came after the lease had ended (a slow server): its delete,
    answered success, may have come too late, and a delivery after it is no violation."""
    book = Book()
    book.send("g", 0, 0.0)
    book.receive(1.0, [("g-0", "acked")], ack_at=1.0 + VIS + 1)  # sent after its lease
    book.receive(1.0 + VIS + 5, [("g-0", "acked")], consumer=1)  # nobody came between
    only(check(book.log))


def test_lost_when_the_only_success_came_after_a_redelivery() -> None:
    book = Book()
    book.send("g", 0, 0.0)
    book.receive(1.0, [("g-0", "acked")], ack_at=7.0)
    book.receive(6.5, [("g-0", "left")], consumer=1)  # nobody acks this one
    verdict = check(book.log)
    only(verdict, lost=1)
    assert verdict.samples["lost"][0]["outcomes"] == ["acked", "left"]


def test_a_wrong_group_or_sequence_number_attribute() -> None:
    book = Book()
    book.send("g", 0, 0.0)
    book.send("g", 1, 0.1)
    book.receive(1.0, [("g-0", "acked")], group_attr="other")
    book.receive(2.0, [("g-1", "acked")], seq_attr="1")
    only(check(book.log), attribute_mismatches=3)  # 1's two numbers count once more


def test_sequence_numbers_that_do_not_grow_with_send_order() -> None:
    book = Book()
    book.send("g", 0, 0.0, seq="500")
    book.send("g", 1, 0.1, seq="400")
    book.receive(1.0, [("g-0", "acked")])
    book.receive(2.0, [("g-1", "acked")])
    verdict = check(book.log)
    only(verdict, attribute_mismatches=1)
    assert verdict.samples["attribute_mismatches"][0]["index"] == 1


def test_groups_are_judged_apart() -> None:
    book = Book()
    book.send("a", 0, 0.0)
    book.send("b", 0, 0.0)
    # a's message leased while b's is delivered: no rule between groups.
    book.receive(1.0, [("a-0", "acked")], ack_at=4.0)
    book.receive(2.0, [("b-0", "acked")], consumer=1)
    only(check(book.log))


def test_an_event_log_round_trips_through_jsonl(tmp_path: Path) -> None:
    book = Book()
    book.clean_group("g", 3, 0.0)
    book.send("g", 3, 9.0, answered=False)
    path = tmp_path / "events.jsonl"
    write_jsonl(book.log, path)
    again = read_jsonl(path)
    assert again == book.log
    assert check(again).summary() == check(book.log).summary()
