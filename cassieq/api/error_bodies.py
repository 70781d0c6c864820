"""The error bodies every API layer answers with: v1's shapes (CassieQ's, field names exactly
as its clients read them) and v2's. The HTTP plumbing answers in them too, so they live
beside the app rather than in one API's DTOs."""

from __future__ import annotations

from http import HTTPStatus

import msgspec


class AuthErrorBody(msgspec.Struct, frozen=True, omit_defaults=True):
    """401 and 403 (and any other status CassieQ answers in Dropwizard's shape)."""

    code: int
    message: str  # "HTTP 401 Unauthorized": fixed per status, as CassieQ's clients see it
    detail: str | None = None  # this project's addition: what exactly was wrong

    @classmethod
    def of_status(cls, status: int, detail: str | None = None) -> AuthErrorBody:
        return cls(code=status, message=f"HTTP {status} {HTTPStatus(status).phrase}", detail=detail)


class ResourceErrorBody(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """404 and 409: what CassieQ's resources answer for a missing queue or a conflict."""

    reason: str  # "NotFound" or "Conflict"
    operation: str  # CassieQ's operation name, e.g. "AckMessage"
    message: str
    queue_name: str | None = None
    account: str | None = None
    detail: str | None = None


class ErrorsBody(msgspec.Struct, frozen=True, omit_defaults=True):
    """400 (a bad query parameter) and 422 (an invalid body or name)."""

    errors: list[str]
    detail: str | None = None


ErrorBody = AuthErrorBody | ResourceErrorBody | ErrorsBody


class V2ErrorBody(msgspec.Struct, frozen=True, omit_defaults=True):
    """Every error of /api/v2 (api-v2.md): the status, what was wrong, maybe more."""

    code: int
    message: str
    detail: str | None = None
