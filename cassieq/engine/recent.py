"""Values this server read or wrote a moment ago, trusted for a short while.

A bounded map with an age limit on the engine's clock. Used only for hints whose use is
confirmed by a compare-and-set (pointers, the invisibility state, bucket snapshots).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from cassieq.engine.context import EngineContext

K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    def __init__(self, ctx: EngineContext, max_age_ms: int, max_entries: int = 4096) -> None:
        self._clock = ctx.clock
        self._max_age_ms = max_age_ms
        self._max_entries = max_entries
        self._values: OrderedDict[K, tuple[V, int]] = OrderedDict()

    def get(self, key: K) -> V | None:
        hit = self._values.get(key)
        if hit is None:
            return None
        age = self._clock.now() - hit[1]
        # A clock stepped back (a negative age) must not extend the trust.
        if not 0 <= age < self._max_age_ms:
            return None
        return hit[0]

    async def get_or_load(self, key: K, load: Callable[[], Awaitable[V]]) -> V:
        """The value if recent, else ``load()``'s, kept from now on."""
        value = self.get(key)
        if value is None:
            value = await load()
            self.put(key, value)
        return value

    def replace(self, key: K, value: V) -> None:
        """A new value for a present key, keeping the time it was first put."""
        hit = self._values.get(key)
        if hit is not None:
            self._values[key] = (value, hit[1])

    def put(self, key: K, value: V, at: int | None = None) -> None:
        """Keep ``value``, trusted from ``at`` (when what it says was true; default now)."""
        self._values[key] = (value, self._clock.now() if at is None else at)
        self._values.move_to_end(key)
        while len(self._values) > self._max_entries:
            self._values.popitem(last=False)

    def __len__(self) -> int:
        return len(self._values)

    def drop(self, key: K) -> None:
        self._values.pop(key, None)
