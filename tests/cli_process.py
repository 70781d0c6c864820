"""Run the `cassieq` command as a user would: none of this shell's CASSIEQ_* settings (each
test names the ones it means), in a fresh process (`run_cassieq`) or in the test's own
(`invoke_cassieq`).

`invoke_cassieq` runs the same `main()` as `python -m cassieq` does, with click's test runner
standing in for the process: the arguments, the environment (CASSIEQ_* cleared, then the
test's), stdin, stdout and stderr as separate texts, and the exit status, as a
`CompletedProcess` with what the process would have given. What it leaves out is the
interpreter's start-up and the imports (about 0.3-0.5 s of CPU a command: the CLI tests ran
hundreds of commands, most of the fast loop's time). Tests about a command's output and
exit status use it; tests about the process itself (start-up, signals, logs, the installed
entry point) keep `run_cassieq`, and each client command group keeps at least one test that
runs it in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from collections.abc import Mapping

from click.testing import CliRunner

from cassieq.cli.main import main


def run_cassieq(
    *args: str, timeout: float = 120, env: Mapping[str, str] | None = None, **more_env: str
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CASSIEQ_")}
    return subprocess.run(
        [sys.executable, "-m", "cassieq", *args],
        env={**environment, **(env or {}), **more_env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def invoke_cassieq(
    *args: str, env: Mapping[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m cassieq *args`` in this process (see the module's docstring)."""
    overrides: dict[str, str | None] = {k: None for k in os.environ if k.startswith("CASSIEQ_")}
    overrides.update(env or {})
    runner = CliRunner()
    with runner.isolation(input=input, env=overrides) as (stdout, stderr, _):
        try:
            # The name `python -m cassieq` gives itself, which its usage lines show.
            main(list(args), prog_name="python -m cassieq")
            code = 0
        except SystemExit as exit_:
            code = _exit_status(exit_.code)
        except Exception:
            # What an uncaught exception does to the process: a traceback on stderr, 1.
            traceback.print_exc(file=sys.stderr)
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        out, err = stdout.getvalue(), stderr.getvalue()
    return subprocess.CompletedProcess(
        ["python", "-m", "cassieq", *args],
        code,
        out.decode(runner.charset, "replace"),
        err.decode(runner.charset, "replace"),
    )


def _exit_status(code: object) -> int:
    # sys.exit's rules: None is 0, an int is itself, anything else is printed and is 1.
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
