"""The FIFO workload: boto3, unchanged, against the SQS endpoint of one or more servers.

Each group's sends are sequential (the next one goes when the last one answered a MessageId),
the groups concurrent, one thread each; a send that gets no answer or a server error is sent
again with the same MessageDeduplicationId (what an SQS client does), and a share of the sends
answered are repeated on purpose. Consumers receive batches of up to 10 with a short
visibility timeout and delete what they got in one batch, except a share of first deliveries
left unacked on purpose (and, after such a message, the rest of its group in that batch: a
FIFO consumer must not go past a message it did not finish). The run ends once every message
sent is acked and nothing more came for ``tail`` seconds, or at the timeout.

boto3 clients are blocking: every producer and consumer is a thread with a client of its own.
botocore's own retries are off, so every attempt is recorded.
"""

from __future__ import annotations

import random
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from cassieq.model import DeduplicationScope
from cassieq.tools.fifo.checker import ACKED
from cassieq.tools.fifo.events import Delivery, EventLog, Outcome, Send, message_body, parse_body

Say = Callable[[str], None]
MAX_BATCH = 10
RETRY_PAUSE_S = 0.2
# Answers a send is retried after (with the same dedup id); any other error stops the group:
# the endpoint refuses what the workload asks, and the report says so.
RETRIED_CODES = frozenset(
    {"ServiceUnavailable", "InternalError", "InternalFailure", "RequestThrottled", "Throttling"}
)


@dataclass(frozen=True, kw_only=True)
class Credentials:
    endpoints: tuple[str, ...]  # the servers' base URLs; clients are spread over them
    access_key: str  # the account (cassieq's SQS access key id is the account's name)
    secret_key: str  # one of its keys
    region: str = "us-east-1"  # the servers' CASSIEQ_SQS_REGION


@dataclass(frozen=True, kw_only=True)
class Shape:
    groups: int = 20
    per_group: int = 200
    consumers: int = 8
    expire_fraction: float = 0.05  # of first deliveries, left for their lease to run out
    retry_fraction: float = 0.05  # of sends answered, sent again with the same dedup id
    visibility: int = 5  # seconds, every receive's VisibilityTimeout
    wait: int = 1  # seconds, every receive's WaitTimeSeconds
    timeout: float = 600.0  # seconds for the whole run, from the first send
    tail: float | None = None  # seconds consumers go on after the last ack (None: vis + 2)
    rate: float | None = None  # sends per second, all groups together (None: unpaced)
    request_timeout: float = 30.0
    seed: int = 1
    # The queue's DeduplicationScope: "messageGroup" claims a group's ids together.
    dedup_scope: DeduplicationScope = "queue"

    @property
    def tail_s(self) -> float:
        return float(self.visibility + 2) if self.tail is None else self.tail


@dataclass
class Progress:
    started: float = 0.0
    sends_done: float | None = None  # every group sent its last message
    all_acked: float | None = None
    finished: float = 0.0
    timed_out: bool = False
    harness_errors: list[str] = field(default_factory=list)
    foreign_messages: int = 0  # delivered bodies this run did not send


def new_client(creds: Credentials, endpoint: str, shape: Shape, pool: int = 10) -> Any:
    return boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name=creds.region,
        aws_access_key_id=creds.access_key,
        aws_secret_access_key=creds.secret_key,
        config=Config(
            retries={"max_attempts": 1, "mode": "standard"},
            connect_timeout=5,
            read_timeout=shape.request_timeout,
            max_pool_connections=pool,
        ),
    )


def create_fifo_queue(creds: Credentials, shape: Shape, name: str | None = None) -> str:
    """A new FIFO queue (its URL), known to every endpoint before the run starts."""
    name = name or f"fifo-check-{secrets.token_hex(4)}.fifo"
    url = ""
    for k, endpoint in enumerate(creds.endpoints):
        client = new_client(creds, endpoint, shape)
        if k == 0:
            attributes = {"FifoQueue": "true", "VisibilityTimeout": str(shape.visibility)}
            if shape.dedup_scope != "queue":
                attributes["DeduplicationScope"] = shape.dedup_scope
            url = str(client.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"])
            fifo = client.get_queue_attributes(QueueUrl=url, AttributeNames=["FifoQueue"])
            if fifo.get("Attributes", {}).get("FifoQueue") != "true":
                raise RuntimeError(f"{name}: the endpoint made a queue that is not FIFO: {fifo}")
        client.get_queue_url(QueueName=name)
    return url


class FifoWorkload:
    def __init__(
        self,
        creds: Credentials,
        shape: Shape,
        queue_url: str,
        say: Say,
        hold: threading.Event | None = None,
    ) -> None:
        """``hold``: while it is not set, the run does not end before its timeout (a chaos
        scenario's faults are all injected and healed before the last ack counts)."""
        self.creds, self.shape, self.url, self.say = creds, shape, queue_url, say
        self._hold = hold
        self.log = EventLog()
        self.progress = Progress()
        self._lock = threading.Lock()
        self._stored: set[str] = set()  # dedup ids a send of which answered a MessageId
        self._done: set[str] = set()  # dedup ids acked (or acked without an answer)
        self._seen: set[str] = set()  # dedup ids delivered at least once
        self._producing = shape.groups
        self._calls = 0
        self._stop = threading.Event()
        self._run = secrets.token_hex(3)

    # -- the run ---------------------------------------------------------------------------

    def run(self) -> EventLog:
        shape = self.shape
        self.progress.started = time.monotonic()
        deadline = self.progress.started + shape.timeout
        threads = [
            threading.Thread(target=self._guard, args=(self._produce, g), name=f"group-{g}")
            for g in range(shape.groups)
        ] + [
            threading.Thread(target=self._guard, args=(self._consume, c), name=f"consumer-{c}")
            for c in range(shape.consumers)
        ]
        for t in threads:
            t.start()
        self._watch(deadline)
        for t in threads:
            t.join()
        self.progress.finished = time.monotonic()
        return self.log

    def stop(self) -> None:
        self._stop.set()

    def _watch(self, deadline: float) -> None:
        """Ends the run: the tail after the last ack, the deadline, or a broken harness."""
        reported = time.monotonic()
        while not self._stop.wait(0.2):
            now = time.monotonic()
            with self._lock:
                producing, stored, done = self._producing, len(self._stored), len(self._done)
                all_done = not producing and self._stored <= self._done
            all_done = all_done and (self._hold is None or self._hold.is_set())
            if all_done and self.progress.all_acked is None:
                self.progress.all_acked = now
                self.say(f"all {stored} messages acked; consumers go on {self.shape.tail_s} s")
            if self.progress.all_acked and now - self.progress.all_acked >= self.shape.tail_s:
                break
            if now >= deadline:
                self.progress.timed_out = True
                self.say(f"timed out: {done} of {stored} messages acked")
                break
            if now - reported >= 10:
                reported = now
                self.say(f"{stored} sent, {done} acked, {producing} groups still sending")
        self._stop.set()

    def _guard(self, work: Callable[[int], None], n: int) -> None:
        try:
            work(n)
        except Exception as exc:  # one dead thread ends the run: its figures would mislead
            message = f"{threading.current_thread().name}: {type(exc).__name__}: {exc}"
            self.progress.harness_errors.append(message[:500])
            self.say(f"harness error: {message[:500]}")
            self._stop.set()

    # -- producers -------------------------------------------------------------------------

    def _produce(self, g: int) -> None:
        shape = self.shape
        rng = random.Random(shape.seed * 7919 + g)
        group = f"g{g:03d}"
        client = new_client(self.creds, self.creds.endpoints[g % len(self.creds.endpoints)], shape)
        interval = shape.groups / shape.rate if shape.rate else 0.0
        next_at = time.monotonic()
        try:
            for index in range(shape.per_group):
                if interval:
                    self._stop.wait(max(0.0, next_at - time.monotonic()))
                    next_at += interval
                if self._stop.is_set():
                    return
                dedup = f"{self._run}-{group}-{index:05d}"
                if not self._send_until_answered(client, group, index, dedup):
                    return
                if rng.random() < shape.retry_fraction:
                    self._send_once(client, group, index, dedup, retried=True)
        finally:
            with self._lock:
                self._producing -= 1
                if not self._producing:
                    self.progress.sends_done = time.monotonic()

    def _send_until_answered(self, client: Any, group: str, index: int, dedup: str) -> bool:
        retried = False
        while not self._stop.is_set():
            if self._send_once(client, group, index, dedup, retried=retried):
                return True
            retried = True
            self._stop.wait(RETRY_PAUSE_S)
        return False

    def _send_once(self, client: Any, group: str, index: int, dedup: str, *, retried: bool) -> bool:
        """One attempt, recorded; True when it answered a MessageId."""
        body = message_body(group, index, dedup)
        sent = time.monotonic()
        answered: float | None = None
        out: dict[str, Any] = {}
        error = None
        try:
            out = client.send_message(
                QueueUrl=self.url,
                MessageBody=body,
                MessageGroupId=group,
                MessageDeduplicationId=dedup,
            )
            answered = time.monotonic()
        except ClientError as exc:
            answered = time.monotonic()
            error = _code(exc)
            if _status(exc) < 500 and error not in RETRIED_CODES:
                self._record_send(group, index, dedup, sent, answered, out, retried, error)
                raise RuntimeError(f"send refused: {error}: {exc}") from exc
        except (BotoCoreError, OSError) as exc:
            error = type(exc).__name__
        self._record_send(group, index, dedup, sent, answered, out, retried, error)
        return "MessageId" in out

    def _record_send(
        self,
        group: str,
        index: int,
        dedup: str,
        sent: float,
        answered: float | None,
        out: dict[str, Any],
        retried: bool,
        error: str | None,
    ) -> None:
        event = Send(
            group=group,
            index=index,
            dedup_id=dedup,
            sent_at=sent,
            answered_at=answered,
            message_id=out.get("MessageId"),
            sequence_number=out.get("SequenceNumber"),
            retried=retried,
            error=error,
        )
        with self._lock:
            self.log.sends.append(event)
            if event.message_id is not None:
                self._stored.add(dedup)

    # -- consumers -------------------------------------------------------------------------

    def _consume(self, c: int) -> None:
        shape = self.shape
        rng = random.Random(shape.seed * 104729 + c)
        client = new_client(self.creds, self.creds.endpoints[c % len(self.creds.endpoints)], shape)
        while not self._stop.is_set():
            with self._lock:
                self._calls += 1
                call = self._calls
            sent = time.monotonic()
            try:
                out = client.receive_message(
                    QueueUrl=self.url,
                    MaxNumberOfMessages=MAX_BATCH,
                    VisibilityTimeout=shape.visibility,
                    WaitTimeSeconds=shape.wait,
                    AttributeNames=["All"],
                )
            except ClientError as exc:
                if _status(exc) < 500 and _code(exc) not in RETRIED_CODES:
                    raise RuntimeError(f"receive refused: {_code(exc)}: {exc}") from exc
                self._stop.wait(RETRY_PAUSE_S)
                continue
            except (BotoCoreError, OSError):
                # Nothing was seen: what it may have leased comes back after its lease.
                self._stop.wait(RETRY_PAUSE_S)
                continue
            answered = time.monotonic()
            messages = out.get("Messages", [])
            if messages:
                self._handle(client, c, call, sent, answered, messages, rng)

    def _handle(
        self,
        client: Any,
        consumer: int,
        call: int,
        sent: float,
        answered: float,
        messages: Sequence[dict[str, Any]],
        rng: random.Random,
    ) -> None:
        parsed = []
        for m in messages:
            what = parse_body(str(m.get("Body", "")))
            if what is None:
                with self._lock:
                    self.progress.foreign_messages += 1
                continue
            parsed.append((m, what))
        left_groups: set[str] = set()
        to_ack: list[int] = []
        outcomes: list[Outcome] = []
        with self._lock:
            for k, (_m, (group, _index, dedup)) in enumerate(parsed):
                first = dedup not in self._seen
                self._seen.add(dedup)
                if group in left_groups or (first and rng.random() < self.shape.expire_fraction):
                    left_groups.add(group)
                    outcomes.append("left")
                else:
                    outcomes.append("none")
                    to_ack.append(k)
        ack_sent = time.monotonic()
        acked = self._delete(client, [parsed[k][0]["ReceiptHandle"] for k in to_ack])
        ack_answered = time.monotonic() if acked is not None else None
        unanswered: list[Outcome] = ["ack_unanswered"] * len(to_ack)
        for k, result in zip(to_ack, unanswered if acked is None else acked, strict=True):
            outcomes[k] = result
        events = []
        for position, ((m, (group, index, dedup)), outcome) in enumerate(
            zip(parsed, outcomes, strict=True)
        ):
            attrs = m.get("Attributes", {})
            acks = outcome != "left"
            count = attrs.get("ApproximateReceiveCount")
            events.append(
                Delivery(
                    consumer=consumer,
                    call=call,
                    position=position,
                    message_id=str(m.get("MessageId")),
                    group=attrs.get("MessageGroupId"),
                    sequence_number=attrs.get("SequenceNumber"),
                    body_group=group,
                    index=index,
                    dedup_id=dedup,
                    received_at=sent,
                    answered_at=answered,
                    lease_end=sent + self.shape.visibility,
                    outcome=outcome,
                    ack_sent_at=ack_sent if acks else None,
                    ack_answered_at=ack_answered if acks else None,
                    receive_count=int(count) if count is not None else None,
                )
            )
        with self._lock:
            self.log.deliveries.extend(events)
            self._done.update(e.dedup_id for e in events if e.outcome in ACKED)

    def _delete(self, client: Any, handles: list[str]) -> list[Outcome] | None:
        """Each handle's outcome, in order; None when the delete got no answer."""
        if not handles:
            return []
        entries = [{"Id": str(k), "ReceiptHandle": h} for k, h in enumerate(handles)]
        try:
            out = client.delete_message_batch(QueueUrl=self.url, Entries=entries)
        except ClientError as exc:
            if _status(exc) < 500 and _code(exc) not in RETRIED_CODES:
                return ["ack_refused"] * len(handles)  # refused whole: none applied
            return None  # a server error: some may have been applied
        except (BotoCoreError, OSError):
            return None
        ok = {e["Id"] for e in out.get("Successful", [])}
        return ["acked" if str(k) in ok else "ack_refused" for k in range(len(handles))]


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", "ClientError"))


def _status(exc: ClientError) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
