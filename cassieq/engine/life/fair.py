"""Fair standard queues (issue 37 item 5): one message group's backlog must not delay the
other groups' few messages.

A standard queue keeps no order, so fairness needs no gate: it is where messages are
stored. Each server counts the messages it puts per group of each queue over a short
window; a group that sent at least ``NOISY_MIN`` of them there, and more than
``NOISY_SHARE`` of the queue's, is *noisy*, and its messages go to the queue's *lane*: one
partition past the queue's count (``QueueOptions.fair_lane``, set once, on the first noisy
group any server sees). Receives already take the partitions in turn from a rotating start
(life/partitions.py), so the lane gets about one turn in ``partitions + 1`` while the
others have messages: the quiet groups' messages, stored apart from the backlog, are
delivered alongside it instead of after it. Only the first ``NOISY_MIN`` messages of a
backlog, sent before it was seen, are stored with the quiet groups. Nothing is promised
about order, as on any standard queue; a group of evenly spread traffic is never noisy.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from cassieq.engine.context import EngineContext
from cassieq.engine.tenancy.queues import QueueDirectory
from cassieq.model import OutgoingMessage, QueueDefinition, QueueId

WINDOW_MS = 10_000
NOISY_MIN = 100
NOISY_SHARE = 0.5
QUEUES_KNOWN = 1_024
GROUPS_KNOWN = 4_096  # per queue: past it, the window starts afresh


@dataclass
class _Window:
    started: int
    total: int = 0
    groups: dict[str, int] = field(default_factory=dict)
    # The groups found noisy in it, and those of the window before (still noisy here: a
    # backlog does not leak NOISY_MIN messages to the quiet partitions every window).
    noisy: set[str] = field(default_factory=set)
    carried: frozenset[str] = frozenset()


class FairRouter:
    """This server's counts of recent puts per group, per standard queue."""

    def __init__(self, ctx: EngineContext) -> None:
        self._ctx = ctx
        self._windows: OrderedDict[QueueId, _Window] = OrderedDict()

    def noisy(self, queue: QueueId, messages: Sequence[OutgoingMessage]) -> list[bool]:
        """Count the messages; per message, whether its group is noisy now."""
        if not any(m.group for m in messages):
            return [False] * len(messages)
        now = self._ctx.clock.now()
        window = self._windows.get(queue)
        if window is None:
            window = _Window(started=now)
        elif now - window.started >= WINDOW_MS or len(window.groups) > GROUPS_KNOWN:
            window = _Window(started=now, carried=frozenset(window.noisy))
        self._windows[queue] = window
        self._windows.move_to_end(queue)
        while len(self._windows) > QUEUES_KNOWN:
            self._windows.popitem(last=False)
        out: list[bool] = []
        for m in messages:
            window.total += 1
            if m.group is None:
                out.append(False)
                continue
            count = window.groups[m.group] = window.groups.get(m.group, 0) + 1
            if count > NOISY_MIN and count > NOISY_SHARE * window.total:
                window.noisy.add(m.group)
            out.append(m.group in window.noisy or m.group in window.carried)
        return out


async def to_lane(
    queues: QueueDirectory,
    definition: QueueDefinition,
    parts: dict[int, list[int]],
    noisy: list[bool],
) -> tuple[QueueDefinition, dict[int, list[int]]]:
    """``parts`` (partition -> message indexes) with the noisy groups' messages moved to the
    queue's lane, made on first use (an update of the queue's options, once)."""
    if not definition.options.fair_lane:
        definition = await queues.update(definition.account, definition.name, {"fair_lane": True})
    lane = definition.options.partitions
    moved: dict[int, list[int]] = {}
    for p, indexes in parts.items():
        for i in indexes:
            moved.setdefault(lane if noisy[i] else p, []).append(i)
    return definition, moved
