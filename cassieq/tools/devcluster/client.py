"""Generate the Python client (api_spec/client/cassieq_client) from api_spec/openapi.json."""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = "cassieq_client"


class ClientGenerationError(RuntimeError):
    pass


def generate(spec: Path, client_dir: Path, into: Path) -> Path:
    """Run openapi-python-client; return the generated package directory under ``into``."""
    tool = Path(sys.executable).parent / "openapi-python-client"
    if not tool.exists():
        raise ClientGenerationError("openapi-python-client is missing: install the dev extra")
    out = into / PACKAGE
    config = client_dir / "openapi-python-client.yaml"
    command = [str(tool), "generate", "--path", str(spec), "--meta", "none"]
    command += ["--output-path", str(out), "--config", str(config), "--fail-on-warning"]
    # Our templates (stock ones, changed where marked "cassieq"): text bodies, typed errors.
    templates = client_dir / "templates"
    if templates.is_dir():
        command += ["--custom-template-path", str(templates)]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ClientGenerationError(f"client generation failed:\n{proc.stdout}{proc.stderr}")
    return out


def regenerate(spec: Path, client_dir: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(spec, client_dir, Path(tmp))
        target = client_dir / PACKAGE
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(fresh, target)


def stale_files(spec: Path, client_dir: Path) -> list[str]:
    """Files of the committed package that differ from a fresh generation (empty: current)."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(spec, client_dir, Path(tmp))
        return _differences(fresh, client_dir / PACKAGE, "")


def _differences(a: Path, b: Path, prefix: str) -> list[str]:
    if not b.exists():
        return [prefix or PACKAGE]
    cmp = filecmp.dircmp(a, b, ignore=["__pycache__"])
    out = [f"{prefix}{n}" for n in cmp.left_only + cmp.right_only]
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    out += [f"{prefix}{n}" for n in mismatch + errors]
    for sub in cmp.common_dirs:
        out += _differences(a / sub, b / sub, f"{prefix}{sub}/")
    return out
