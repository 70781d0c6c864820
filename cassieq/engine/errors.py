"""The engine's errors: a small named hierarchy the API maps to status codes."""

from __future__ import annotations


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""


class NotFound(EngineError):
    pass


class AccountNotFound(NotFound):
    pass


class QueueNotFound(NotFound):
    pass


class KeyNotFound(NotFound):
    pass


class Conflict(EngineError):
    pass


class AccountExists(Conflict):
    pass


class QueueExists(Conflict):
    pass


class KeyExists(Conflict):
    pass


class QueueLimitReached(Conflict):
    """The account has as many queues as it may (Tuning.max_queues_per_account)."""


class PartitionsCannotShrink(Conflict):
    """A queue's partitions only grow: a partition removed would strand its messages."""


class FifoCannotChange(Conflict):
    """A queue is FIFO or standard from its creation, and a FIFO queue's partitions are
    fixed (its groups are ordered within the partition their ids hash to)."""


class StaleReceipt(Conflict):
    """The receipt's delivery is over: acked, redelivered, updated, or never was."""


class InvalidArgument(EngineError):
    pass


class MessageTooLarge(InvalidArgument):
    """A message (or a new body) over its queue's maxMessageBytes. ``where`` names it as v2
    does (``messages[2]``, ``entries[0].body``); each API words the refusal its own way."""

    def __init__(self, where: str, size: int, limit: int, counted: str = "") -> None:
        super().__init__(
            f"{where} is {size} bytes{counted}: more than the queue's maxMessageBytes, {limit}"
        )
        self.where = where
        self.size = size
        self.limit = limit


class Contention(EngineError):
    """Compare-and-set kept losing; the caller may retry later."""


class Unsettled(Contention):
    """The store could not settle this entry of a batch now: it may or may not be done.

    Reported per entry so that the other buckets' entries of the same batch are still
    answered; retrying it is safe (an ack that had applied answers stale)."""


class SubscriptionNotFound(NotFound):
    pass


class SubscriptionExists(Conflict):
    """A subscription of that name exists with other options (mode or start)."""


class PositionConflict(Conflict):
    """A commit's ``expected`` position is not the stored one (someone else moved it)."""


class SubscriptionLimitReached(Conflict):
    pass
