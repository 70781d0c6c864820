""" Contains shared errors types that can be raised from API functions

cassieq: ``sync()`` and ``asyncio()`` raise an ``ApiError`` subclass for an error answer
(``NotFound``, ``Conflict``, ...), with the decoded error body in ``.body``;
``sync_detailed()`` and ``asyncio_detailed()`` return every answer as it is.
"""

from typing import Any


class UnexpectedStatus(Exception):
    """Raised by api functions when the response status an undocumented status and Client.raise_on_unexpected_status is True"""

    def __init__(self, status_code: int, content: bytes):
        self.status_code = status_code
        self.content = content

        super().__init__(
            f"Unexpected status code: {status_code}\n\nResponse content:\n{content.decode(errors='ignore')}"
        )


class ApiError(Exception):
    """An error answer (4xx, 5xx). ``body``: the decoded error body (a model of ``models``:
    ErrorsBody, ResourceErrorBody, AuthErrorBody, V2ErrorBody), or None when the answer had
    none the API documents; ``content``: the raw bytes."""

    status_code: int = 0

    def __init__(self, status_code: int, content: bytes, body: Any = None):
        self.status_code = status_code
        self.content = content
        self.body = body
        super().__init__(f"{status_code}: {content.decode(errors='replace')}")


class BadRequest(ApiError):
    status_code = 400


class Unauthorized(ApiError):
    status_code = 401


class Forbidden(ApiError):
    status_code = 403


class NotFound(ApiError):
    status_code = 404


class Conflict(ApiError):
    status_code = 409


class PayloadTooLarge(ApiError):
    status_code = 413


class UnprocessableEntity(ApiError):
    status_code = 422


class TooManyRequests(ApiError):
    status_code = 429


class ServerError(ApiError):
    """Any 5xx; ServiceUnavailable (503) says: retry."""

    status_code = 500


class ServiceUnavailable(ServerError):
    status_code = 503


_BY_STATUS: dict[int, type[ApiError]] = {
    c.status_code: c
    for c in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        PayloadTooLarge,
        UnprocessableEntity,
        TooManyRequests,
        ServiceUnavailable,
    )
}


def error_for(status_code: int, content: bytes, body: Any = None) -> ApiError:
    """The exception of an error answer's status."""
    cls = _BY_STATUS.get(status_code) or (ServerError if status_code >= 500 else ApiError)
    return cls(status_code, content, body)


def raise_for_status(response: Any) -> None:
    """Raise the typed exception of ``response`` (a ``types.Response``) when it is an error."""
    status = int(response.status_code)
    if status >= 400:
        raise error_for(status, response.content, response.parsed)


__all__ = [
    "ApiError",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "NotFound",
    "PayloadTooLarge",
    "ServerError",
    "ServiceUnavailable",
    "TooManyRequests",
    "Unauthorized",
    "UnexpectedStatus",
    "UnprocessableEntity",
    "error_for",
    "raise_for_status",
]
