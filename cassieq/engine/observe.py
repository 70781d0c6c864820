"""Instrumentation: observers with named hooks, as Dramatiq's middleware.

An engine takes a list of observers (``QueueEngine(store, observers=[...])``) and calls
their hooks at the one place each event happens:

- ``store_call(primitive)``: every Store primitive the engine calls (the store façade,
  ``ObservedStore``: the engine's store when any observer hears this hook);
- ``lwt_outcome(primitive, event)``: every LWT outcome the store reports (the engine
  registers its observers with the store; see ``Store.add_lwt_observer``);
- ``delivered(queue, count)``: messages delivered by one consuming batch (life/take.py);
- ``dead_lettered(queue, count)``: a message retired as dead-lettered, moved to its
  dead-letter queue or dropped when the queue sets none (life/dead_letter.py);
- ``repair_moved(queue, count)``: a late write re-published by repair (upkeep/repair.py);
- ``subscription_read(queue, name, count)``: an ordered read of subscription ``name``
  answered ``count`` messages; ``subscription_committed(queue, name, applied)``: a commit or
  seek of it was stored (True) or refused as a PositionConflict (False)
  (replay/subscriptions.py).

Every hook is a no-op in ``Observer``: subclass it and override the hooks you need. Only
the observers that override a hook are called for it, and a hook no observer overrides
costs one call of an empty function; with no observer of ``store_call`` the engine talks to
the store itself (no façade). Hooks run inline on the engine's path: keep them to counting.

The move hooks fire when the original's retirement applies, not in the shared move routine
(life/move.py): a move writes its copy once, but may be redone after a crash (the copy's
insert is then a no-op) and its claim may be lost to another server, so only the retiring
compare-and-set is the one place where a move happens exactly once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, cast

from cassieq.model import QueueDefinition
from cassieq.store.base import Store
from cassieq.store.observer import LWT_PRIMITIVES, LwtEvent

HOOKS = (
    "store_call",
    "lwt_outcome",
    "delivered",
    "dead_lettered",
    "repair_moved",
    "deduplicated",
    "group_held",
    "subscription_read",
    "subscription_committed",
    "subscription_delivered",
    "subscription_acked",
    "subscription_expired",
)


class Observer:
    """Named hooks, each a no-op: override the ones you need."""

    def store_call(self, primitive: str) -> None:
        """The engine called ``primitive`` of its store (once per call)."""

    def lwt_outcome(self, primitive: str, event: LwtEvent) -> None:
        """The store settled an LWT of ``primitive`` (one per round of a batch)."""

    def delivered(self, queue: QueueDefinition, count: int) -> None:
        """``count`` messages of ``queue`` were delivered (their consuming write applied)."""

    def dead_lettered(self, queue: QueueDefinition, count: int) -> None:
        """``count`` messages of ``queue`` were retired as dead-lettered."""

    def repair_moved(self, queue: QueueDefinition, count: int) -> None:
        """Repair re-published ``count`` late writes of ``queue`` (originals retired)."""

    def deduplicated(self, queue: QueueDefinition, count: int) -> None:
        """``count`` sends to FIFO ``queue`` were duplicates (answered with the first's)."""

    def group_held(self, queue: QueueDefinition, count: int) -> None:
        """``count`` messages of FIFO ``queue`` were held back: an earlier message of their
        group was unretired (in flight, or waiting for its turn)."""

    def subscription_read(self, queue: QueueDefinition, name: str, count: int) -> None:
        """An ordered read of subscription ``name`` of ``queue`` answered ``count``
        messages (0 included: the read was made)."""

    def subscription_committed(self, queue: QueueDefinition, name: str, applied: bool) -> None:
        """A commit or seek of subscription ``name`` of ``queue``: its position stored
        (``applied``), or refused as a PositionConflict (the expected position was not the
        stored one, or it kept moving)."""

    def subscription_delivered(self, queue: QueueDefinition, name: str, count: int) -> None:
        """Shared subscription ``name`` of ``queue`` delivered ``count`` messages (first
        deliveries and again after a lease ran out)."""

    def subscription_acked(self, queue: QueueDefinition, name: str, count: int) -> None:
        """``count`` deliveries of shared subscription ``name`` were acked."""

    def subscription_expired(self, queue: QueueDefinition, name: str, count: int) -> None:
        """``count`` messages were retired unread by shared subscription ``name``: they
        outlived the queue's messageRetentionSeconds (or their bucket was dropped)."""


def _nothing(*_: Any) -> None:
    return None


def _fan_out(observers: Sequence[Observer], hook: str) -> Callable[..., None]:
    """One callable for a hook: the observers that override it, called in list order."""
    hearing = [
        getattr(o, hook) for o in observers if getattr(type(o), hook) is not getattr(Observer, hook)
    ]
    if not hearing:
        return _nothing
    if len(hearing) == 1:
        return cast(Callable[..., None], hearing[0])

    def every(*args: Any) -> None:
        for heard in hearing:
            heard(*args)

    return every


class Observers:
    """The engine's observers, one callable per hook (see the module's doc)."""

    def __init__(self, observers: Sequence[Observer] = ()) -> None:
        self.observers = tuple(observers)
        self.store_call: Callable[[str], None] = _fan_out(self.observers, "store_call")
        self.lwt_outcome: Callable[[str, LwtEvent], None] = _fan_out(self.observers, "lwt_outcome")
        self.delivered: Callable[[QueueDefinition, int], None] = _fan_out(
            self.observers, "delivered"
        )
        self.dead_lettered: Callable[[QueueDefinition, int], None] = _fan_out(
            self.observers, "dead_lettered"
        )
        self.repair_moved: Callable[[QueueDefinition, int], None] = _fan_out(
            self.observers, "repair_moved"
        )
        self.deduplicated: Callable[[QueueDefinition, int], None] = _fan_out(
            self.observers, "deduplicated"
        )
        self.group_held: Callable[[QueueDefinition, int], None] = _fan_out(
            self.observers, "group_held"
        )
        self.subscription_read: Callable[[QueueDefinition, str, int], None] = _fan_out(
            self.observers, "subscription_read"
        )
        self.subscription_committed: Callable[[QueueDefinition, str, bool], None] = _fan_out(
            self.observers, "subscription_committed"
        )
        self.subscription_delivered: Callable[[QueueDefinition, str, int], None] = _fan_out(
            self.observers, "subscription_delivered"
        )
        self.subscription_acked: Callable[[QueueDefinition, str, int], None] = _fan_out(
            self.observers, "subscription_acked"
        )
        self.subscription_expired: Callable[[QueueDefinition, str, int], None] = _fan_out(
            self.observers, "subscription_expired"
        )

    def hears(self, hook: str) -> bool:
        return getattr(self, hook) is not _nothing

    def attach(self, store: Store) -> Store:
        """The store the engine should talk to: ``store`` itself, or (``store_call`` heard)
        the façade that reports each call. The observers of ``lwt_outcome`` are registered
        with the store, each once (one observer given to two engines on a store hears each
        outcome once); the store holds them weakly, this object (the engine's) strongly.
        LWT outcomes are the store's: an observer hears those of every engine on its store
        (a server has one)."""
        for observer in self.observers:
            if type(observer).lwt_outcome is not Observer.lwt_outcome:
                store.add_lwt_observer(observer)
        if not self.hears("store_call"):
            return store
        return cast(Store, ObservedStore(store, self.store_call))


def _primitives() -> tuple[str, ...]:
    return tuple(
        name for name, value in vars(Store).items() if callable(value) and not name.startswith("_")
    )


# Every primitive of the Store protocol (what the façade reports).
STORE_PRIMITIVES = _primitives()


class ObservedStore:
    """The store façade: each primitive of the protocol reports its call, then runs. Built
    once per engine (a bound wrapper per primitive), so a call pays one extra function call
    and no attribute search. Anything else (a test store's extras) passes through."""

    def __init__(self, inner: Store, store_call: Callable[[str], None]) -> None:
        self.inner = inner
        for name in STORE_PRIMITIVES:
            target = getattr(inner, name, None)
            if target is not None:
                setattr(self, name, _reported(name, target, store_call))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _reported(name: str, target: Callable[..., Any], store_call: Callable[[str], None]) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        store_call(name)
        return target(*args, **kwargs)

    call.__name__ = name
    return call


class CallCounter(Observer):
    """Counts the engine's store calls by primitive, and LWT outcomes (tests, the bench)."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.lwt_events: Counter[tuple[str, LwtEvent]] = Counter()

    def store_call(self, primitive: str) -> None:
        self.calls[primitive] += 1

    def lwt_outcome(self, primitive: str, event: LwtEvent) -> None:
        self.lwt_events[(primitive, event)] += 1

    def reset(self) -> None:
        self.calls.clear()
        self.lwt_events.clear()

    @property
    def lwts(self) -> int:
        """Calls of primitives that are an LWT in the Cassandra store (on either store)."""
        return sum(n for name, n in self.calls.items() if name in LWT_PRIMITIVES)

    def rounds(self, primitive: str) -> int:
        """LWTs the store sent for ``primitive`` (a batch call may send several rounds; the
        memory store reports none)."""
        return sum(n for (p, _), n in self.lwt_events.items() if p == primitive)
