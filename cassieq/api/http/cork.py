"""A transport that joins the writes of one event-loop turn into one ``send``.

uvicorn writes a response in pieces: its status line and headers, then its body (and an
empty end of message). Each piece is a ``send`` system call, and on this server each one
also hands the GIL to the Cassandra driver's thread and waits to get it back: in a profile
of v2 batches over HTTP the writes were 13% of the event loop's thread, the header write
alone 10%. The pieces of one answer are written in one turn of the loop (uvicorn's ``send``
does not yield between them), so holding them until the end of the turn sends them as one.

Nothing waits longer than that turn; a close or an end-of-file writes what is held first.
"""

from __future__ import annotations

import asyncio
from typing import Any


class CorkedTransport(asyncio.Transport):
    """Wraps the connection's socket transport; everything but writing is passed through."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    # -- writing: held until the end of the loop's turn

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._held:
            self._loop.call_soon(self.flush)
        self._held.append(bytes(data))

    def writelines(self, list_of_data: Any) -> None:
        for data in list_of_data:
            self.write(data)

    def flush(self) -> None:
        """Write what is held now (a closed connection drops it: nobody can read it)."""
        if not self._held:
            return
        data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
        self._held.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held.clear()
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return sum(map(len, self._held)) + self._transport.get_write_buffer_size()

    # -- passed through

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()
