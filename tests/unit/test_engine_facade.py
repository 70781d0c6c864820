"""The adapters (HTTP APIs, CLI, pipeline) go through QueueEngine's façade methods, never
through its parts (``engine.queues``, ``engine.reader``, ``engine.ctx``...).

import-linter checks which modules import which; it cannot see an attribute reached through
an object, so this test reads the adapters' source for it. Tests and the bench tools may
reach the parts (they measure and drive them).
"""

from __future__ import annotations

import ast
from pathlib import Path

from cassieq.engine import FakeClock, QueueEngine
from cassieq.store.memory import MemoryStore

ROOT = Path(__file__).resolve().parents[2] / "cassieq"
ADAPTERS = ("api", "cli", "pipeline")


def _parts() -> set[str]:
    """The attributes a QueueEngine holds that are not methods: its parts."""
    engine = QueueEngine(MemoryStore(), FakeClock())
    return {name for name in vars(engine) if not name.startswith("_")}


def _reaches(path: Path, parts: set[str]) -> list[str]:
    """``<something named engine>.<part>`` in the file, as "line: text"."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not (isinstance(node, ast.Attribute) and node.attr in parts):
            continue
        owner = node.value
        name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        if name == "engine":
            found.append(f"{path}:{node.lineno}: engine.{node.attr}")
    return found


def test_the_engine_has_parts_to_look_for() -> None:
    # The check below finds nothing if the parts were renamed away: make sure it looks.
    assert {"queues", "reader", "ctx"} <= _parts()


def test_no_adapter_reaches_into_the_engines_parts() -> None:
    parts = _parts()
    found = [
        hit
        for package in ADAPTERS
        for path in sorted((ROOT / package).rglob("*.py"))
        for hit in _reaches(path, parts)
    ]
    assert found == [], "use a QueueEngine method instead:\n" + "\n".join(found)


def test_the_check_sees_a_reach(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("async def f(app):\n    return await app.engine.queues.list('a')\n")
    assert _reaches(sample, _parts()) == [f"{sample}:2: engine.queues"]
