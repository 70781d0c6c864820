"""#40 finding 10: every grant ends, and one that could never be valid is not issued, on
both stores. A grant issued without ``endTime`` gets one, ``GRANT_DEFAULT_LIFETIME`` (7 days)
after its issue or its later start; ``endTime`` not after ``startTime`` is refused (422, v1's
answer to an invalid body, naming both). The issuing clock is the engine's (a FakeClock
here); grants are verified against the wall clock, as the guard does."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.store.base import Store
from tests.conftest import AppClient, app_client

TOKEN = "grant-windows-operator-token"
DAY = 86_400


@pytest.fixture
def api(store: Store) -> Iterator[AppClient[FakeClock]]:
    # The engine's clock starts at the wall clock's second: a grant issued now is valid now.
    clock = FakeClock(int(time.time()) * 1000)
    with app_client(AppClient, store, Settings(admin_token=TOKEN), clock, prefix="grant") as api:
        api.create_v1_queue("q")
        yield api


def issue(api: AppClient[FakeClock], **times: str) -> Any:
    body = {"accountName": api.account, "keyName": "primary", "levels": ["p"], **times}
    return api.client.post("/api/v1/permissions", json=body, headers=api.admin)


def params(issued: Any) -> dict[str, str]:
    assert issued.status_code == 201, issued.text
    pairs = (p.partition("=") for p in issued.json()["queryParam"].split("&"))
    return {k: v for k, _, v in pairs}


def put_with(api: AppClient[FakeClock], grant: dict[str, str]) -> int:
    path = f"{api.v1}/queues/q/messages"
    status: int = api.client.post(path, content=b"m", params=grant).status_code
    return status


def at(clock: FakeClock, seconds: float = 0) -> str:
    when = datetime.fromtimestamp(clock.now() / 1000, UTC) + timedelta(seconds=seconds)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_grant_without_an_end_ends_seven_days_after_its_issue(
    api: AppClient[FakeClock],
) -> None:
    grant = params(issue(api))
    assert grant["et"] == at(api.clock, 7 * DAY) and "st" not in grant
    assert put_with(api, grant) == 201
    # Issued eight days ago (the engine's clock), it has ended by now.
    api.clock.advance(-8 * DAY)
    old = params(issue(api))
    assert old["et"] == at(api.clock, 7 * DAY)
    assert put_with(api, old) == 401


def test_a_grant_starting_later_ends_seven_days_after_its_start(
    api: AppClient[FakeClock],
) -> None:
    grant = params(issue(api, startTime=at(api.clock, 3 * DAY)))
    assert (grant["st"], grant["et"]) == (at(api.clock, 3 * DAY), at(api.clock, 10 * DAY))
    # One that started in the past ends seven days after its issue, not its start.
    past = params(issue(api, startTime="2000-01-01T00:00:00Z"))
    assert past["et"] == at(api.clock, 7 * DAY)
    assert put_with(api, past) == 201


def test_an_explicit_end_is_kept_however_far(api: AppClient[FakeClock]) -> None:
    grant = params(issue(api, endTime="2999-01-01T00:00:00Z"))
    assert grant["et"] == "2999-01-01T00:00:00Z"
    assert put_with(api, grant) == 201


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("2026-11-22T12:00:00Z", "2026-11-22T11:00:00Z"),  # start after end
        ("2026-11-22T12:00:00Z", "2026-11-22T12:00:00Z"),  # no time at all
        ("2026-11-22T12:00:00.200Z", "2026-11-22T12:00:00.900Z"),  # the same signed second
        ("2026-11-22T12:00:00+01:00", "2026-11-22T11:30:00Z"),  # 11:00Z, then 11:30Z: fine
    ],
)
def test_an_end_not_after_the_start_is_refused(
    api: AppClient[FakeClock], start: str, end: str
) -> None:
    issued = issue(api, startTime=start, endTime=end)
    if end == "2026-11-22T11:30:00Z":
        assert issued.status_code == 201, issued.text
        return
    assert issued.status_code == 422, issued.text
    (problem,) = issued.json()["errors"]
    assert "endTime" in problem and "must be after startTime" in problem


def test_a_start_too_late_for_the_default_end_is_a_422_not_a_500(
    api: AppClient[FakeClock],
) -> None:
    issued = issue(api, startTime="9999-12-31T00:00:00Z")
    assert issued.status_code == 422, issued.text
    assert "endTime" in issued.json()["errors"][0]
