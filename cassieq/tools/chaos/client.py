"""Signed HTTP calls to the servers under test, each one timed and written to the ledger.

aiohttp rather than httpx: the load generator shares two cores with the servers and
Cassandra, and httpx cost about four times the CPU per request (see the bench's HttpTarget).
"""

from __future__ import annotations

import copy
import time
from typing import Any

import aiohttp
import msgspec

from cassieq.api.v2.entries import subscription_binding
from cassieq.auth.receipts import InvalidReceipt, ReceiptCodec
from cassieq.auth.signing import signed_headers
from cassieq.tools.chaos.ledger import ACKED, Ack, Call, Delivery, Ledger, Put
from cassieq.tools.chaos.sub_ledger import SubMessage, SubRead

# What "no answer" looks like: the server refused or reset the connection (killed), or the
# answer did not come in time. The request may or may not have been carried out.
_UNANSWERED = (aiohttp.ClientError, TimeoutError, ConnectionError)
JSON = {"content-type": "application/json"}


class _Message(msgspec.Struct, rename="camel"):
    pop_receipt: str
    message: str
    delivery_count: int


class _Received(msgspec.Struct, rename="camel"):
    pop_receipt: str
    body: str
    delivery_count: int  # v2: this delivery included


class _ReceiveAnswer(msgspec.Struct):
    messages: list[_Received]


class _Failed(msgspec.Struct, rename="camel"):
    pop_receipt: str
    code: int


class _AckAnswer(msgspec.Struct):
    acked: list[str]
    failed: list[_Failed]


class _SubMessage(msgspec.Struct):
    id: str
    body: str


class _SubRead(msgspec.Struct):
    messages: list[_SubMessage]
    next: str


class _Subscription(msgspec.Struct):
    position: str
    lag: int = -1  # the definition (PUT, commit) has none; GET has it


class _Row(msgspec.Struct):
    version: int
    acked: bool


def no_retry_session(timeout: float) -> aiohttp.ClientSession:
    """A session that sends each request exactly once.

    aiohttp re-sends an idempotent request (GET, PUT, DELETE) once, silently, when a kept-alive
    connection fails mid-request: an ack that a server applied just before it was killed
    would be re-sent to the dead server and come back as "connection refused", as if it had
    never been sent. The ledger must know which requests may have reached a server, so that
    retry is turned off (there is no public switch: the attribute is checked to exist).
    """
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=256),
        timeout=aiohttp.ClientTimeout(total=timeout),
    )
    if not hasattr(session, "_retry_connection"):
        raise RuntimeError(
            f"aiohttp {aiohttp.__version__}: cannot turn off its re-sending of idempotent "
            "requests; the chaos ledger would take re-sent acks for refused ones"
        )
    session._retry_connection = False
    return session


class ChaosClient:
    def __init__(
        self,
        urls: dict[str, str],
        *,
        account: str,
        key: str,
        queue: str,
        admin_token: str,
        receipt_secret: str,
        ledger: Ledger,
        timeout: float,
    ) -> None:
        self.urls, self.account, self.queue = urls, account, queue
        self._key, self._admin = key, admin_token
        self._codec = ReceiptCodec(receipt_secret)
        self._ledger = ledger
        self._receipts: dict[int, str] = {}  # delivery id -> its pop receipt
        self._messages = f"/api/v1/accounts/{account}/queues/{queue}/messages"
        self._v2_messages = f"/api/v2/accounts/{account}/queues/{queue}/messages"
        self._subscriptions = f"/api/v2/accounts/{account}/queues/{queue}/subscriptions"
        # Where v2 receive, ack and visibility go, and what their receipts are signed for:
        # the queue's, or a shared subscription's (shared_subscription()).
        self._consume, self._binding = self._v2_messages, queue
        self.shared_name: str | None = None
        self._session = no_retry_session(timeout)

    def shared_subscription(self, name: str, ledger: Ledger) -> ChaosClient:
        """This client pointed at shared subscription ``name``: ``receive`` and
        ``ack_batch`` go to its routes (the bodies and answers of the queue's), its receipts
        are decoded for it, and its calls, deliveries and acks go to ``ledger``, the
        subscription's own. The session is this client's (close this one only)."""
        view = copy.copy(self)
        view._ledger, view._receipts = ledger, {}
        view._consume = f"{self._subscriptions}/{name}"
        view._binding = subscription_binding(self.queue, name)
        view.shared_name = name
        return view

    async def close(self) -> None:
        await self._session.close()

    def other(self, server: str) -> str:
        return next(s for s in self.urls if s != server)

    # ------------------------------------------------------------------ the queue API

    async def create_queue(self, server: str, options: dict[str, Any]) -> tuple[int | None, Any]:
        call, raw = await self._request(
            "create_queue",
            server,
            "POST",
            f"/api/v1/accounts/{self.account}/queues",
            data=msgspec.json.encode(options),
            headers={"content-type": "application/json"},
        )
        return call.status, msgspec.json.decode(raw) if raw else None

    async def get_queue(self, server: str) -> tuple[int | None, Any]:
        call, raw = await self._request(
            "get_queue", server, "GET", f"/api/v1/accounts/{self.account}/queues/{self.queue}"
        )
        return call.status, msgspec.json.decode(raw) if raw else None

    async def put(self, server: str, body: str) -> Put:
        call, _ = await self._request("put", server, "POST", self._messages, data=body.encode())
        put = Put(body, server, call.send, call.recv, call.status)
        self._ledger.puts.append(put)
        return put

    async def get(self, server: str, lease: int) -> tuple[Call, Delivery | None]:
        """The next message (recorded as a delivery), or None: empty (204) or failed."""
        self._queue_only("get")
        call, raw = await self._request(
            "get",
            server,
            "GET",
            f"{self._messages}/next",
            params={"invisibilityTimeSeconds": str(lease)},
        )
        if call.status != 200:
            return call, None
        got = msgspec.json.decode(raw, type=_Message)
        monoton, version, partition = self._receipt_position(got.pop_receipt)
        delivery = Delivery(
            id=self._ledger.new_delivery_id(),
            body=got.message,
            server=server,
            send=call.send,
            recv=call.recv,
            # v1 counts the earlier deliveries (0 on the first, as CassieQ); the ledger
            # counts this one too.
            delivery_count=got.delivery_count + 1,
            monoton=monoton,
            version=version,
            partition=partition,
        )
        self._ledger.deliveries.append(delivery)
        self._receipts[delivery.id] = got.pop_receipt
        return call, delivery

    async def ack(self, server: str, delivery: Delivery) -> Ack:
        self._queue_only("ack")
        call, _ = await self._request(
            "ack",
            server,
            "DELETE",
            self._messages,
            params={"popReceipt": self._receipts[delivery.id]},
        )
        ack = Ack(delivery.id, server, call.send, call.recv, call.status, error=call.error)
        self._ledger.acks.append(ack)
        return ack

    # ------------------------------------------------------------------ v2 batches

    async def send(self, server: str, bodies: list[str]) -> list[Put]:
        """One v2 send of ``bodies``: one Put each, all with the request's outcome (a send
        is stored whole or refused whole)."""
        call, _ = await self._request(
            "send",
            server,
            "POST",
            self._v2_messages,
            data=msgspec.json.encode({"messages": [{"body": b} for b in bodies]}),
            headers=JSON,
        )
        puts = [Put(body, server, call.send, call.recv, call.status) for body in bodies]
        self._ledger.puts.extend(puts)
        return puts

    async def receive(
        self, server: str, lease: int, max_messages: int, wait_s: int
    ) -> tuple[Call, list[Delivery]]:
        """A v2 batch receive: each message a delivery of its own, with its own receipt,
        all leased between the request's send and its answer."""
        request = {
            "maxMessages": max_messages,
            "waitSeconds": wait_s,
            "visibilityTimeoutSeconds": lease,
        }
        call, raw = await self._request(
            "receive",
            server,
            "POST",
            f"{self._consume}/receive",
            data=msgspec.json.encode(request),
            headers=JSON,
        )
        if call.status != 200:
            return call, []
        deliveries = []
        for got in msgspec.json.decode(raw, type=_ReceiveAnswer).messages:
            monoton, version, partition = self._receipt_position(got.pop_receipt)
            delivery = Delivery(
                id=self._ledger.new_delivery_id(),
                body=got.body,
                server=server,
                send=call.send,
                recv=call.recv,
                delivery_count=got.delivery_count,  # v2 counts this delivery already
                monoton=monoton,
                version=version,
                partition=partition,
            )
            self._ledger.deliveries.append(delivery)
            self._receipts[delivery.id] = got.pop_receipt
            deliveries.append(delivery)
        return call, deliveries

    async def ack_batch(self, server: str, deliveries: list[Delivery]) -> list[Ack]:
        """One v2 batch ack; an Ack per delivery, in order, whose status is the entry's
        outcome: ACKED, its failed code (409 stale, 400, 503 undecided), or, when the
        request as a whole got no 200, the request's status (None: no answer)."""
        receipts = [self._receipts[d.id] for d in deliveries]
        call, raw = await self._request(
            "ack",
            server,
            "POST",
            f"{self._consume}/ack",
            data=msgspec.json.encode({"popReceipts": receipts}),
            headers=JSON,
        )
        outcome: dict[str, int | None] = dict.fromkeys(receipts, call.status)
        if call.status == 200:
            answer = msgspec.json.decode(raw, type=_AckAnswer)
            # An entry the answer left out (it must not): unknown, as if no answer came.
            outcome = dict.fromkeys(receipts, None)
            outcome.update(dict.fromkeys(answer.acked, ACKED))
            outcome.update((f.pop_receipt, f.code) for f in answer.failed)
        acks = []
        for d, receipt in zip(deliveries, receipts, strict=True):
            status = outcome[receipt]
            error = call.error if call.status != 200 else None
            if call.status == 200 and status is None:
                error = "left out of the answer"
            if call.status == 200 and status is not None and status >= 500:
                # An entry the server could not decide counts as a 5xx, as a v1 ack's would.
                self._ledger.calls.append(Call("ack entry", server, call.send, call.recv, status))
            ack = Ack(d.id, server, call.send, call.recv, status, error=error)
            self._ledger.acks.append(ack)
            acks.append(ack)
        return acks

    # ------------------------------------------------------------------ subscriptions

    async def create_subscription(
        self, server: str, name: str, mode: str = "ordered"
    ) -> tuple[int | None, Any]:
        """A subscription (ordered or shared) starting at the queue's earliest message."""
        call, raw = await self._request(
            "sub create",
            server,
            "PUT",
            f"{self._subscriptions}/{name}",
            data=msgspec.json.encode({"mode": mode, "start": "earliest"}),
            headers=JSON,
        )
        return call.status, msgspec.json.decode(raw) if raw else None

    async def subscription(self, server: str, name: str) -> tuple[Call, str | None, int | None]:
        """The subscription's stored position and lag (None, None: no 200)."""
        call, raw = await self._request("sub get", server, "GET", f"{self._subscriptions}/{name}")
        if call.status != 200:
            return call, None, None
        got = msgspec.json.decode(raw, type=_Subscription)
        return call, got.position, got.lag

    async def read_subscription(self, server: str, name: str, limit: int) -> SubRead:
        """One ordered read (not recorded in a subscription's book: the reader does it)."""
        call, raw = await self._request(
            "sub read",
            server,
            "GET",
            f"{self._subscriptions}/{name}/messages",
            params={"limit": str(limit)},
        )
        read = SubRead(server, call.send, call.recv, call.status, [], None)
        if call.status == 200:
            got = msgspec.json.decode(raw, type=_SubRead)
            read.messages = [SubMessage(m.id, m.body) for m in got.messages]
            read.next = got.next
        return read

    async def commit_subscription(
        self, server: str, name: str, position: str, expected: str
    ) -> Call:
        call, _ = await self._request(
            "sub commit",
            server,
            "POST",
            f"{self._subscriptions}/{name}/position",
            data=msgspec.json.encode({"position": position, "expected": expected}),
            headers=JSON,
        )
        return call

    def _receipt_position(self, receipt: str) -> tuple[int, int, int]:
        """Where the receipt points (monoton, row version, partition): the secret is ours,
        so the ledger can tell deliveries of one row apart."""
        try:
            decoded = self._codec.decode(self.account, self._binding, receipt)
        except InvalidReceipt:
            return -1, -1, 0
        return decoded.monoton, decoded.version, decoded.partition

    # ------------------------------------------------------------------ operator routes

    async def read_row(self, delivery: Delivery, ack: Ack) -> None:
        """Read the delivered message's row (operator debug route) into ``ack``: whether this
        delivery's receipt acked it (True: acked, one version on), or it is still held by
        that receipt (False: not acked, at the delivered version), or neither (None: gone,
        moved on, or unreadable)."""
        if delivery.monoton < 0:
            ack.row = "receipt not decoded"
            return
        if self.shared_name is not None:
            # Whether a subscription acked it is in its delivery row, which no operator route
            # shows (the message row says nothing of it): the outcome stays unknown.
            ack.row = "a subscription's delivery row: not readable"
            return
        if delivery.partition:
            # The debug route (v1's, frozen) reads partition 0 only; the row stays unread
            # (it only sorts the 409s on valid receipts, which are violations either way).
            ack.row = f"partition {delivery.partition}: not read"
            return
        path = (
            f"/api/v1/debug/accounts/{self.account}/queues/{self.queue}/messages/{delivery.monoton}"
        )
        for server in self.urls:
            call, raw = await self._request("debug", server, "GET", path, signed=False)
            if call.status == 404:
                ack.row = "gone"
                return
            if call.status != 200:
                continue
            row = msgspec.json.decode(raw, type=_Row)
            ack.row = f"{'acked' if row.acked else 'not acked'}, version {row.version}"
            if row.acked and row.version == delivery.version + 1:
                ack.row_acked = True
            elif not row.acked and row.version == delivery.version:
                ack.row_acked = False
            return
        ack.row = "unreadable"

    async def pointers(self) -> dict[str, Any] | None:
        path = f"/api/v1/debug/accounts/{self.account}/queues/{self.queue}/pointers"
        for server in self.urls:
            call, raw = await self._request("debug", server, "GET", path, signed=False)
            if call.status == 200:
                result: dict[str, Any] = msgspec.json.decode(raw)
                return result
        return None

    # ------------------------------------------------------------------ plumbing

    def _queue_only(self, what: str) -> None:
        if self.shared_name is not None:
            # v1 has no subscription routes: a subscription's consumers receive through v2.
            raise RuntimeError(f"v1 {what} on subscription {self.shared_name!r}")

    async def _request(
        self,
        route: str,
        server: str,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        data: bytes | None = None,
        signed: bool = True,
        headers: dict[str, str] | None = None,
    ) -> tuple[Call, bytes]:
        headers = {
            **(headers or {}),
            **(self._signed(method, path) if signed else self._operator()),
        }
        send = time.monotonic()
        try:
            async with self._session.request(
                method, self.urls[server] + path, params=params, data=data, headers=headers
            ) as response:
                raw = await response.read()
                answer = raw[:300].decode(errors="replace") if response.status >= 500 else None
                call = Call(route, server, send, time.monotonic(), response.status, answer=answer)
        except _UNANSWERED as exc:
            call = Call(route, server, send, time.monotonic(), None, type(exc).__name__)
            raw = b""
        self._ledger.calls.append(call)
        return call, raw

    def _signed(self, method: str, path: str) -> dict[str, str]:
        if path.startswith("/api/v2/"):
            # v2 refuses v1's Signed (#40 finding 10). The key itself is enough here (a local
            # cluster): a CQ2 signature would add the replay cache's room to what is tested.
            return {"Authorization": f"Key {self._key}"}
        return signed_headers(self.account, self._key, method, path)

    def _operator(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._admin}"}
