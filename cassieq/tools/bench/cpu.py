"""CPU seconds spent over a bench turn: the server's (its process and any children it
forked, read from /proc) and the load generator's own (this process), per 1,000 messages.

Throughput on this shared two-core machine drifts by tens of percent with what else runs;
CPU per message much less, so it is the figure later changes are judged on. The server's
is read from /proc/<pid>/stat (utime + stime), not asked of the server: it counts every
thread of it (the driver's event loop thread too), and a slow client cannot inflate it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU of ``pid`` and of its live descendants (worker processes), or None
    where /proc cannot tell (not Linux, or the process is gone)."""
    total = 0.0
    try:
        for each in _family(pid):
            stat = Path(f"/proc/{each}/stat").read_text()
            # Fields after the command name (which may hold spaces, in parentheses).
            fields = stat[stat.rindex(")") + 2 :].split()
            total += (int(fields[11]) + int(fields[12])) / _TICKS
    except (OSError, ValueError, IndexError):
        return None
    return total


def _family(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        each = todo.pop()
        found.append(each)
        for task in Path(f"/proc/{each}/task").iterdir():
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue  # a thread that ended meanwhile, or a kernel without the file
            todo.extend(int(c) for c in children)
    return found


@dataclass
class CpuMeter:
    """Started before a turn, read after it: CPU seconds of the server and of this process."""

    server_pid: int | None
    _server: float | None = None
    _client: float = 0.0

    def start(self) -> None:
        self._server = None if self.server_pid is None else process_cpu_seconds(self.server_pid)
        self._client = time.process_time()

    def spent(self) -> dict[str, float]:
        """CPU seconds since ``start``: ``client`` (this process), and ``server`` when the
        server's pid was given and readable."""
        out = {"client": time.process_time() - self._client}
        if self.server_pid is not None and self._server is not None:
            now = process_cpu_seconds(self.server_pid)
            if now is not None:
                out["server"] = now - self._server
        return out

    def per_1000(self, messages: int) -> dict[str, float]:
        """``server_cpu_s_per_1000`` (when the server's pid was given and readable) and
        ``client_cpu_s_per_1000`` over the ``messages`` the turn moved."""
        per = 1000 / max(messages, 1)
        spent = self.spent()
        out = {"client_cpu_s_per_1000": round(spent["client"] * per, 3)}
        if "server" in spent:
            out["server_cpu_s_per_1000"] = round(spent["server"] * per, 3)
        return out
