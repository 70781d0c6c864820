"""Subscription commands over /api/v2 (issue 36): `subscription create|list|show|commit|delete`,
`read` (an ordered subscription's messages after its position; --commit moves it past
them) and `seek` (replay or skip). A shared subscription is received from with `receive
--subscription` (messages_v2.py), and its deliveries acked and leased again with `ack` and
`update --subscription` (commands.py, through the helpers here). Guide:
docs/guides/subscriptions.md.
"""

from __future__ import annotations

from typing import Any

import click
import httpx

from cassieq.cli.client.connection import Connection, call, connected, segment
from cassieq.cli.client.output import emit

MAX_READ = 1000
_LIST_COLUMNS = ["name", "mode", "start", "lag", "oldestUnackedAgeSeconds", "position", "createdAt"]


def _path(conn: Connection, queue: str, name: str | None = None) -> str:
    base = f"{conn.queues_path(queue, api='v2')}/subscriptions"
    return base if name is None else f"{base}/{segment(name)}"


def shared_path(conn: Connection, queue: str, name: str, route: str) -> str:
    """A shared subscription's receive, ack or visibility route."""
    return f"{_path(conn, queue, name)}/{route}"


def ack_shared(c: httpx.Client, conn: Connection, queue: str, name: str, receipt: str) -> None:
    """Ack one delivery of shared subscription NAME (exit 1 with the entry's code when it is
    refused: stale, or a receipt of the queue or of another subscription)."""
    path = shared_path(conn, queue, name, "ack")
    _one_entry(call(c, "POST", path, json={"popReceipts": [receipt]}).json())


def lease_shared(
    c: httpx.Client, conn: Connection, queue: str, name: str, receipt: str, seconds: int
) -> dict[str, Any]:
    """A new lease of ``seconds`` for one delivery of shared subscription NAME: the new
    receipt and the message's tag."""
    entry = {"popReceipt": receipt, "visibilityTimeoutSeconds": seconds}
    path = shared_path(conn, queue, name, "visibility")
    answer = _one_entry(call(c, "POST", path, json={"entries": [entry]}).json())
    updated = answer["updated"][0]
    return {"popReceipt": updated["newPopReceipt"], "messageTag": updated["messageTag"]}


def _one_entry(answer: dict[str, Any]) -> dict[str, Any]:
    if answer["failed"]:
        failed = answer["failed"][0]
        raise click.ClickException(f"{failed['code']}: {failed['message']}")
    return answer


@click.group()
def subscription() -> None:
    """Subscriptions of a queue: each keeps its own position in the queue's messages
    (/api/v2). Ordered mode: `cassieq read`, `cassieq seek`; shared mode: `cassieq receive
    --subscription`, `cassieq ack --subscription`, `cassieq seek`."""


@subscription.command("create")
@click.argument("queue")
@click.argument("name")
@click.option(
    "--mode",
    type=click.Choice(["ordered", "shared"]),
    default="ordered",
    show_default=True,
    help="ordered: read by position (cassieq read); shared: a queue of its own over the "
    "queue's messages (cassieq receive --subscription).",
)
@click.option(
    "--start",
    default="latest",
    show_default=True,
    help="Where its position starts: earliest, latest, or an RFC 3339 time "
    "(2026-11-27T09:00:00Z: the first message sent at or after it).",
)
@connected
def subscription_create(conn: Connection, queue: str, name: str, mode: str, start: str) -> None:
    """Create subscription NAME of QUEUE (the same options again: unchanged)."""
    with conn.queue_api() as c:
        made = call(c, "PUT", _path(conn, queue, name), json={"mode": mode, "start": start})
    emit(made.json(), conn.as_json, plain=conn.plain, title="subscription")


@subscription.command("list")
@click.argument("queue")
@connected
def subscription_list(conn: Connection, queue: str) -> None:
    """QUEUE's subscriptions, with lag (messages after the position) and the oldest's age."""
    with conn.queue_api() as c:
        listed = call(c, "GET", _path(conn, queue)).json()
    if conn.as_json:
        emit(listed, True)
        return
    emit(listed["subscriptions"], False, plain=conn.plain, columns=_LIST_COLUMNS, title=queue)


@subscription.command("show")
@click.argument("queue")
@click.argument("name")
@connected
def subscription_show(conn: Connection, queue: str, name: str) -> None:
    """Subscription NAME: options, position, lag, oldestUnackedAgeSeconds."""
    with conn.queue_api() as c:
        shown = call(c, "GET", _path(conn, queue, name)).json()
    emit(shown, conn.as_json, plain=conn.plain, title="subscription")


@subscription.command("commit")
@click.argument("queue")
@click.argument("name")
@click.argument("position")
@click.option(
    "--expected",
    default=None,
    help="Only if the stored position is this one (else exit 1: someone moved it).",
)
@connected
def subscription_commit(
    conn: Connection, queue: str, name: str, position: str, expected: str | None
) -> None:
    """Commit POSITION (a read's next, or a message's position) as NAME's position."""
    body = (
        {"position": position} if expected is None else {"position": position, "expected": expected}
    )
    with conn.queue_api() as c:
        moved = call(c, "POST", f"{_path(conn, queue, name)}/position", json=body)
    emit(moved.json(), conn.as_json, plain=conn.plain, title="subscription")


@subscription.command("delete")
@click.argument("queue")
@click.argument("name")
@connected
def subscription_delete(conn: Connection, queue: str, name: str) -> None:
    """Delete subscription NAME (the queue's messages stay)."""
    with conn.queue_api() as c:
        call(c, "DELETE", _path(conn, queue, name))
    emit({"queueName": queue, "deleted": name}, conn.as_json, plain=conn.plain)


@click.command()
@click.argument("queue")
@click.argument("name", metavar="SUBSCRIPTION")
@click.option("--limit", type=click.IntRange(1, MAX_READ), default=10, show_default=True)
@click.option(
    "--commit",
    is_flag=True,
    help="Then commit the position after them (only if no one moved it meanwhile: else "
    "exit 1, nothing committed). Without it the same messages are read again.",
)
@connected
def read(conn: Connection, queue: str, name: str, limit: int, commit: bool) -> None:
    """Read up to --limit messages of QUEUE after SUBSCRIPTION's position (an ordered
    subscription; in id order within each partition) and print them with the next position
    (/api/v2)."""
    path = _path(conn, queue, name)
    with conn.queue_api() as c:
        # The position the read starts from: --commit moves it only if it is still there.
        start = call(c, "GET", path).json()["position"] if commit else None
        page = call(c, "GET", f"{path}/messages", params={"limit": limit}).json()
        committed = False
        if start is not None and page["messages"]:
            body = {"position": page["next"], "expected": start}
            call(c, "POST", f"{path}/position", json=body)
            committed = True
    if conn.as_json:
        # The API's object as it answered, and with --commit whether it was committed.
        emit({**page, "committed": committed} if commit else page, True)
        return
    _print_messages(page["messages"])
    click.echo(f"next: {page['next']}" + ("  (committed)" if committed else ""))


def _print_messages(messages: list[dict[str, Any]]) -> None:
    if not messages:
        click.echo("(no message after the position)")
    for message in messages:
        # Plain lines, never a table: a position must come out whole, to be copied.
        group = f"  groupId {message['groupId']}" if message.get("groupId") is not None else ""
        click.echo(f"id {message['id']}  sentAt {message['sentAt']}{group}")
        click.echo(f"  body: {message['body']}")
        if message["attributes"]:
            attributes = ", ".join(f"{k}={v}" for k, v in message["attributes"].items())
            click.echo(f"  attributes: {attributes}")
        click.echo(f"  position: {message['position']}")


@click.command()
@click.argument("queue")
@click.argument("name", metavar="SUBSCRIPTION")
@click.option(
    "--to",
    "to",
    type=click.Choice(["earliest", "latest"]),
    default=None,
    help="earliest: the oldest message still stored; latest: after the last one sent.",
)
@click.option(
    "--time", "time", default=None, help="RFC 3339: the first message sent at or after it."
)
@click.option("--position", default=None, help="A position a read gave (the read starts after it).")
@connected
def seek(
    conn: Connection,
    queue: str,
    name: str,
    to: str | None,
    time: str | None,
    position: str | None,
) -> None:
    """Move SUBSCRIPTION's position (replay or skip); exactly one of --to, --time,
    --position (/api/v2)."""
    given = [option for option in (to, time, position) if option is not None]
    if len(given) != 1:
        raise click.UsageError("give exactly one of --to, --time, --position")
    target: Any = (
        to if to is not None else {"time": time} if time is not None else {"position": position}
    )
    with conn.queue_api() as c:
        moved = call(c, "POST", f"{_path(conn, queue, name)}/seek", json={"to": target})
    emit(moved.json(), conn.as_json, plain=conn.plain, title="subscription")


SUBSCRIPTION_COMMANDS: list[click.Command] = [subscription, read, seek]
