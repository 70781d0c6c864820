"""The server writes an answer in one send (cassieq.api.http.cork), and nothing it holds is lost
or reordered: a close or an end-of-file writes it first."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.config import Config
from uvicorn.server import ServerState

from cassieq.api.http.cork import CorkedTransport
from cassieq.api.http.limits import HttpLimits
from cassieq.api.http.protocol import protocol_class
from cassieq.config import Settings


class Recording(asyncio.Transport):
    """A socket transport's surface, recording each write (each would be one send)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.events: list[str] = []
        self.closing = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))
        self.events.append("write")

    def close(self) -> None:
        self.closing = True
        self.events.append("close")

    def write_eof(self) -> None:
        self.events.append("eof")

    def can_write_eof(self) -> bool:
        return True

    def abort(self) -> None:
        self.closing = True
        self.events.append("abort")

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8080), "peername": ("127.0.0.1", 50000)}.get(
            name, default
        )

    def pause_reading(self) -> None:
        self.events.append("pause")

    def resume_reading(self) -> None:
        self.events.append("resume")


async def turn() -> None:
    """Let the loop run the callbacks scheduled so far."""
    await asyncio.sleep(0)


async def test_writes_of_one_turn_go_out_as_one() -> None:
    inner = Recording()
    corked = CorkedTransport(inner, asyncio.get_running_loop())
    corked.write(b"HTTP/1.1 200 OK\r\n\r\n")
    corked.write(b"")
    corked.write(memoryview(b"body"))
    assert inner.writes == []
    assert corked.get_write_buffer_size() == len(b"HTTP/1.1 200 OK\r\n\r\nbody")
    await turn()
    assert inner.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody"]
    corked.write(b"next")
    await turn()
    assert inner.writes[1:] == [b"next"]


async def test_close_and_eof_write_what_is_held_first() -> None:
    inner = Recording()
    corked = CorkedTransport(inner, asyncio.get_running_loop())
    corked.write(b"answer")
    corked.write_eof()
    assert inner.events == ["write", "eof"]
    corked.write(b"last")
    corked.close()
    assert inner.events == ["write", "eof", "write", "close"]
    assert inner.writes == [b"answer", b"last"]
    await turn()  # the scheduled flushes find nothing more
    assert inner.writes == [b"answer", b"last"]


async def test_a_connection_closed_meanwhile_drops_what_is_held() -> None:
    inner = Recording()
    corked = CorkedTransport(inner, asyncio.get_running_loop())
    corked.write(b"late")
    inner.closing = True  # the peer went away before the turn ended
    await turn()
    assert inner.writes == []
    corked.write(b"x")
    corked.abort()
    await turn()
    assert inner.writes == []
    assert inner.events == ["abort"]


async def test_the_protocol_sends_a_whole_answer_in_one_write() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        body = b'{"ok": true}'
        headers = [(b"content-type", b"application/json"), (b"content-length", b"12")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    config = Config(app, lifespan="off", log_config=None, access_log=False)
    config.load()
    limited = protocol_class(HttpLimits.of(Settings(admin_token="t" * 32)))
    protocol = limited(config, ServerState(), {}, asyncio.get_running_loop())
    inner = Recording()
    protocol.connection_made(inner)
    for answered in (1, 2):  # two requests on the keep-alive connection: one write each
        protocol.data_received(b"GET /x HTTP/1.1\r\nHost: t\r\n\r\n")
        for _ in range(50):  # the app's task, then the flush: a few turns, bounded
            await turn()
            if b"".join(inner.writes).count(b'{"ok": true}') == answered:
                break
        await turn()  # a second write of the same answer would come by now
    assert len(inner.writes) == 2, inner.writes
    for answer in inner.writes:
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
        assert answer.endswith(b'\r\n\r\n{"ok": true}')
    protocol.connection_lost(None)
