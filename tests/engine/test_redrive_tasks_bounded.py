"""A queue's redrive tasks stay bounded (#40 finding 1's pattern in redrive_tasks): every start
and every listing reads all of a queue's tasks, kept a week each, so a tenant starting task
after task must not grow that read without end. Both stores."""

from __future__ import annotations

import pytest

from cassieq.engine import QueueEngine
from cassieq.engine.errors import Conflict
from cassieq.engine.life import redrive
from tests.engine.conftest import make_queue

KEPT = 5  # the limit, made small for the test (100 by default)


async def test_a_queue_keeps_at_most_max_tasks_kept_tasks(
    engine: QueueEngine, other: QueueEngine, account: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redrive, "MAX_TASKS_KEPT", KEPT, raising=False)
    await make_queue(engine, account, "dead")
    await make_queue(engine, account, "back")
    for _ in range(KEPT):  # an empty queue's task finishes at once: start after start
        await engine.start_redrive(account, "dead", "back", 100)
        await engine.redriver.join()
    with pytest.raises(Conflict, match=f"keeps {KEPT} redrive tasks"):
        await other.start_redrive(account, "dead", "back", 100)  # any server refuses it
    tasks = await engine.list_redrives(account, "dead")
    assert len(tasks) == KEPT and {t.status for t in tasks} == {"completed"}
    # Another queue keeps tasks of its own.
    await make_queue(engine, account, "dead2")
    await engine.start_redrive(account, "dead2", "back", 100)
    await engine.redriver.join()
    assert len(await engine.list_redrives(account, "dead2")) == 1


def test_the_default_bound() -> None:
    assert redrive.MAX_TASKS_KEPT == 100
