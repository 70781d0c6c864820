"""What each make target installs (#39 item 11): `make dev` only what the server needs (the
package and the generated client: it installed the dev and pipeline extras, 1.1 GB, silently
under --quiet), `make test`, `lint`, `docs` and `test-fast` the rest, with pip's output shown.

Read from `make -n` (the commands make would run, none run) on a copy of the Makefile in an
empty folder, so the stamps' logic is what is tested: a fresh folder, and one where `make dev`
has installed its part.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTRAS = "'.[dev,pipeline]'"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The Makefile and the two files its installs depend on, and nothing else."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "api_spec" / "client").mkdir(parents=True)
    (tmp_path / "api_spec" / "client" / "pyproject.toml").write_text("")
    return tmp_path


def dry_run(folder: Path, target: str) -> list[str]:
    ran = subprocess.run(
        # --no-print-directory: run under `make test-fast` (MAKELEVEL set), make would add
        # "Entering/Leaving directory" lines around the recipe.
        ["make", "--no-print-directory", "-n", target],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.splitlines()


def installs(lines: list[str]) -> list[str]:
    return [line for line in lines if " pip install " in line and "--upgrade pip" not in line]


def after_make_dev(folder: Path) -> None:
    """The venv as `make dev` leaves it: its python and its stamp, newer than the sources."""
    bin_dir = folder / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text("")
    stamp = folder / ".venv" / ".installed-dev"
    stamp.write_text("")
    later = (folder / "pyproject.toml").stat().st_mtime + 10
    os.utime(stamp, (later, later))


def test_make_dev_installs_the_package_and_client_only(checkout: Path) -> None:
    lines = dry_run(checkout, "dev")
    (install,) = installs(lines)
    assert "-e . " in install + " " and "-e ./api_spec/client" in install, install
    # Neither extra: no PySpark, no test tools.
    assert "[" not in install and "pipeline" not in install, install
    assert "--quiet" not in install and " -q" not in install, install
    assert lines[-1] == ".venv/bin/cassieq dev"


@pytest.mark.parametrize("target", ["test", "test-fast", "lint", "docs", "deps"])
def test_the_other_targets_install_the_extras_with_pip_output(checkout: Path, target: str) -> None:
    full = [line for line in installs(dry_run(checkout, target)) if EXTRAS in line]
    assert len(full) == 1, dry_run(checkout, target)
    assert "--quiet" not in full[0] and " -q" not in full[0], full[0]


def test_after_make_dev_test_fast_adds_the_rest_and_dev_installs_nothing(checkout: Path) -> None:
    after_make_dev(checkout)
    assert installs(dry_run(checkout, "dev")) == []
    lines = dry_run(checkout, "test-fast")
    assert not any(" -m venv " in line for line in lines), lines  # the venv is kept
    (install,) = installs(lines)
    assert EXTRAS in install, install
    assert any("pytest" in line for line in lines[lines.index(install) :]), lines
