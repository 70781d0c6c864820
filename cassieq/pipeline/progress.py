"""Job progress on stderr: the job's phases, and the tasks of Spark's running stages."""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from pyspark import SparkContext

POLL_S = 0.5


class Progress:
    """``phase()`` names what the job does; a thread reports stage progress meanwhile.

    On a terminal one line is redrawn; otherwise a line is printed when it changes.
    """

    def __init__(self, job: str, *, out: TextIO | None = None, enabled: bool = True) -> None:
        self._job = job
        self._out = out or sys.stderr
        self._enabled = enabled
        self._tty = self._out.isatty()
        self._last = ""
        self._last_state = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = time.monotonic()

    def phase(self, text: str) -> None:
        self._emit(f"[{self._job}] {text}", final=True)

    def watch(self, sc: SparkContext) -> Progress:
        if self._enabled:
            self._thread = threading.Thread(target=self._poll, args=(sc,), daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._tty and self._enabled:
            self._out.write("\n")
            self._out.flush()

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def _poll(self, sc: SparkContext) -> None:
        tracker = sc.statusTracker()
        while not self._stop.wait(POLL_S):
            try:
                stages = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
            except Exception:  # the context is stopping: nothing left to report
                return
            parts = [
                f"stage {s.stageId}: {s.numCompletedTasks}/{s.numTasks} tasks"
                for s in stages
                if s is not None
            ]
            state = "; ".join(parts)
            # Off a terminal, a line only when the tasks move (not every tick of the clock).
            if parts and (self._tty or state != self._last_state):
                self._last_state = state
                self._emit(f"[{self._job}] {state} ({self.elapsed():.0f} s)")

    def _emit(self, line: str, *, final: bool = False) -> None:
        if not self._enabled or line == self._last:
            return
        self._last = line
        if self._tty:
            self._out.write("\r\x1b[2K" + line + ("\n" if final else ""))
        else:
            self._out.write(line + "\n")
        self._out.flush()
