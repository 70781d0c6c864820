"""v2's one time format, made from a per-second cache: the same text as a datetime gives."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cassieq.api.v2.times import iso_time


def _by_datetime(epoch_ms: int) -> str:
    at = datetime.fromtimestamp(epoch_ms / 1000, UTC)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.mark.parametrize(
    "epoch_ms",
    [0, 1, 999, 1000, 1001, 59_999, 60_000, 1_795_000_000_000, 1_795_000_000_123, -1, -1000,
     -1001],
)  # fmt: skip
def test_iso_time_is_the_datetime_text(epoch_ms: int) -> None:
    assert iso_time(epoch_ms) == _by_datetime(epoch_ms)


def test_iso_time_of_one_second_keeps_each_millisecond() -> None:
    base = 1_795_000_000_000
    assert [iso_time(base + ms) for ms in (0, 7, 70, 700)] == [
        "2026-11-18T11:06:40.000Z",
        "2026-11-18T11:06:40.007Z",
        "2026-11-18T11:06:40.070Z",
        "2026-11-18T11:06:40.700Z",
    ]


def test_iso_time_is_exact_where_a_float_of_seconds_is_not() -> None:
    # epoch_ms / 1000 as a float rounds this to ...59.998 (the format before the cache).
    assert iso_time(253_402_300_799_999) == "9999-12-31T23:59:59.999Z"
