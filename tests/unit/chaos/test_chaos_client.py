"""The chaos client sends each request once: a request cut off mid-way (a server killed)
must fail, never be re-sent behind the ledger's back."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from cassieq.tools.chaos.client import no_retry_session

ANSWER = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"


async def _count_requests(session: aiohttp.ClientSession) -> int:
    """Requests a server saw that answers the first one and dies (RST) on the next."""
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                seen.append(await reader.readuntil(b"\r\n\r\n"))
                if len(seen) == 1:
                    writer.write(ANSWER)
                    await writer.drain()
                else:
                    writer.transport.abort()  # killed mid-request: no answer, a reset
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}/ack"
    try:
        async with session.delete(url) as first:
            assert first.status == 204
        with pytest.raises(aiohttp.ClientError):
            async with session.delete(url):
                pass
    finally:
        await session.close()
        server.close()
        await server.wait_closed()
    return len(seen)


async def test_a_request_cut_off_is_not_sent_again() -> None:
    assert await _count_requests(no_retry_session(5)) == 2


async def test_aiohttp_on_its_own_would_send_it_again() -> None:
    # Why no_retry_session exists: the default session re-sends the DELETE once.
    assert await _count_requests(aiohttp.ClientSession()) == 3
