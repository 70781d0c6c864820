"""The store's part for shared subscriptions (schema 0015): their delivery rows, and the
move of a subscription's whole state (position, done, generation) by compare-and-set.

Kept apart from base.py (at its size limit); ``Store`` includes this protocol.
"""

from __future__ import annotations

from typing import Protocol

from cassieq.model import QueueId
from cassieq.model_subscriptions import SubDelivery, SubscriptionDef

# (expected version, expected tag, the row as the change leaves it, whether it is a take):
# a take (a delivery, or a first row's re-delivery) writes the whole state; any other change
# (an ack, a new lease, a retirement) writes only the version, lease end, finish, update
# time and change token, the rest kept as stored (its caller never read it).
DeliveryChange = tuple[int, str, SubDelivery, bool]


class SharedSubscriptionRows(Protocol):
    async def cas_subscription(
        self, queue: QueueId, name: str, expected_revision: int, new: SubscriptionDef
    ) -> bool:
        """Store ``new``'s position, done position and generation (its revision must be
        ``expected_revision`` + 1, its change token new) if the stored revision is still
        ``expected_revision``; False when it is not (or the subscription is gone)."""
        ...

    async def read_sub_deliveries(
        self, queue: QueueId, name: str, bucket: int, generation: int
    ) -> list[SubDelivery]:
        """Subscription ``name``'s delivery rows of ``generation`` in ``bucket`` of queue
        partition ``queue``, by monoton."""
        ...

    async def insert_sub_deliveries(
        self, queue: QueueId, name: str, bucket: int, generation: int, rows: list[SubDelivery]
    ) -> list[bool]:
        """First deliveries: each row is stored if the message has none yet (INSERT IF NOT
        EXISTS, each decided on its own, as ``cas_messages``); in order, whether this call
        stored it. ValueError for two rows of one message."""
        ...

    async def cas_sub_deliveries(
        self, queue: QueueId, name: str, bucket: int, generation: int,
        entries: list[DeliveryChange],
    ) -> list[bool]:  # fmt: skip
        """Each change applied if the row is still at its expected version and tag (each
        decided on its own); in order, whether this call applied it. ValueError for two
        entries of one message."""
        ...

    async def delete_sub_deliveries(self, queue: QueueId, name: str, bucket: int) -> None:
        """Every delivery row of ``bucket`` for the subscription (all generations)."""
        ...


def check_unique(monotons: list[int]) -> None:
    if len(set(monotons)) != len(monotons):
        raise ValueError("two entries of one message in one call")
