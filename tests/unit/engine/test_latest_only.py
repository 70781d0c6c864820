"""One delivery per message in a receive's answer (engine/life/take.py ``latest_only``)."""

from __future__ import annotations

from cassieq.engine.life.take import latest_only
from cassieq.model import Delivery, PopReceipt


def _d(monoton: int, version: int, partition: int = 0) -> Delivery:
    return Delivery(
        receipt=PopReceipt(1, monoton, version, "t", partition),
        message=f"m{monoton}",
        delivery_count=version - 1,
        sent_at=0,
    )


def test_a_message_taken_twice_keeps_its_first_place_and_its_latest_receipt() -> None:
    got = [_d(5, 1), _d(6, 1), _d(7, 1), _d(5, 2), _d(6, 3)]
    answer = latest_only(got)
    assert [d.receipt.monoton for d in answer] == [5, 6, 7]
    assert [d.receipt.version for d in answer] == [2, 3, 1]


def test_messages_of_other_partitions_are_other_messages() -> None:
    got = [_d(5, 1, partition=0), _d(5, 1, partition=1)]
    assert latest_only(got) == got
