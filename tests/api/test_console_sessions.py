"""Console sessions a cookie cannot betray and a logout really ends (#40 finding 9), on both
stores.

Measured before: the session cookie was signed with a key derived from the operator token
alone (a weak token was recovered from one cookie in 33 guesses, and whoever knows the token
can forge cookies without logging in), and logging out only cleared the browser's cookie: the
same cookie opened the console for 8 more hours.
"""

from __future__ import annotations

import hashlib
import hmac

from itsdangerous import TimestampSigner

from cassieq.api.web_console.session import COOKIE
from tests.api.test_console import TOKEN, Console, console

__all__ = ["console"]  # the fixture (both stores)


def _login(console: Console) -> str:
    console.client.cookies.clear()
    done = console.client.post("/console/login", data={"token": TOKEN}, follow_redirects=False)
    assert done.status_code == 303, done.text
    cookie: str = done.cookies[COOKIE]
    return cookie


def _holding(console: Console, cookie: str) -> None:
    console.client.cookies.clear()
    console.client.cookies.set(COOKIE, cookie)


def _open(console: Console, cookie: str) -> int:
    _holding(console, cookie)
    return console.client.get("/console/", follow_redirects=False).status_code


def test_a_cookie_made_from_the_token_alone_opens_nothing(console: Console) -> None:
    old_key = hmac.new(TOKEN.encode(), b"cassieq console session v1", hashlib.sha256).digest()
    forged = TimestampSigner(old_key, salt="cassieq-console", digest_method=hashlib.sha256)
    assert _open(console, forged.sign("chosen-session-id").decode()) == 303  # to the login


def test_logout_ends_the_session_for_every_cookie_it_had_signed(console: Console) -> None:
    console.login()
    cookie = console.client.cookies[COOKIE]
    assert _open(console, cookie) == 200
    out = console.client.post("/console/logout", cookies={COOKIE: cookie}, follow_redirects=False)
    assert out.status_code == 303
    assert _open(console, cookie) == 303  # the old cookie no longer opens the console
    assert _open(console, _login(console)) == 200  # and a new login works


def test_a_logout_without_a_session_ends_nobody_elses(console: Console) -> None:
    cookie = _login(console)
    console.client.cookies.clear()
    assert console.client.post("/console/logout", follow_redirects=False).status_code == 303
    assert _open(console, cookie) == 200
