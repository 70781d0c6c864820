"""How the CLI reaches a server: URL, account, key or operator token; one-line errors."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import click
import httpx

from cassieq.auth.signing import signed_headers
from cassieq.auth.signing_v2 import sign_v2
from cassieq.model import valid_name

_NEEDS_ACCOUNT = "needs --account and --key (or CASSIEQ_ACCOUNT, CASSIEQ_KEY)"


@dataclass(frozen=True)
class Connection:
    url: str
    account: str | None
    key: str | None
    admin_token: str | None
    as_json: bool
    key_name: str | None = None
    plain: bool = False  # tab-separated lines instead of tables

    def queue_api(self, timeout: float = 30) -> httpx.Client:
        if not self.account or not self.key:
            raise click.UsageError(_NEEDS_ACCOUNT)
        auth = _Signed(self.account, self.key, self.key_name)
        return httpx.Client(base_url=self.url, auth=auth, timeout=timeout)

    def operator_api(self) -> httpx.Client:
        """The operator routes. Without a token the request goes without one: `cassieq dev`'s
        admin port needs none from this machine; a server that wants one answers 401, and
        the error says which option gives it."""
        if self.admin_token:
            headers = {"Authorization": f"Bearer {self.admin_token}"}
            return httpx.Client(base_url=self.url, headers=headers, timeout=30)
        hooks = {"response": [_token_needed]}
        return httpx.Client(base_url=self.url, timeout=30, event_hooks=hooks)

    def queues_path(self, queue: str | None = None, *, api: str = "v1") -> str:
        if not self.account:
            raise click.UsageError(_NEEDS_ACCOUNT)
        base = f"/api/{api}/accounts/{segment(self.account)}/queues"
        return base if queue is None else f"{base}/{segment(queue)}"


def _token_needed(response: httpx.Response) -> None:
    if response.status_code == 401:
        response.read()
        raise click.ClickException(
            f"401 {reason(response)}: this server needs the operator token: give "
            "--admin-token (or CASSIEQ_ADMIN_TOKEN)"
        )


def segment(name: str) -> str:
    """A name as one URL path segment: 'a/b' must never address another resource (servers
    decode %2F before routing, so such a name is refused here rather than quoted)."""
    # "." and ".." are valid names but dot segments: a URL would resolve them away.
    if not valid_name(name) or name in {".", ".."}:
        raise click.UsageError(
            f"invalid name {name!r}: use up to 255 letters, digits, '_', '.' or '-' "
            "(not '.' or '..' alone)"
        )
    return quote(name, safe="")


class _Signed(httpx.Auth):
    """Requests are signed, so the key itself never travels: /api/v2 requests carry the v2
    signature, which covers query and body too, with the key's name (``primary`` unless
    given, as ``grant``'s default: v2 refuses v1's ``Signed``); /api/v1 requests v1's
    ``Signed``."""

    requires_request_body = True  # the v2 signature hashes the body

    def __init__(self, account: str, key: str, key_name: str | None) -> None:
        self._account, self._key, self._key_name = account, key, key_name

    def auth_flow(self, request: httpx.Request):  # type: ignore[no-untyped-def]
        path, method = request.url.path, request.method
        if path.startswith("/api/v2/"):
            query = request.url.params.multi_items()
            now = datetime.now(UTC)
            name = self._key_name or "primary"
            headers = sign_v2(
                self._account, name, self._key, method, path, query, request.content, now
            )
        else:
            headers = signed_headers(self._account, self._key, method, path)
        request.headers.update(headers)
        yield request


def call(client: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """Send; any failure becomes a one-line error (exit 1), never a traceback."""
    try:
        response = client.request(method, path, **kwargs)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise click.ClickException(f"cannot reach {client.base_url}: {exc}") from None
    if response.status_code >= 400:
        raise click.ClickException(f"{response.status_code} {reason(response)}")
    return response


def reason(response: httpx.Response) -> str:
    try:
        body = response.json()
    except json.JSONDecodeError:
        return response.reason_phrase
    if not isinstance(body, dict):
        return response.reason_phrase
    # The contract's three error shapes; "detail" (when present) says most.
    if isinstance(body.get("errors"), list):
        return f"{response.reason_phrase}: {'; '.join(map(str, body['errors']))}"
    message = body.get("detail") or body.get("message")
    return f"{response.reason_phrase}: {message}" if message else response.reason_phrase


_OPTIONS = [
    click.option(
        "--url",
        envvar="CASSIEQ_URL",
        default="http://127.0.0.1:8080",
        show_default=True,
        help="Server ($CASSIEQ_URL).",
    ),
    click.option("--account", envvar="CASSIEQ_ACCOUNT", default=None, help="($CASSIEQ_ACCOUNT)"),
    click.option("--key", envvar="CASSIEQ_KEY", default=None, help="Account key ($CASSIEQ_KEY)."),
    click.option(
        "--key-name",
        "signing_key_name",
        envvar="CASSIEQ_KEY_NAME",
        default=None,
        help="The name of --key ($CASSIEQ_KEY_NAME, default primary): /api/v2 requests carry "
        "the v2 signature made with it (query and body signed too); grant: the key to sign "
        "with.",
    ),
    click.option(
        "--admin-token", envvar="CASSIEQ_ADMIN_TOKEN", default=None, help="($CASSIEQ_ADMIN_TOKEN)"
    ),
    click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts."),
    click.option(
        "--plain",
        is_flag=True,
        help="Tab-separated lines instead of tables (values never cut short either way).",
    ),
]


def connected(command: Callable[..., None]) -> Callable[..., None]:
    """Give a command the connection options; it receives a Connection first."""

    @functools.wraps(command)
    def run(
        *args: Any,
        url: str,
        account: str | None,
        key: str | None,
        signing_key_name: str | None,
        admin_token: str | None,
        as_json: bool,
        plain: bool,
        **kwargs: Any,
    ) -> None:
        conn = Connection(
            url.rstrip("/"), account, key, admin_token, as_json, signing_key_name, plain
        )
        command(conn, *args, **kwargs)

    for option in reversed(_OPTIONS):
        run = option(run)
    return run
