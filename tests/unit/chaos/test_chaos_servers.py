"""The error lines a chaos run reports from a server's log keep the exception itself."""

from __future__ import annotations

import json
from pathlib import Path

from cassieq.tools.chaos.servers import ServerProcess


def test_a_long_traceback_keeps_its_first_and_last_characters(tmp_path: Path) -> None:
    frames = "".join(f'  File "m{i}.py", line {i}, in f{i}\n' for i in range(300))
    error = json.dumps(
        {"event": "unhandled_error", "level": "error", "exception": f"{frames}KeyError: 'x'"}
    )
    log = tmp_path / "server.log"
    log.write_text(json.dumps({"event": "started", "level": "info"}) + "\n" + error + "\n")
    server = ServerProcess(name="A", port=1, env={}, log_path=log)

    [line] = server.logged_errors(chars=1000)

    assert len(error) > 1000
    assert len(line) <= 1000 + len(" [...] ")
    assert line.startswith('{"event": "unhandled_error"')
    assert line.endswith("KeyError: 'x'\"}")


def test_a_short_error_line_is_kept_whole(tmp_path: Path) -> None:
    error = json.dumps({"event": "boom", "level": "critical"})
    log = tmp_path / "server.log"
    log.write_text(error + "\n")

    assert ServerProcess(name="A", port=1, env={}, log_path=log).logged_errors() == [error]
