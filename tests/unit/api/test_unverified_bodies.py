"""The room for bodies read before their signature is checked (cassieq.api.unverified_bodies)."""

from __future__ import annotations

import pytest

from cassieq.api.unverified_bodies import NoRoomForBody, UnverifiedBodies

MIB = 1024 * 1024


async def test_room_is_bounded_per_account_and_in_all_and_given_back() -> None:
    room = UnverifiedBodies(max_bytes=3 * MIB, max_bytes_per_account=2 * MIB)
    async with room.room("a", MIB), room.room("a", MIB):  # a's share, full
        with pytest.raises(NoRoomForBody):
            async with room.room("a", 1):
                pass
        async with room.room("b", MIB):  # b's own room, and the last of the total
            assert room.held == 3 * MIB
            with pytest.raises(NoRoomForBody):
                async with room.room("c", 1):
                    pass
    assert room.held == 0
    async with room.room("a", 2 * MIB):  # all back
        pass


async def test_room_is_given_back_when_the_check_fails() -> None:
    room = UnverifiedBodies(max_bytes=2 * MIB, max_bytes_per_account=MIB)
    with pytest.raises(ValueError, match="bad signature"):
        async with room.room("a", MIB):
            raise ValueError("bad signature")
    assert room.held == 0
    async with room.room("a", MIB):
        pass


async def test_one_body_larger_than_a_share_passes_alone() -> None:
    # The route's own limit bounds a body; a lone client must be able to send its largest.
    room = UnverifiedBodies(max_bytes=2 * MIB, max_bytes_per_account=MIB)
    async with room.room("a", 3 * MIB):
        with pytest.raises(NoRoomForBody):
            async with room.room("b", 1):
                pass
