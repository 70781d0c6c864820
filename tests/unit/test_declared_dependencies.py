"""What shipped commands import is declared as a runtime dependency (issue 17: the CLI used
rich and httpx undeclared, `cassieq bench` needed aiohttp from the dev extra)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Import name -> distribution, where they differ.
_DISTRIBUTION = {
    "cassandra": "cassandra-driver",
    "yaml": "pyyaml",
    "prometheus_client": "prometheus-client",
}
# Extras a command says it needs when missing (pyspark: `cassieq pipeline`; acsylla, in the
# dev extra: `cassieq bench driver`, which compares the store's driver with it).
_OPTIONAL = {"pyspark", "acsylla"}


def _runtime() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {re.split(r"[\[<>=!~ ;]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}


def _third_party_imports(paths: list[Path]) -> set[str]:
    found: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    import sys

    return {m for m in found if m not in sys.stdlib_module_names and m != "cassieq"}


def test_the_cli_bench_and_chaos_imports_are_runtime_dependencies() -> None:
    files: list[Path] = []
    for package in ("cli", "tools/bench", "tools/chaos"):
        files += sorted((ROOT / "cassieq" / package).rglob("*.py"))
    imported = _third_party_imports(files) - _OPTIONAL
    declared = _runtime()
    missing = sorted(m for m in imported if _DISTRIBUTION.get(m, m).lower() not in declared)
    assert not missing, f"imported by shipped commands, not in [project] dependencies: {missing}"
    assert {"rich", "httpx", "aiohttp"} <= declared
