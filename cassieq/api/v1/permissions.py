"""Operator routes: issue signed query strings (scoped, shareable grants)."""

from __future__ import annotations

from datetime import UTC, datetime

from litestar import Controller, get, post
from litestar.params import JSONBody

from cassieq.api.dependencies import Engine
from cassieq.api.errors import errors
from cassieq.api.security import admin_guard
from cassieq.api.v1.dto import LevelBody, PermissionBody, PermissionRequest
from cassieq.auth.access import SHORT_FORMS, InvalidGrantWindow, grant_end
from cassieq.auth.signing import BadTime, canonical_time, parse_time, query_string_to_sign, sign
from cassieq.engine.errors import InvalidArgument, KeyNotFound
from cassieq.model import AuthorizationLevel

_BY_NAME = {level.wire_name.lower(): level for level in AuthorizationLevel}


class PermissionController(Controller):
    path = "/api/v1/permissions"
    tags = ["permissions (operator)"]
    guards = [admin_guard]

    @post(
        operation_id="grantPermission",
        summary="Issue a signed query string for an account key",
        status_code=201,
        responses=errors(400, 401, 403, 404, 413),
    )
    async def grant(self, engine: Engine, data: JSONBody[PermissionRequest]) -> PermissionBody:
        account = await engine.account(data.account_name)
        key = account.keys.get(data.key_name)
        if key is None:
            raise KeyNotFound(f"account {data.account_name!r} has no key named {data.key_name!r}")
        levels = "".join(sorted({_level(v).short_form for v in data.levels}, key="rpuagcdn".index))
        try:
            start_at = parse_time(data.start_time) if data.start_time else None
            end_at = parse_time(data.end_time) if data.end_time else None
            # Every grant ends (#40 finding 10): without endTime, GRANT_DEFAULT_LIFETIME (7
            # days) after its issue or start; an end not after the start is refused.
            end_at = grant_end(start_at, end_at, datetime.fromtimestamp(engine.now() / 1000, UTC))
        except (BadTime, InvalidGrantWindow) as exc:
            raise InvalidArgument(str(exc)) from None
        start = canonical_time(start_at) if start_at else None
        end = canonical_time(end_at)
        # CassieQ's order: auth, q, st, et, sig.
        params: dict[str, str] = {"auth": levels}
        if data.queue_name:
            params["q"] = data.queue_name
        if start:
            params["st"] = start
        if end:
            params["et"] = end
        to_sign = query_string_to_sign(data.account_name, levels, start, end, data.queue_name)
        params["sig"] = sign(key, to_sign)
        # Not percent-encoded, as CassieQ issues it: the Java client splits the string and
        # encodes each value itself (an encoded ':' would arrive as "%3A"). Every value is
        # URL-safe as it is: short forms, a name, "2026-11-22T10:00:00Z", base64url.
        return PermissionBody(query_param="&".join(f"{k}={v}" for k, v in params.items()))

    @get(
        "/supportedAuthorizationLevels",
        operation_id="listAuthorizationLevels",
        summary="The authorization levels and short forms",
    )
    async def levels(self) -> list[LevelBody]:
        return [LevelBody.of(level) for level in AuthorizationLevel]


def _level(value: str) -> AuthorizationLevel:
    level = SHORT_FORMS.get(value) or _BY_NAME.get(value.lower())
    if level is None:
        raise InvalidArgument(
            f"unknown authorization level {value!r}: "
            "use a name such as ReadMessage or a short form such as r"
        )
    return level
