"""The people's commands: accounts, keys, queues, messages, statistics, grants.

They talk to a server over HTTP. Shapes are stable for scripts:
`cassieq account create NAME`, `cassieq queue create QUEUE`, `cassieq put QUEUE MESSAGE`, ...
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import click
import httpx

from cassieq.cli.client.connection import Connection, call, connected, reason, segment
from cassieq.cli.client.messages_v2 import V2_COMMANDS
from cassieq.cli.client.output import emit
from cassieq.cli.client.subscriptions import SUBSCRIPTION_COMMANDS, ack_shared, lease_shared
from cassieq.cli.common import err

# --------------------------------------------------------------------------- accounts


@click.group()
def account() -> None:
    """Manage accounts (operator token)."""


@account.command("create")
@click.argument("name")
@connected
def account_create(conn: Connection, name: str) -> None:
    with conn.operator_api() as c:
        emit(
            call(c, "POST", "/api/v1/accounts", json=name).json(),
            conn.as_json,
            plain=conn.plain,
            title="account",
        )


@account.command("list")
@connected
def account_list(conn: Connection) -> None:
    with conn.operator_api() as c:
        accounts = call(c, "GET", "/api/v1/accounts").json()
    if conn.as_json:
        emit(accounts, True)
    else:
        emit(
            [
                {"accountName": a["accountName"], "keys": ", ".join(sorted(a["keys"]))}
                for a in accounts
            ],
            False,
            plain=conn.plain,
        )


@account.command("show")
@click.argument("name")
@connected
def account_show(conn: Connection, name: str) -> None:
    with conn.operator_api() as c:
        emit(
            call(c, "GET", f"/api/v1/accounts/{segment(name)}").json(),
            conn.as_json,
            plain=conn.plain,
            title="account",
        )


@account.command("delete")
@click.argument("name")
@connected
def account_delete(conn: Connection, name: str) -> None:
    with conn.operator_api() as c:
        call(c, "DELETE", f"/api/v1/accounts/{segment(name)}")
    emit({"deleted": name}, conn.as_json, plain=conn.plain)


# --------------------------------------------------------------------------- keys


@click.group()
def key() -> None:
    """Add or delete account keys (operator token)."""


@key.command("add")
@click.argument("account_name", metavar="ACCOUNT")
@click.argument("key_name", metavar="KEYNAME")
@connected
def key_add(conn: Connection, account_name: str, key_name: str) -> None:
    with conn.operator_api() as c:
        new = call(
            c, "POST", f"/api/v1/accounts/{segment(account_name)}/keys", json={"keyName": key_name}
        ).json()
    emit(
        {"accountName": account_name, "keyName": key_name, "key": new},
        conn.as_json,
        plain=conn.plain,
    )


@key.command("delete")
@click.argument("account_name", metavar="ACCOUNT")
@click.argument("key_name", metavar="KEYNAME")
@connected
def key_delete(conn: Connection, account_name: str, key_name: str) -> None:
    with conn.operator_api() as c:
        call(c, "DELETE", f"/api/v1/accounts/{segment(account_name)}/keys/{segment(key_name)}")
    emit({"deleted": key_name, "accountName": account_name}, conn.as_json, plain=conn.plain)


# --------------------------------------------------------------------------- queues


@click.group()
def queue() -> None:
    """Create, list, inspect and delete queues."""


@queue.command("create")
@click.argument("name", metavar="QUEUE")
@click.option("--bucket-size", type=int, default=None)
@click.option("--max-delivery-count", type=int, default=None)
@click.option("--dlq", "dlq_name", default=None, help="Dead-letter queue name.")
@click.option("--random-pick", is_flag=True, help="Not strictly FIFO: spreads concurrent readers.")
@click.option("--finalize-seconds", type=int, default=None)
@click.option("--error-if-exists", is_flag=True)
@click.option(
    "--fifo",
    is_flag=True,
    help="A FIFO queue (/api/v2): each message group delivered in order, one message in "
    "flight at a time, deduplication within 5 minutes. Fixed at creation.",
)
@click.option(
    "--content-based-dedup",
    is_flag=True,
    help="With --fifo: a message without a dedup id is deduplicated by its body.",
)
@connected
def queue_create(
    conn: Connection,
    name: str,
    bucket_size: int | None,
    max_delivery_count: int | None,
    dlq_name: str | None,
    random_pick: bool,
    finalize_seconds: int | None,
    error_if_exists: bool,
    fifo: bool,
    content_based_dedup: bool,
) -> None:
    if fifo or content_based_dedup:
        options = {
            "bucketSize": bucket_size,
            "maxDeliveryCount": max_delivery_count,
            "deadLetterQueue": dlq_name,
            "repairWorkerBucketFinalizeTimeSeconds": finalize_seconds,
            "strictFifo": not random_pick,
            "fifo": fifo,
            "contentBasedDeduplication": content_based_dedup,
        }
        _create_v2(conn, name, {k: v for k, v in options.items() if v is not None}, error_if_exists)
        return
    body: dict[str, Any] = {"queueName": name, "strictFifo": not random_pick}
    for field, value in (
        ("bucketSize", bucket_size),
        ("maxDeliveryCount", max_delivery_count),
        ("dlqName", dlq_name),
        ("repairWorkerBucketFinalizeTimeSeconds", finalize_seconds),
    ):
        if value is not None:
            body[field] = value
    params = {"errorIfExists": "true"} if error_if_exists else {}
    with conn.queue_api() as c:
        # The create answers an empty body (wire contract): the queue is shown by a GET.
        call(c, "POST", conn.queues_path(), json=body, params=params)
        emit(_definition(conn, c, name), conn.as_json, plain=conn.plain, title="queue")


def _create_v2(conn: Connection, name: str, options: dict[str, Any], error_if_exists: bool) -> None:
    """Create over /api/v2 (v1's create has no FIFO options): 201 created, 200 there with
    the same options (an error with --error-if-exists, as v1's create), 409 with others."""
    with conn.queue_api() as c:
        created = call(c, "PUT", conn.queues_path(name, api="v2"), json=options)
    if created.status_code == 200 and error_if_exists:
        raise click.ClickException(f"queue {name!r} already exists")
    emit(created.json(), conn.as_json, plain=conn.plain, title="queue")


_LIST_COLUMNS = ["queueName", "bucketSize", "maxDeliveryCount", "dlqName", "strictFifo"]


@queue.command("list")
@connected
def queue_list(conn: Connection) -> None:
    """The account's queues, with each one's depth and size.

    depth: messages visible now, ready to be delivered (the metrics' cassieq_queue_depth,
    SQS's ApproximateNumberOfMessages); size: every message still in the queue (visible,
    in flight, delayed). Both from the v2 statistics, read one queue at a time (blank
    from a server without /api/v2, or when v2 refuses the key: see --key-name).
    """
    with conn.queue_api() as c:
        queues = call(c, "GET", conn.queues_path()).json()
        refused = 0
        for q in queues:
            path = f"{conn.queues_path(q['queueName'], api='v2')}/statistics"
            try:
                counts = _v2_or_none(c, path)
            except _Refused:
                counts, refused = None, refused + 1
            q["depth"] = None if counts is None else counts["visible"]
            q["size"] = None if counts is None else counts["size"]
    if refused:
        # The list is v1's (v1's Signed needs no key name); v2 signs with one.
        err(
            f"depth and size left blank for {refused} queue(s): /api/v2 refused the key "
            "(give --key-name or CASSIEQ_KEY_NAME if it is not the primary key)"
        )
    emit(
        queues,
        conn.as_json,
        plain=conn.plain,
        # New columns go last: --plain's columns are read by position.
        columns=[*_LIST_COLUMNS, "depth", "size"],
    )


@queue.command("show")
@click.argument("name", metavar="QUEUE")
@connected
def queue_show(conn: Connection, name: str) -> None:
    """The queue with every option, by the names /api/v2 uses (deadLetterQueue, ...)."""
    with conn.queue_api() as c:
        emit(_definition(conn, c, name), conn.as_json, plain=conn.plain, title="queue")


def _definition(conn: Connection, c: httpx.Client, name: str) -> dict[str, Any]:
    """The queue as v2 answers it (every option, v2's names); v1's from a server without
    /api/v2 (a 404 or 405 there, and the queue found over v1)."""
    found = _v2_or_none(c, conn.queues_path(name, api="v2"))
    if found is not None:
        return found
    shown: dict[str, Any] = call(c, "GET", conn.queues_path(name)).json()
    return shown


class _Refused(click.ClickException):
    """v2 refused the credentials (401, 403)."""


def _v2_or_none(c: httpx.Client, path: str) -> dict[str, Any] | None:
    """GET a v2 resource; None when the server has no such route (404, 405) or thing."""
    try:
        response = c.get(path)
    except httpx.HTTPError as exc:
        raise click.ClickException(f"cannot reach {c.base_url}: {exc}") from None
    if response.status_code in (404, 405):
        return None
    if response.status_code in (401, 403):
        raise _Refused(f"{response.status_code} {reason(response)}")
    if response.status_code >= 400:
        raise click.ClickException(f"{response.status_code} {reason(response)}")
    body: dict[str, Any] = response.json()
    return body


@queue.command("delete")
@click.argument("name", metavar="QUEUE")
@connected
def queue_delete(conn: Connection, name: str) -> None:
    with conn.queue_api() as c:
        call(c, "DELETE", conn.queues_path(name))
    emit({"deleted": name}, conn.as_json, plain=conn.plain)


# --------------------------------------------------------------------------- messages


@click.command()
@click.argument("name", metavar="QUEUE")
@click.option("--invisibility", type=int, default=30, show_default=True, help="Seconds.")
@connected
def get(conn: Connection, name: str, invisibility: int) -> None:
    """Get the next visible message (prints null / nothing when there is none)."""
    with conn.queue_api() as c:
        response = call(
            c,
            "GET",
            f"{conn.queues_path(name)}/messages/next",
            params={"invisibilityTimeSeconds": invisibility},
        )
    if response.status_code == 204:
        emit(None, conn.as_json, plain=conn.plain) if conn.as_json else click.echo(
            "(no visible message)"
        )
        return
    emit(response.json(), conn.as_json, plain=conn.plain, title="message")


_SUBSCRIPTION_HELP = "RECEIPT is of this shared subscription (`receive --subscription`; /api/v2)."


@click.command()
@click.argument("name", metavar="QUEUE")
@click.argument("receipt", metavar="RECEIPT")
@click.option("--subscription", default=None, help=_SUBSCRIPTION_HELP)
@connected
def ack(conn: Connection, name: str, receipt: str, subscription: str | None) -> None:
    """Ack the message a pop receipt stands for (in the subscription, with --subscription)."""
    with conn.queue_api() as c:
        if subscription is not None:
            ack_shared(c, conn, name, subscription, receipt)
        else:
            path = f"{conn.queues_path(name)}/messages"
            call(c, "DELETE", path, params={"popReceipt": receipt})
    emit({"acked": True}, conn.as_json, plain=conn.plain)


@click.command()
@click.argument("name", metavar="QUEUE")
@click.argument("receipt", metavar="RECEIPT")
@click.option("--message", default=None, help="New payload (default: keep it).")
@click.option(
    "--invisibility",
    type=click.IntRange(0),
    default=None,
    help="Seconds from now until the message is visible again (default: keep the lease it "
    "has; 0: visible at once).",
)
@click.option("--subscription", default=None, help=_SUBSCRIPTION_HELP + " --invisibility only.")
@connected
def update(
    conn: Connection,
    name: str,
    receipt: str,
    message: str | None,
    invisibility: int | None,
    subscription: str | None,
) -> None:
    """Change a held message's payload and/or invisibility; prints the new receipt."""
    if message is None and invisibility is None:
        raise click.UsageError("give --message, --invisibility or both")
    if subscription is not None and (message is not None or invisibility is None):
        # The message is the queue's, read by every subscription: not one's to change.
        raise click.UsageError("with --subscription: --invisibility, and no --message")
    result: dict[str, Any]
    with conn.queue_api() as c:
        if subscription is not None:
            assert invisibility is not None
            result = lease_shared(c, conn, name, subscription, receipt, invisibility)
        elif invisibility is None:
            # v1's update always sets a new lease (absent means 0: visible at once); v2's
            # visibility change without visibilityTimeoutSeconds keeps the one it has.
            entry = {"popReceipt": receipt, "body": message}
            path = f"{conn.queues_path(name, api='v2')}/messages/visibility"
            answer = call(c, "POST", path, json={"entries": [entry]}).json()
            if answer["failed"]:
                failed = answer["failed"][0]
                raise click.ClickException(f"{failed['code']}: {failed['message']}")
            updated = answer["updated"][0]
            result = {
                "popReceipt": updated["newPopReceipt"],
                "messageTag": updated["messageTag"],
            }
        else:
            body = {"message": message, "newInvisibilitySeconds": invisibility}
            params = {"popReceipt": receipt}
            path = f"{conn.queues_path(name)}/messages"
            result = call(c, "PUT", path, params=params, json=body).json()
    emit(result, conn.as_json, plain=conn.plain)


@click.command()
@click.argument("name", metavar="QUEUE")
@click.option("--detail", is_flag=True, help="Add the stats job's latest snapshot, if any.")
@connected
def stats(conn: Connection, name: str, detail: bool) -> None:
    """Queue statistics (the v2 route: v1 answers only the size)."""
    params = {"detail": "true"} if detail else {}
    path = f"{conn.queues_path(name, api='v2')}/statistics"
    with conn.queue_api() as c:
        shown = call(c, "GET", path, params=params).json()
    snapshot = shown.get("detail")
    if not conn.as_json and isinstance(snapshot, dict) and "computedAt" in snapshot:
        # The API's epoch milliseconds, for people: an ISO-8601 UTC time (--json keeps
        # the API's value).
        snapshot["computedAt"] = _iso_utc(snapshot["computedAt"])
    emit(shown, conn.as_json, plain=conn.plain, title=name)


def _iso_utc(epoch_ms: int) -> str:
    instant = datetime.fromtimestamp(epoch_ms / 1000, UTC)
    return instant.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@click.command()
@click.option("--levels", required=True, help="Short forms, e.g. rpa.")
@click.option("--queue", "queue_name", default=None)
@click.option("--start", default=None, help="ISO time, e.g. 2026-11-21T10:00:00Z.")
@click.option("--end", default=None, help="ISO time.")
@connected
def grant(
    conn: Connection,
    levels: str,
    queue_name: str | None,
    start: str | None,
    end: str | None,
) -> None:
    """Issue a signed query string for the account (operator token)."""
    if not conn.account:
        raise click.UsageError("needs --account (or CASSIEQ_ACCOUNT)")
    body: dict[str, Any] = {
        "accountName": conn.account,
        "keyName": conn.key_name or "primary",
        "levels": list(levels),
    }
    for field, value in (("queueName", queue_name), ("startTime", start), ("endTime", end)):
        if value is not None:
            body[field] = value
    with conn.operator_api() as c:
        issued = call(c, "POST", "/api/v1/permissions", json=body).json()
    if conn.as_json:
        click.echo(json.dumps(issued))
    else:
        click.echo(issued["queryParam"])


COMMANDS: list[click.Command] = [
    *[account, key, queue, get, ack, update, stats, grant],
    *V2_COMMANDS,
    *SUBSCRIPTION_COMMANDS,
]
