"""`cassieq serve --workers N`: one supervisor process, N server processes on its sockets.

The supervisor binds the port (and the admin port) once and starts N workers (spawned, not
forked: each imports cassieq afresh and opens its own Cassandra connection; a driver's
threads do not survive a fork) that inherit the listening sockets, as gunicorn and
``uvicorn --workers`` do: the kernel hands each new connection to one of the processes
waiting on the socket. Each worker is a full server (cassieq.api.workers).

A worker that dies is started again (at once; after a growing pause, up to
RESTART_PAUSE_MAX_S, when it keeps dying within RESTART_QUICK_S of its start). SIGTERM or
SIGINT to the supervisor stops every worker gracefully (SIGTERM each: uvicorn's graceful
stop, waiting receives answered first) and exits 0 once all have exited; workers still
running after STOP_WAIT_S are killed. The supervisor serves nothing itself.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from typing import Any

import structlog

from cassieq.api.http.server import listening_socket
from cassieq.api.workers import WorkerSlot

log = structlog.get_logger("cassieq.workers")

RESTART_QUICK_S = 10.0
RESTART_PAUSE_MAX_S = 30.0
# uvicorn's graceful shutdown (10 s) plus the app's lifespan shutdown.
STOP_WAIT_S = 30.0
# uvicorn's exit status when a listener cannot start (its port in use).
STARTUP_FAILURE = 3

# What a worker runs: serve the app on the sockets given (main port, then the admin port).
WorkerTarget = Callable[[WorkerSlot, list[socket.socket]], None]


@dataclass
class _Slot:
    index: int
    process: BaseProcess | None = None
    started: float = 0.0
    quick_deaths: int = 0
    start_at: float = 0.0  # when a dead worker is due to start again


def supervise(
    target: WorkerTarget, *, count: int, host: str, port: int, admin_port: int | None
) -> int:
    """Run ``count`` workers until SIGTERM/SIGINT; the exit status (0 when asked to stop)."""
    try:
        sockets = [listening_socket(host, p) for p in (port, admin_port) if p is not None]
    except OSError as exc:
        log.error("listen_failed", host=host, port=port, admin_port=admin_port, error=str(exc))
        return STARTUP_FAILURE
    runtime_dir = tempfile.mkdtemp(prefix="cassieq-workers-")  # mode 0700: ours alone
    stopping: list[int] = []
    wake_r, wake_w = socket.socketpair()
    wake_r.setblocking(False)
    wake_w.setblocking(False)

    def stop(signum: int, frame: object) -> None:
        stopping.append(signum)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    # A signal arriving while the loop waits writes to wake_w: the wait returns at once.
    old_wakeup = signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)
    context = multiprocessing.get_context("spawn")
    slots = [_Slot(i) for i in range(count)]
    try:
        log.info("workers_starting", workers=count, supervisor_pid=os.getpid(), port=port)
        while not stopping:
            now = time.monotonic()
            for slot in slots:
                if slot.process is None and slot.start_at <= now:
                    _start(context, target, slot, count, runtime_dir, sockets)
            running = [s.process.sentinel for s in slots if s.process is not None]
            waits = [s.start_at - now for s in slots if s.process is None]
            timeout = max(0.0, min(waits)) if waits else None
            ready = multiprocessing.connection.wait([*running, wake_r], timeout)
            if wake_r in ready:
                _drain(wake_r)
            for slot in slots:
                if slot.process is not None and not slot.process.is_alive():
                    _ended(slot)
        log.info("workers_stopping", signal=signal.Signals(stopping[0]).name)
        _stop_all(slots)
        return 0
    finally:
        signal.set_wakeup_fd(old_wakeup)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for sock in (*sockets, wake_r, wake_w):
            sock.close()
        shutil.rmtree(runtime_dir, ignore_errors=True)


def _start(
    context: Any,
    target: WorkerTarget,
    slot: _Slot,
    count: int,
    runtime_dir: str,
    sockets: list[socket.socket],
) -> None:
    identity = WorkerSlot(slot.index, count, runtime_dir, os.getpid())
    process = context.Process(
        target=_worker_main,
        args=(target, identity, sockets),
        name=f"cassieq-worker-{slot.index}",
    )
    process.start()
    slot.process, slot.started = process, time.monotonic()
    log.info("worker_started", worker=slot.index, pid=process.pid)


def _ended(slot: _Slot) -> None:
    """A worker exited without being asked: start it again, soon or after a pause."""
    assert slot.process is not None
    lived = time.monotonic() - slot.started
    slot.quick_deaths = slot.quick_deaths + 1 if lived < RESTART_QUICK_S else 0
    pause = min(RESTART_PAUSE_MAX_S, 0.5 * 2 ** (slot.quick_deaths - 1)) if slot.quick_deaths else 0
    log.warning(
        "worker_exited",
        worker=slot.index,
        pid=slot.process.pid,
        exit_code=slot.process.exitcode,
        lived_s=round(lived, 3),
        restart_in_s=pause,
    )
    slot.process.close()
    slot.process = None
    slot.start_at = time.monotonic() + pause


def _stop_all(slots: list[_Slot]) -> None:
    live = [s.process for s in slots if s.process is not None]
    for process in live:
        if process.pid is not None and process.is_alive():
            os.kill(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT_S
    for process in live:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            log.warning("worker_killed", pid=process.pid, after_s=STOP_WAIT_S)
            process.kill()
            process.join()
    log.info("workers_stopped", exit_codes=[p.exitcode for p in live])


def _drain(sock: socket.socket) -> None:
    try:
        while sock.recv(512):
            pass
    except BlockingIOError:
        pass


def _worker_main(target: WorkerTarget, slot: WorkerSlot, sockets: list[socket.socket]) -> None:
    """In the worker: die with the supervisor, then serve."""
    _die_with_parent()
    if os.getppid() != slot.supervisor_pid:
        return  # the supervisor died before the request above took effect
    target(slot, sockets)


def _die_with_parent() -> None:
    """Linux: SIGKILL this process when the supervisor dies (killed with SIGKILL, say): the
    server as a whole crashed, and no worker is left serving unsupervised or holding the
    port a server started again on it must bind (a graceful stop would hold it seconds)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # elsewhere: a worker outlives a killed supervisor
