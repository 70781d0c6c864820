"""Operator sessions of the web console.

A browser logs in once with the operator token (a form POST: the token never goes in a
URL); the server answers with an HttpOnly, SameSite=Strict cookie holding a random session
id signed (itsdangerous, with its time: sessions end after SESSION_MAX_AGE_S) with a key made
from the keyspace's own random console secret and the token's digest: a cookie tells nothing
about the token (#40: with a key derived from the token alone, a weak token was recovered
from one cookie in 33 guesses), every server of the keyspace accepts it, and all sessions end
when the token changes. Logging out replaces the console secret: every session ends, on every
server at once (there is one operator credential; the key is read per request). Forms that
change something carry a CSRF token, an HMAC of the session id under the same key;
SameSite=Strict and a check of the Origin header are a second line.

`cassieq dev` (open_admin_port) opens the console without a login only on its admin port,
from this machine (loopback); the session cookie is still set there, for the CSRF token.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from itsdangerous import BadSignature, SignatureExpired, TimestampSigner
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie

from cassieq.api.state import AppState

COOKIE = "cassieq_console"
SESSION_MAX_AGE_S = 8 * 3600


@dataclass(frozen=True)
class Session:
    id: str
    csrf: str


async def session_key(state: AppState) -> bytes:
    """The key that signs sessions and CSRF tokens now."""
    secret = await state.engine.console_session_secret()
    token = hashlib.sha256((state.settings.admin_token or "").encode()).digest()
    return hmac.new(secret, b"cassieq console session v2" + token, hashlib.sha256).digest()


def _signer(key: bytes) -> TimestampSigner:
    return TimestampSigner(key, salt="cassieq-console", digest_method=hashlib.sha256)


def csrf_token(key: bytes, session_id: str) -> str:
    return hmac.new(key, f"csrf:{session_id}".encode(), hashlib.sha256).hexdigest()


def new_session(key: bytes) -> tuple[Session, str]:
    """A new session and the cookie value that carries it."""
    session_id = secrets.token_urlsafe(24)
    cookie = _signer(key).sign(session_id).decode()
    return Session(session_id, csrf_token(key, session_id)), cookie


def session_of(connection: ASGIConnection[Any, Any, Any, Any], key: bytes) -> Session | None:
    raw = connection.cookies.get(COOKIE)
    if not raw:
        return None
    try:
        session_id = _signer(key).unsign(raw, max_age=SESSION_MAX_AGE_S).decode()
    except (BadSignature, SignatureExpired, UnicodeDecodeError):
        return None
    return Session(session_id, csrf_token(key, session_id))


def csrf_ok(
    connection: ASGIConnection[Any, Any, Any, Any], session: Session, presented: str
) -> bool:
    if not hmac.compare_digest(session.csrf.encode(), presented.encode()):
        return False
    # A browser sends Origin with every POST; one from another site is refused even with a
    # token (defence in depth). No Origin at all: a non-browser client holding the cookie.
    origin = connection.headers.get("origin")
    if origin is None:
        return True
    host = connection.headers.get("host", "")
    return urlsplit(origin).netloc == host


def session_cookie(connection: ASGIConnection[Any, Any, Any, Any], value: str) -> Cookie:
    """The cookie carrying a session (an empty value with max_age 0 ends it)."""
    return Cookie(
        key=COOKIE,
        value=value,
        path="/console",
        httponly=True,
        samesite="strict",
        secure=connection.scope.get("scheme") == "https",
        max_age=SESSION_MAX_AGE_S if value else 0,
    )
