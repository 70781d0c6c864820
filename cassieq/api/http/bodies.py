"""JSON request bodies: nesting is capped before any decoder sees them.

msgspec decodes nested arrays and objects recursively: a body nested ~1,000 levels deep
ends in RecursionError (a 500) when Litestar decodes it untyped, before the typed
conversion could refuse it. No body of this API is nested more than three levels, so
anything deeper than MAX_JSON_DEPTH is refused, 400, from a scan of the raw bytes.
"""

from __future__ import annotations

import math
import re
from itertools import accumulate, count
from operator import sub
from typing import Any, cast

from litestar import Request
from litestar.exceptions import InternalServerException
from litestar.exceptions.http_exceptions import RequestEntityTooLarge
from litestar.types import Empty, HTTPReceiveMessage

MAX_JSON_DEPTH = 64

# An escaped character is two bytes: dropped first, so an escaped quote never ends a string.
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
# With escapes gone a string has no quote inside: brackets in strings are text, not nesting.
_STRING = re.compile(rb'"[^"]*"')
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
# An opening bracket counts 2, a closing one 0: less one per bracket, that is +1 / -1.
_WEIGHT = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")


class JsonTooDeep(ValueError):
    """A JSON body nested deeper than MAX_JSON_DEPTH."""


def json_depth(body: bytes) -> int:
    """The deepest nesting of arrays and objects in ``body`` (0 for a scalar).

    Linear, and in C but for the last step: a body of this API's size scans in
    milliseconds. Not a validator: malformed JSON is left to the decoder.
    """
    text = _STRING.sub(b"", _ESCAPE.sub(b"", body))
    weights = text.translate(None, _NOT_BRACKET).translate(_WEIGHT)
    # Depth after the i-th bracket: the running sum of weights less i (1-based).
    return max(map(sub, accumulate(weights), count(1)), default=0)


def check_json_depth(body: bytes, limit: int = MAX_JSON_DEPTH) -> None:
    # Fewer opening brackets than the limit cannot nest deeper: no scan for most bodies.
    if body.count(b"[") + body.count(b"{") <= limit:
        return
    if json_depth(body) > limit:
        raise JsonTooDeep(f"the JSON body is nested deeper than {limit} levels")


class CassieqRequest(Request[Any, Any, Any]):
    """Litestar's request, with the depth check before the body is decoded as JSON, and
    the body read without an async generator."""

    async def json(self) -> Any:
        check_json_depth(await self.body())
        return await super().json()

    async def body(self) -> bytes:
        """Litestar's ``body``, by the same rules as its ``stream`` (a Content-Length over
        the route's limit refused before any byte is read, the bytes read counted against
        it too, a disconnect midway an error), read in a plain loop: ``stream`` is an async
        generator, and the event loop's bookkeeping of each one (it registers every async
        generator in a weak set) was 2% of the server's time under v2 batches, where every
        request has a body. Kept where Litestar keeps it, so it is read once."""
        if self._body is Empty:
            if (body := self._connection_state.body) is not Empty:
                self._body = body
            else:
                self._body = self._connection_state.body = await self._read_body()
        return self._body

    async def _read_body(self) -> bytes:
        if not self.is_connected:
            raise InternalServerException("stream consumed")
        limit = self.route_handler.resolve_request_max_body_size() or math.inf
        announced = self.content_length
        if announced is not None and announced > limit:
            raise RequestEntityTooLarge
        chunks: list[bytes] = []
        received = 0
        while True:
            event = cast("HTTPReceiveMessage", await self.receive())
            if event["type"] == "http.request":
                if chunk := event["body"]:
                    received += len(chunk)
                    if received > limit:
                        raise RequestEntityTooLarge
                    chunks.append(chunk)
                if not event.get("more_body", False):
                    break
            elif event["type"] == "http.disconnect":
                raise InternalServerException("client disconnected prematurely")
        self.is_connected = False
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
