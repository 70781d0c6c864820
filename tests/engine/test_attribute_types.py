"""SQS attribute types (schema 0010) travel with the message: kept by a send, by changes of
its state (a delivery, a visibility change with a new body), by the dead-letter move and by
a redrive back; a message sent without them reads as all-String (no types). Both stores."""

from __future__ import annotations

from cassieq.engine import FakeClock, QueueEngine
from cassieq.model import OutgoingMessage, VisibilityChange
from tests.engine.conftest import make_queue

TYPES = {"n": "Number.float", "b": "Binary", "s": "String.x"}
ATTRS = {"n": "1.5", "b": "AAE=", "s": "text"}


async def test_types_kept_through_delivery_change_and_redelivery(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, "q")
    await engine.send(
        account,
        "q",
        [
            OutgoingMessage(body="typed", attributes=ATTRS, attribute_types=TYPES),
            OutgoingMessage(body="plain", attributes={"k": "v"}),
        ],
    )
    got = await engine.receive(account, "q", 10, 10)
    by_body = {d.message: d for d in got}
    assert by_body["typed"].attribute_types == TYPES
    assert by_body["typed"].attributes == ATTRS
    assert by_body["plain"].attribute_types == {}
    [changed] = await engine.change_visibility(
        account,
        "q",
        [VisibilityChange(receipt=by_body["typed"].receipt, invisibility_ms=0, body="new")],
    )
    assert not isinstance(changed, Exception)
    again = await engine.receive(account, "q", 10, 10)
    [typed] = [d for d in again if d.message == "new"]
    assert (typed.attributes, typed.attribute_types) == (ATTRS, TYPES)


async def test_types_kept_by_dead_letter_move_and_redrive(
    engine: QueueEngine, account: str, clock: FakeClock
) -> None:
    await make_queue(engine, account, "dead")
    await make_queue(engine, account, "work", max_delivery_count=1, dlq_name="dead")
    await engine.send(
        account, "work", [OutgoingMessage(body="m", attributes=ATTRS, attribute_types=TYPES)]
    )
    assert await engine.receive(account, "work", 1, 5)
    clock.advance(6)
    assert await engine.receive(account, "work", 1, 5) == []  # moved to "dead"
    [dead] = await engine.receive(account, "dead", 1, 5)
    assert (dead.message, dead.attribute_types) == ("m", TYPES)
    clock.advance(6)
    await engine.start_redrive(account, "dead", None, 10_000)
    await engine.redriver.join()
    [back] = await engine.receive(account, "work", 1, 5)
    assert (back.message, back.attributes, back.attribute_types) == ("m", ATTRS, TYPES)
