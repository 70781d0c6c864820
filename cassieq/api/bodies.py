"""JSON request bodies: nesting is capped before any decoder sees them.

msgspec decodes nested arrays and objects recursively: a body nested ~1,000 levels deep
ends in RecursionError (a 500) when Litestar decodes it untyped, before the typed
conversion could refuse it. No body of this API is nested more than three levels, so
anything deeper than MAX_JSON_DEPTH is refused, 400, from a scan of the raw bytes.
"""

from __future__ import annotations

import re
from itertools import accumulate, count
from operator import sub
from typing import Any

from litestar import Request

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
    """Litestar's request, with the depth check before the body is decoded as JSON."""

    async def json(self) -> Any:
        check_json_depth(await self.body())
        return await super().json()
