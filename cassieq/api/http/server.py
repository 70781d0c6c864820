"""How the ASGI app is put on a socket: uvicorn, with the HTTP/1.1 parser the contract needs
and the limits of cassieq.api.http.protocol (from the app's settings)."""

from __future__ import annotations

import asyncio
import socket

import uvicorn
from litestar import Litestar

from cassieq.api.http import event_loop
from cassieq.api.http.gc_tuning import settle_for_serving
from cassieq.api.http.limits import HttpLimits
from cassieq.api.http.protocol import protocol_class
from cassieq.api.state import AppState


def uvicorn_config(
    app: Litestar,
    *,
    host: str,
    port: int,
    log_level: str = "info",
    lifespan: bool = True,
) -> uvicorn.Config:
    state: AppState = app.state.cassieq
    settings = state.settings
    limits = HttpLimits.of(settings)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        # uvicorn's httptools protocol with the read deadlines and header limits it lacks,
        # serving an HTTP/2 upgrade offer as HTTP/1.1 with its body (cassieq/api/http/
        # protocol.py; tests/api/test_framing.py sends java.net.http's exact bytes).
        http=protocol_class(limits),
        # The API has no WebSocket route: an upgrade request is served as plain HTTP, by
        # the protocol above (with its limits), never handed to a WebSocket protocol.
        ws="none",
        timeout_keep_alive=settings.http_keep_alive_seconds,
        log_level=log_level,
        # No handlers of uvicorn's own: its records go through cassieq.logs (one format
        # for every line, JSON when chosen).
        log_config=None,
        # uvicorn's access lines would carry signed query strings: the app's own access
        # log (CASSIEQ_ACCESS_LOG, cassieq.api.metrics.http) leaves the query out.
        access_log=False,
        timeout_graceful_shutdown=10,
        # A second listener on the same app (the admin port) must not run the app's
        # lifespan again: that would start a second set of background workers.
        lifespan="on" if lifespan else "off",
    )


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound, listening socket: connections queue in its backlog until uvicorn accepts."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


class ReleasingServer(uvicorn.Server):
    """uvicorn's server, releasing the app's waiting receives when shutdown begins.

    uvicorn waits for open requests (up to timeout_graceful_shutdown) before it runs the
    lifespan's shutdown: a long poll would hold the process up to its 20 seconds, then be
    cut off. Released first, each answers [] and its connection closes at once."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        app = self.config.app
        state: AppState | None = getattr(getattr(app, "state", None), "cassieq", None)
        if state is not None:
            await state.engine.release_waiters()
        await super().shutdown(sockets)


def serve(
    app: Litestar,
    *,
    host: str,
    port: int,
    admin_port: int | None,
    log_level: str,
    sockets: list[socket.socket] | None = None,
) -> None:
    """Serve the app on its port, and on the admin port too when one is set (one process,
    one engine: the admin listener runs no lifespan of its own). A listener that cannot
    start (its port in use) ends the process with uvicorn's exit status 3, after uvicorn's
    one error line. ``sockets``: listening already (a worker of `cassieq serve --workers`,
    given its supervisor's), the port's then the admin port's; else bound here."""
    servers = [ReleasingServer(uvicorn_config(app, host=host, port=port, log_level=log_level))]
    if admin_port is not None:
        admin = uvicorn_config(app, host=host, port=admin_port, log_level=log_level, lifespan=False)
        servers.append(ReleasingServer(admin))
    settle_for_serving()
    status = event_loop.run(_serve_all(servers, sockets))
    if status:
        raise SystemExit(status)


async def _serve_all(
    servers: list[ReleasingServer], sockets: list[socket.socket] | None = None
) -> int:
    """Run the listeners until one stops; the exit status (0, or the first failure's)."""
    given: list[socket.socket | None] = list(sockets) if sockets else [None] * len(servers)
    tasks = [asyncio.create_task(_run(s, sock)) for s, sock in zip(servers, given, strict=True)]
    # Each uvicorn server takes the shutdown signal in turn; whichever stops first (by a
    # signal or a failure to bind) stops the others, so no listener outlives the process's
    # purpose.
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for s in servers:
        s.should_exit = True
    return next((status for status in await asyncio.gather(*tasks) if status), 0)


async def _run(server: ReleasingServer, sock: socket.socket | None = None) -> int:
    try:
        await server.serve(sockets=None if sock is None else [sock])
    except SystemExit as exc:
        # uvicorn's way out of a failed startup (a port in use), after logging why. Raised
        # in the task it escaped the event loop as a 50-line traceback of a task exception
        # "never retrieved", and left the other listener running unstopped.
        return exc.code if isinstance(exc.code, int) else 1
    return 0
