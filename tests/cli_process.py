"""Run the `cassieq` command as a user would: a fresh process, none of this shell's
CASSIEQ_* settings (each test names the ones it means)."""

from __future__ import annotations

import os
import subprocess
import sys


def run_cassieq(*args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CASSIEQ_")}
    return subprocess.run(
        [sys.executable, "-m", "cassieq", *args],
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
