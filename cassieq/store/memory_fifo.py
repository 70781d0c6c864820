"""The memory store's FIFO rows (the same protocol as schemas 0013, 0016 and 0017). No TTLs here:
the engine judges a claim's or an attempt's age, and a group's row is kept as long as the
store."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from cassieq.model import QueueId
from cassieq.store.base import DedupClaim


class MemoryFifo:
    """Mixed into MemoryStore."""

    _groups: dict[tuple[QueueId, str], set[int]]
    _group_ids: dict[QueueId, set[str]]
    _dedup: dict[tuple[QueueId, str], DedupClaim]
    _group_dedup: dict[tuple[QueueId, str, str], DedupClaim]
    _attempts: dict[tuple[QueueId, str], tuple[int, bytes]]

    async def add_group_messages(
        self, queue: QueueId, group: str, monotons: list[int], now: int, ttl_s: int
    ) -> None:
        self._groups.setdefault((queue, group), set()).update(monotons)

    async def read_group_messages(self, queue: QueueId, group: str, limit: int) -> list[int]:
        return sorted(self._groups.get((queue, group), ()))[:limit]

    async def remove_group_messages(self, queue: QueueId, group: str, monotons: list[int]) -> None:
        entries = self._groups.get((queue, group))
        if entries is not None:
            entries.difference_update(monotons)
            if not entries:
                del self._groups[(queue, group)]

    async def touch_group(self, queue: QueueId, group: str, now: int, ttl_s: int) -> None:
        self._group_ids.setdefault(queue, set()).add(group)

    async def list_groups(self, queue: QueueId, after: str, limit: int) -> list[str]:
        return sorted(g for g in self._group_ids.get(queue, ()) if g > after)[:limit]

    async def read_dedup(self, queue: QueueId, key: str) -> DedupClaim | None:
        return self._dedup.get((queue, key))

    async def claim_dedup(self, claim: DedupClaim, queue: QueueId, ttl_s: int) -> DedupClaim | None:
        stored = self._dedup.get((queue, claim.key))
        if stored is not None:
            return stored
        self._dedup[(queue, claim.key)] = claim
        return None

    async def replace_dedup(
        self, queue: QueueId, expected_tag: str, claim: DedupClaim, ttl_s: int
    ) -> bool:
        stored = self._dedup.get((queue, claim.key))
        if stored is None or stored.tag != expected_tag:
            return False
        self._dedup[(queue, claim.key)] = claim
        return True

    async def mark_dedup_written(self, queue: QueueId, key: str, ttl_s: int) -> None:
        stored = self._dedup.get((queue, key))
        if stored is not None:  # a plain write: whatever claim is kept now is marked
            self._dedup[(queue, key)] = msgspec.structs.replace(stored, written=True)

    async def read_group_dedup(
        self, queue: QueueId, group: str, keys: Sequence[str]
    ) -> dict[str, DedupClaim]:
        found = ((k, self._group_dedup.get((queue, group, k))) for k in keys)
        return {k: claim for k, claim in found if claim is not None}

    async def claim_group_dedup(
        self, queue: QueueId, group: str, claims: Sequence[DedupClaim], ttl_s: int
    ) -> dict[str, DedupClaim]:
        held: dict[str, DedupClaim] = {}
        for claim in claims:
            stored = self._group_dedup.get((queue, group, claim.key))
            if stored is None:
                self._group_dedup[(queue, group, claim.key)] = claim
            else:
                held[claim.key] = stored
        return held

    async def replace_group_dedup(
        self, queue: QueueId, group: str, expected_tag: str, claim: DedupClaim, ttl_s: int
    ) -> bool:
        stored = self._group_dedup.get((queue, group, claim.key))
        if stored is None or stored.tag != expected_tag:
            return False
        self._group_dedup[(queue, group, claim.key)] = claim
        return True

    async def mark_group_dedup_written(
        self, queue: QueueId, group: str, keys: Sequence[str], ttl_s: int
    ) -> None:
        for key in keys:
            stored = self._group_dedup.get((queue, group, key))
            if stored is not None:
                self._group_dedup[(queue, group, key)] = msgspec.structs.replace(
                    stored, written=True
                )

    async def write_receive_attempt(
        self, queue: QueueId, attempt_id: str, now: int, answer: bytes, ttl_s: int
    ) -> None:
        self._attempts[(queue, attempt_id)] = (now, answer)

    async def read_receive_attempt(
        self, queue: QueueId, attempt_id: str
    ) -> tuple[int, bytes] | None:
        return self._attempts.get((queue, attempt_id))
