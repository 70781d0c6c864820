"""Message commands over /api/v2 (api-v2.md): batch put, receive, drain, peek, purge, redrive.

`put --file` streams the file in batches (v2; one by one over v1 when the server has no v2):
on a failure it says how many messages were sent and up to which line (always the file's
first ones, so `--skip LINE` resumes after them) and which line failed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click
import httpx

from cassieq.cli.client.connection import Connection, call, connected, reason
from cassieq.cli.client.output import emit
from cassieq.cli.client.progress import progress
from cassieq.cli.client.subscriptions import shared_path

MAX_BATCH = 100
_ENTRY_FIELDS = {"body", "attributes", "delaySeconds", "groupId", "deduplicationId"}
# Entry fields a v1-only server cannot keep: a line with one is refused, not sent without it.
_V2_ONLY = ("attributes", "groupId", "deduplicationId")
# "messages[3]..." in a refusal of the server: the entry of the batch it is about.
_ENTRY_INDEX = re.compile(r"messages\[(\d+)\]")


class LineError(ValueError):
    """A --jsonl line that is not a message entry."""


@dataclass(frozen=True)
class Line:
    number: int  # 1-based, as editors count
    entry: dict[str, Any]


def _entries(
    path: Path, jsonl: bool, delay: int | None, skip: int = 0, group: str | None = None
) -> Iterator[Line]:
    # Bytes, decoded line by line: a line that is not UTF-8 is named exactly.
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            if number <= skip:
                continue  # sent by an earlier run
            try:
                text = raw.decode("utf-8").removesuffix("\n").removesuffix("\r")
            except UnicodeDecodeError:
                raise LineError(f"line {number}: not UTF-8") from None
            if not jsonl:
                entry: dict[str, Any] = {"body": text}
            elif not text.strip():
                continue  # blank lines in JSON Lines separate nothing
            else:
                entry = _parse_entry(text, number)
            if delay is not None:
                entry.setdefault("delaySeconds", delay)
            if group is not None:
                entry.setdefault("groupId", group)
            yield Line(number, entry)


def _parse_entry(text: str, number: int) -> dict[str, Any]:
    try:
        entry = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LineError(f"line {number}: not JSON ({exc.msg})") from None
    if isinstance(entry, str):
        return {"body": entry}  # a JSON string: the body alone (newlines escaped as \n)
    if not isinstance(entry, dict) or not isinstance(entry.get("body"), str):
        raise LineError(f'line {number}: needs a JSON string, or an object with a string "body"')
    unknown = sorted(set(entry) - _ENTRY_FIELDS)
    if unknown:
        raise LineError(f"line {number}: unknown fields {', '.join(unknown)}")
    return entry


def _line_count(path: Path) -> int:
    with path.open("rb") as raw:
        return sum(1 for _ in raw)


@click.command()
@click.argument("name", metavar="QUEUE")
@click.argument("message", required=False)
@click.option(
    "--file",
    "file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="One message per line (with --jsonl, one JSON string or object per line).",
)
@click.option(
    "--jsonl",
    is_flag=True,
    help='Lines of --file are JSON: a string (the body), or {"body": str, "attributes"?: '
    '{str: str}, "delaySeconds"?: int, "groupId"?: str, "deduplicationId"?: str}. For bodies '
    "with newlines in them.",
)
@click.option(
    "--batch",
    type=click.IntRange(1, MAX_BATCH),
    default=10,
    show_default=True,
    help="Messages per request.",
)
@click.option(
    "--skip",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Leave out the first SKIP lines of --file (sent by an earlier run that stopped: it "
    "said up to which line).",
)
@click.option(
    "--delay",
    "--invisibility",
    "delay",
    type=click.IntRange(0),
    default=None,
    help="Seconds before the first delivery (default: the queue's delaySeconds).",
)
@click.option(
    "--group",
    default=None,
    help="The message group (needed on a FIFO queue: delivered in order within it); with "
    "--file, of every line without its own groupId.",
)
@click.option(
    "--dedup-id",
    default=None,
    help="FIFO queues: the deduplication id (the same id within 5 minutes is not stored "
    "again). MESSAGE only.",
)
@connected
def put(
    conn: Connection,
    name: str,
    message: str | None,
    file: Path | None,
    jsonl: bool,
    batch: int,
    skip: int,
    delay: int | None,
    group: str | None,
    dedup_id: str | None,
) -> None:
    """Put MESSAGE (or every line of --file) into QUEUE, in batches (/api/v2; one by one
    over /api/v1 when the server has no v2). On a FIFO queue it also prints the message's
    id, sequenceNumber, and duplicate (true: its dedup id was seen within 5 minutes, the
    id is the first message's)."""
    if (message is None) == (file is None):
        raise click.UsageError("give a MESSAGE or --file, not both")
    if (jsonl or skip) and file is None:
        raise click.UsageError("--jsonl and --skip read --file")
    if dedup_id is not None and file is not None:
        raise click.UsageError("--dedup-id is one message's: with --file, give each line its own")
    path = f"{conn.queues_path(name, api='v2')}/messages"
    if message is not None:
        entry: dict[str, Any] = {"body": message}
        for field, value in (
            ("delaySeconds", delay),
            ("groupId", group),
            ("deduplicationId", dedup_id),
        ):
            if value is not None:
                entry[field] = value
        with conn.queue_api() as c:
            answer = call(c, "POST", path, json={"messages": [entry]}).json()["messages"][0]
        emit({"queueName": name, "put": 1, **_fifo_fields(answer)}, conn.as_json, plain=conn.plain)
        return
    assert file is not None
    sender = _BatchSender(conn, name, path, skip)
    with sender, progress(not conn.as_json) as bar:
        task = bar.add_task("put", total=max(0, _line_count(file) - skip))
        pending: list[Line] = []
        try:
            for line in _entries(file, jsonl, delay, skip, group):
                pending.append(line)
                if len(pending) == batch:
                    sender.send(pending)
                    bar.update(task, completed=line.number - skip)
                    pending = []
        except LineError as exc:
            sender.send(pending)  # the lines before the bad one: "sent" stays a prefix
            sender.fail(str(exc))
        sender.send(pending)
    done: dict[str, Any] = {"queueName": name, "put": sender.sent}
    if sender.duplicates is not None:
        done["duplicates"] = sender.duplicates  # a FIFO queue's: sent, not stored again
    emit(done, conn.as_json, plain=conn.plain)


def _fifo_fields(sent: dict[str, Any]) -> dict[str, Any]:
    """A FIFO queue's answer to one message: its id, sequence number and whether it was a
    duplicate. Nothing for a standard queue's (it has no sequenceNumber)."""
    if "sequenceNumber" not in sent:
        return {}
    return {
        "id": sent["id"],
        "sequenceNumber": sent["sequenceNumber"],
        "duplicate": sent.get("duplicate", False),
    }


class _BatchSender:
    """Sends batches in file order; ``sent`` is always the file's first messages (after
    --skip). Over v2 when the server has it, else over v1, one request per message."""

    def __init__(self, conn: Connection, queue: str, path: str, skip: int = 0) -> None:
        self.conn, self.queue, self.path = conn, queue, path
        self.sent = 0
        # Of the messages sent: how many a FIFO queue found duplicates (None: no FIFO answer).
        self.duplicates: int | None = None
        self.last_line = skip
        self.v1 = False
        self._client = conn.queue_api()

    def __enter__(self) -> _BatchSender:
        return self

    def __exit__(self, *_: object) -> None:
        self._client.close()

    def send(self, lines: list[Line]) -> None:
        if not lines:
            return
        if not self.v1:
            response = self._post(lines, self.path, json={"messages": [x.entry for x in lines]})
            if response.status_code in (404, 405) and self._without_v2():
                self.v1 = True
            else:
                self._check(response, lines)
                self._count_duplicates(response)
                self._sent(lines)
                return
        for line in lines:
            self._send_v1(line)

    def _count_duplicates(self, response: httpx.Response) -> None:
        answers = response.json()["messages"]
        if any("sequenceNumber" in a for a in answers):
            found = sum(1 for a in answers if a.get("duplicate"))
            self.duplicates = (self.duplicates or 0) + found

    def _send_v1(self, line: Line) -> None:
        entry = line.entry
        for field in _V2_ONLY:
            if entry.get(field):
                self.fail(f"line {line.number} has {field}: this server (v1 only) cannot keep it")
        params = {"initialInvisibilitySeconds": entry.get("delaySeconds", 0)}
        path = f"{self.conn.queues_path(self.queue)}/messages"
        body = entry["body"].encode()
        response = self._post([line], path, content=body, params=params)
        self._check(response, [line])
        self._sent([line])

    def _post(self, lines: list[Line], path: str, **kwargs: Any) -> httpx.Response:
        first, last = lines[0].number, lines[-1].number
        try:
            return self._client.post(path, **kwargs)
        except httpx.HTTPError as exc:
            where = f"lines {first}-{last}" if first != last else f"line {first}"
            self.fail(f"no answer for {where} ({exc}): it may or may not have been sent")

    def _without_v2(self) -> bool:
        """After a 404 or 405 from v2's send: whether the queue is there over v1 (then the
        server has no v2), rather than missing (then the 404 stands)."""
        try:
            shown = self._client.get(self.conn.queues_path(self.queue))
        except httpx.HTTPError:
            return False
        return shown.status_code == 200

    def _check(self, response: httpx.Response, lines: list[Line]) -> None:
        if response.status_code < 400:
            return
        first, last = lines[0].number, lines[-1].number
        why = f"{response.status_code} {reason(response)}"
        index = _ENTRY_INDEX.search(why)
        if index is not None and int(index[1]) < len(lines):
            where = f"line {lines[int(index[1])].number}"
        else:
            where = f"lines {first}-{last}" if first != last else f"line {first}"
        self.fail(f"{where} refused: {why}")

    def _sent(self, lines: list[Line]) -> None:
        self.sent += len(lines)
        self.last_line = lines[-1].number

    def fail(self, problem: str) -> NoReturn:
        if self.conn.as_json:
            emit(
                {
                    "queueName": self.queue,
                    "put": self.sent,
                    "lastLineSent": self.last_line,
                    "error": problem,
                },
                True,
            )
        line = self.last_line
        upto = f" (up to line {line})" if self.sent else f" (after line {line})" if line else ""
        resume = f"; resume with --skip {line}" if line else ""
        raise click.ClickException(f"sent {self.sent} messages{upto}; {problem}{resume}")


@click.command()
@click.argument("name", metavar="QUEUE")
@click.option("--max", "max_messages", type=click.IntRange(1, MAX_BATCH), default=1)
@click.option("--wait", type=click.IntRange(0, 20), default=0, help="Long poll, seconds.")
@click.option(
    "--visibility",
    type=click.IntRange(0),
    default=None,
    help="Lease seconds (default: the queue's visibilityTimeoutSeconds).",
)
@click.option(
    "--subscription",
    default=None,
    help="From this shared subscription of QUEUE (its own deliveries: ack them with `ack "
    "--subscription`); the queue's consumers and other subscriptions are not touched.",
)
@connected
def receive(
    conn: Connection,
    name: str,
    max_messages: int,
    wait: int,
    visibility: int | None,
    subscription: str | None,
) -> None:
    """Receive up to --max messages, waiting up to --wait seconds for the first (/api/v2)."""
    body: dict[str, Any] = {"maxMessages": max_messages, "waitSeconds": wait}
    if visibility is not None:
        body["visibilityTimeoutSeconds"] = visibility
    path = f"{conn.queues_path(name, api='v2')}/messages/receive"
    if subscription is not None:
        path = shared_path(conn, name, subscription, "receive")
    with conn.queue_api(timeout=30 + wait) as c:
        answer = call(c, "POST", path, json=body).json()
    if conn.as_json:
        emit(answer, True)  # the API's object, {"messages": [...]}, as the API answered it
        return
    messages = answer["messages"]
    if not messages:
        click.echo("(no visible message)")
    for message in messages:
        # Plain lines, never a table: a receipt must come out whole, to be copied.
        attributes = ", ".join(f"{k}={v}" for k, v in message["attributes"].items())
        # A message of a group: its group (and, on a FIFO queue, its sequence number).
        grouped = "".join(
            f"  {field} {message[field]}"
            for field in ("groupId", "sequenceNumber")
            if message.get(field) is not None
        )
        click.echo(
            f"id {message['id']}  deliveryCount {message['deliveryCount']}  "
            f"sentAt {message['sentAt']}{grouped}"
        )
        click.echo(f"  body: {message['body']}")
        if attributes:
            click.echo(f"  attributes: {attributes}")
        click.echo(f"  popReceipt: {message['popReceipt']}")


@click.command()
@click.argument("name", metavar="QUEUE")
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append message bodies here.",
)
@click.option("--batch", type=click.IntRange(1, MAX_BATCH), default=10, show_default=True)
@connected
def drain(conn: Connection, name: str, output: Path | None, batch: int) -> None:
    """Receive and ack in batches until QUEUE answers empty (/api/v2)."""
    base = conn.queues_path(name, api="v2")
    done = refused = 0
    with conn.queue_api() as c, progress(not conn.as_json) as bar:
        total = call(c, "GET", f"{base}/statistics").json()["size"]
        task = bar.add_task("drain", total=total)
        try:
            sink = output.open("a") if output else None
        except OSError as exc:
            raise click.ClickException(f"cannot write {output}: {exc.strerror}") from None
        try:
            while True:
                received = call(
                    c, "POST", f"{base}/messages/receive", json={"maxMessages": batch}
                ).json()["messages"]
                if not received:
                    break
                if sink:
                    sink.writelines(m["body"] + "\n" for m in received)
                receipts = [m["popReceipt"] for m in received]
                acked = call(c, "POST", f"{base}/messages/ack", json={"popReceipts": receipts})
                result = acked.json()
                # A receipt refused (a lease lost) is delivered again later: drained then.
                done += len(result["acked"])
                refused += len(result["failed"])
                bar.advance(task, len(result["acked"]))
        finally:
            if sink:
                sink.close()
    emit({"queueName": name, "drained": done, "ackFailed": refused}, conn.as_json, plain=conn.plain)


@click.command()
@click.argument("name", metavar="QUEUE")
@click.option("--limit", type=click.IntRange(1, MAX_BATCH), default=10, show_default=True)
@click.option("--after", default=None, help="The 'next' cursor of a previous peek.")
@connected
def peek(conn: Connection, name: str, limit: int, after: str | None) -> None:
    """Look at QUEUE's messages without taking them (no lease, no change) (/api/v2)."""
    params: dict[str, Any] = {"limit": limit}
    if after is not None:
        params["after"] = after
    path = f"{conn.queues_path(name, api='v2')}/messages/peek"
    with conn.queue_api() as c:
        page = call(c, "GET", path, params=params).json()
    if conn.as_json:
        emit(page, True)
        return
    columns = ["id", "body", "attributes", "deliveryCount", "visible", "sentAt"]
    # Messages of groups: their groups and sequence numbers, last (--plain reads by position).
    columns += [
        field
        for field in ("groupId", "sequenceNumber")
        if any(field in m for m in page["messages"])
    ]
    emit(page["messages"], False, plain=conn.plain, columns=columns, title=name)
    if page.get("next"):
        click.echo(f"next: {page['next']}")


@click.command()
@click.argument("name", metavar="QUEUE")
@connected
def purge(conn: Connection, name: str) -> None:
    """Delete every message put into QUEUE before now; later puts stay (/api/v2)."""
    with conn.queue_api() as c:
        purged = call(c, "POST", f"{conn.queues_path(name, api='v2')}/purge").json()
    emit({"queueName": name, **purged}, conn.as_json, plain=conn.plain)


@click.command()
@click.argument("name", metavar="QUEUE")
@click.option("--to", "target", default=None, help="Move to this queue (default: the sources).")
@click.option("--max-per-second", type=click.IntRange(1), default=None)
@click.option("--status", "task_id", default=None, help="Show this redrive task instead.")
@connected
def redrive(
    conn: Connection,
    name: str,
    target: str | None,
    max_per_second: int | None,
    task_id: str | None,
) -> None:
    """Move QUEUE's (a dead-letter queue's) messages back; prints the task (/api/v2)."""
    base = f"{conn.queues_path(name, api='v2')}/redrive"
    with conn.queue_api() as c:
        if task_id is not None:
            if target is not None or max_per_second is not None:
                raise click.UsageError("--status shows a task: no --to or --max-per-second")
            shown = call(c, "GET", f"{base}/{_task_segment(task_id)}").json()
            emit({"queueName": name, "taskId": task_id, **shown}, conn.as_json, plain=conn.plain)
            return
        body: dict[str, Any] = {}
        if target is not None:
            body["to"] = target
        if max_per_second is not None:
            body["maxPerSecond"] = max_per_second
        started = call(c, "POST", base, json=body).json()
    emit({"queueName": name, **started}, conn.as_json, plain=conn.plain)


def _task_segment(task_id: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", task_id) or task_id in {".", ".."}:
        raise click.UsageError(f"invalid task id {task_id!r}")
    return task_id


V2_COMMANDS: list[click.Command] = [put, receive, drain, peek, purge, redrive]
