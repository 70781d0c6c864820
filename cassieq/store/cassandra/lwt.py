"""Lightweight transactions whose answer may not arrive: resolved, never assumed.

A compare-and-set that times out (or loses its connection, or meets Unavailable after
its proposal was accepted) may or may not have applied. Re-sending it blindly could
apply it twice or report "not applied" for our own write; assuming either outcome is
how a pointer once passed an unsealed bucket and valid receipts were called stale. So
the store reads the row back at SERIAL (which also completes any proposal of ours that
a quorum accepted) and the primitive's resolver says which of three things is true:

- APPLIED: our change is stored;
- REJECTED: not applied, and the condition is false now (someone else's change won);
- CONTENDED: not applied, and the condition still holds (Paxos contention, the usual
  cause on a multi-node cluster): send it again, after a jittered backoff, a bounded
  number of times.

When the read back itself fails, or contention outlasts every try, the outcome is
undecided and ``LwtUndecided`` is raised: the caller is told, never guessed at.
"""

from __future__ import annotations

import asyncio
import enum
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from cassandra import RequestValidationException

from cassieq.store.base import LwtUndecided
from cassieq.store.observer import LwtEvent, LwtObserver


class Outcome(enum.Enum):
    APPLIED = "applied"
    REJECTED = "rejected"
    CONTENDED = "contended"


@dataclass(frozen=True)
class LwtRetry:
    """How often a contended LWT is sent again, and how long to wait in between.

    Full jitter on an exponential cap: contenders that retried in lock-step would meet in
    the same Paxos round again. The defaults give contention about 5 s to clear.
    """

    attempts: int = 10
    base_s: float = 0.01
    cap_s: float = 1.0

    def backoff(self, attempt: int) -> float:
        return random.uniform(0, min(self.cap_s, self.base_s * 2**attempt))


Resolver = Callable[[], Awaitable[Outcome]]

# Reads of an unknown outcome before it is called undecided (see _read_back).
READ_BACK_TRIES = 3

# A "not applied" answer to a try that follows a timed-out one, once read back.
_AFTER_TIMEOUT: dict[Outcome, LwtEvent] = {
    Outcome.APPLIED: "timeout_applied",
    Outcome.REJECTED: "lost",
    Outcome.CONTENDED: "timeout_contended",
}


async def run_lwt(
    primitive: str,
    send: Callable[[], Awaitable[list[Any]]],
    resolve: Resolver,
    *,
    retry: LwtRetry,
    observer: LwtObserver,
) -> tuple[bool, Any]:
    """Send an LWT until its outcome is known; (applied, the LWT's answer row or None).

    The answer row is there when Cassandra answered (on "not applied" it carries the
    current values of the condition's columns); None when the outcome was read back.
    """
    timed_out = False
    for attempt in range(retry.attempts):
        try:
            rows = await send()
        except RequestValidationException:
            raise  # refused before executing: a bug in the statement, not an outcome
        except Exception as exc:
            timed_out = True
            outcome = await _read_back(primitive, resolve, observer, exc, retry)
            observer.lwt_outcome(primitive, f"timeout_{outcome.value}")  # type: ignore[arg-type]
        else:
            row = rows[0]
            if row.applied:
                observer.lwt_outcome(primitive, "applied")
                return True, row
            if not timed_out:
                observer.lwt_outcome(primitive, "lost")
                return False, row
            # An earlier try of this very change timed out. It may have been completed
            # since (by another proposer's Paxos round) and be what fails the condition
            # now: only the read back tells our change from someone else's.
            outcome = await _read_back(primitive, resolve, observer, None, retry)
            observer.lwt_outcome(primitive, _AFTER_TIMEOUT[outcome])
        if outcome is Outcome.APPLIED:
            return True, None
        if outcome is Outcome.REJECTED:
            return False, None
        await asyncio.sleep(retry.backoff(attempt))
    observer.lwt_outcome(primitive, "undecided")
    raise LwtUndecided(primitive, f"still contended after {retry.attempts} tries")


async def _read_back(
    primitive: str,
    resolve: Resolver,
    observer: LwtObserver,
    cause: Exception | None,
    retry: LwtRetry,
) -> Outcome:
    """The outcome as read back at SERIAL. A read that fails is tried again (not the LWT:
    its outcome is still unknown): while a node dies, the read that follows a timed-out LWT
    often meets the same dying replica, and giving up at once answered clients a 503."""
    for attempt in range(READ_BACK_TRIES):
        try:
            return await resolve()
        except RequestValidationException:
            raise
        except Exception as exc:
            if attempt + 1 < READ_BACK_TRIES:
                await asyncio.sleep(retry.backoff(attempt + 5))
                continue
            observer.lwt_outcome(primitive, "undecided")
            why = f"after {cause!r}, " if cause is not None else ""
            raise LwtUndecided(
                primitive, f"{why}its outcome could not be read back: {exc!r}"
            ) from exc
    raise AssertionError("unreachable")  # the loop returns or raises
