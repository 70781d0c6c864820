"""Fair admission (cassieq.api.admission): when every place is taken, places go to the
accounts waiting in turns, a place is given back once, and a request still running after
the hold gives its place back (a long poll's wait holds none)."""

from __future__ import annotations

import asyncio

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from litestar.testing import TestClient

from cassieq.api.admission import FairAdmission
from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.store.memory import MemoryStore


async def test_places_go_to_the_accounts_in_turns() -> None:
    admission = FairAdmission(slots=2, hold_s=60)
    first, second = await admission.enter("a"), await admission.enter("a")
    order: list[str] = []

    async def one(account: str) -> None:
        place = await admission.enter(account)
        order.append(account)
        admission.leave(place)

    # A floods: five requests in line before B's one.
    waiting = [asyncio.create_task(one("a")) for _ in range(5)]
    waiting.append(asyncio.create_task(one("b")))
    while admission.waiting < 6:  # noqa: ASYNC110 (a turn of the loop each, no timing)
        await asyncio.sleep(0)  # let each task reach its line
    admission.leave(first)
    await asyncio.gather(*waiting)
    # B's request went second, not sixth: after A's first turn, its own.
    assert order == ["a", "b", "a", "a", "a", "a"]
    assert admission.waited == 6
    admission.leave(second)
    admission.leave(second)  # once only: the second call gives nothing back
    assert admission._free == 2 and not admission._lines


async def test_a_place_held_past_the_hold_is_given_back() -> None:
    admission = FairAdmission(slots=1, hold_s=0.01)
    long_poll = await admission.enter("a")
    # Still running (waiting for messages): its place comes back after the hold.
    other = await asyncio.wait_for(admission.enter("b"), 5)
    assert long_poll is not None and not long_poll.held
    admission.leave(long_poll)  # its end: nothing more given back
    admission.leave(other)
    assert admission._free == 1


async def test_a_request_cancelled_in_line_leaves_it() -> None:
    admission = FairAdmission(slots=1, hold_s=60)
    held = await admission.enter("a")
    cancelled = asyncio.create_task(admission.enter("b"))
    while not admission.waiting:  # noqa: ASYNC110 (a turn of the loop, no timing)
        await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert admission.waiting == 0
    admission.leave(held)
    assert admission._free == 1


async def test_off_admits_everything() -> None:
    admission = FairAdmission(slots=0)
    assert [await admission.enter("a") for _ in range(100)] == [None] * 100


def test_every_request_gives_its_place_back_on_each_api() -> None:
    """Wired into the app: v1, v2 and SQS requests, answered or refused, each take a place
    and give it back (a place kept would only come back after the hold, 60 s here)."""
    token = "t" * 32
    settings = Settings(
        admin_token=token, http_fair_admission_slots=1, http_fair_admission_hold_seconds=60
    )
    app = create_app(settings, MemoryStore(), background=False)
    admission: FairAdmission = app.state.cassieq.admission
    with TestClient(app=app) as client:
        created = client.post(
            "/api/v1/accounts", json="fair", headers={"Authorization": f"Bearer {token}"}
        )
        key = created.json()["keys"]["primary"]
        auth = {"Authorization": f"Key {key}"}
        assert (
            client.post(
                "/api/v1/accounts/fair/queues", json={"queueName": "q"}, headers=auth
            ).status_code
            == 201
        )
        answers = [
            client.post(
                "/api/v1/accounts/fair/queues/q/messages",
                content=b"m",
                headers={**auth, "Content-Type": "text/plain"},
            ),
            client.get("/api/v1/accounts/fair/queues/missing", headers=auth),
            client.post(
                "/api/v2/accounts/fair/queues/q/messages/receive",
                json={"maxMessages": 1},
                headers=auth,
            ),
        ]
        assert [a.status_code for a in answers] == [201, 404, 200]
        request = AWSRequest(
            method="POST",
            url=f"{client.base_url}/",
            data=b"Action=ListQueues&Version=2012-11-05",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        SigV4Auth(Credentials("fair", key), "sqs", "us-east-1").add_auth(request)
        listed = client.post("/", content=request.body, headers=dict(request.headers))
        assert listed.status_code == 200, listed.text
        assert admission._free == 1 and admission.waited == 0
