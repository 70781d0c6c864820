"""Pop receipts are signed with a secret independent of the operator token: the keyspace's
own random one (shared by every server of the keyspace, rotated with a grace period), or
CASSIEQ_RECEIPT_SECRET. In-process apps (Litestar's TestClient) on both stores."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from cassieq.api.app import create_app
from cassieq.auth.receipts import ReceiptCodec, UnverifiedReceipt
from cassieq.config import Settings
from cassieq.engine import CallCounter, FakeClock, QueueEngine
from cassieq.engine.tenancy.keyspace_secrets import RECEIPT_SECRET
from cassieq.store.base import Store
from cassieq.store.memory import MemoryStore

TOKEN = "receipt-test-operator-token-" + "x" * 16

Client = TestClient[Litestar]


@pytest.fixture
def shared_store(store: Store) -> Store:
    """One keyspace for the servers of a test: a MemoryStore, or the Cassandra test keyspace."""
    return store


@contextmanager
def server(
    store: Store,
    settings: Settings | None = None,
    clock: FakeClock | None = None,
    calls: CallCounter | None = None,
) -> Iterator[Client]:
    app = create_app(
        settings or Settings(admin_token=TOKEN),
        store,
        clock=clock,
        background=False,
        observers=[] if calls is None else [calls],
    )
    with TestClient(app=app) as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        yield client


def account_with_message(client: Client, name: str | None = None) -> tuple[str, dict[str, str]]:
    """A new account with queue 'q' holding one message; (messages path, key header)."""
    name = name or f"r-{uuid.uuid4().hex[:12]}"
    created = client.post("/api/v1/accounts", json=name)
    assert created.status_code == 201, created.text
    key = {"Authorization": f"Key {created.json()['keys']['primary']}"}
    base = f"/api/v1/accounts/{name}/queues"
    assert client.post(base, json={"queueName": "q"}, headers=key).status_code == 201
    assert client.post(f"{base}/q/messages", json="m", headers=key).status_code == 201
    return f"{base}/q/messages", key


def take(client: Client, path: str, key: dict[str, str]) -> str:
    got = client.get(f"{path}/next", headers=key)
    assert got.status_code == 200, got.text
    receipt: str = got.json()["popReceipt"]
    return receipt


def ack(client: Client, path: str, key: dict[str, str], receipt: str) -> int:
    return client.delete(path, params={"popReceipt": receipt}, headers=key).status_code


def derived_keys(token: str) -> list[str]:
    """Every key the old code derived from the operator token (and the token itself)."""
    old = hmac.new(token.encode(), b"cassieq pop receipts", hashlib.sha256).hexdigest()
    return [old, token]


def test_a_receipt_carries_nothing_that_verifies_against_the_operator_token(
    shared_store: Store,
) -> None:
    with server(shared_store) as a:
        path, key = account_with_message(a)
        receipt = take(a, path, key)
    account = path.split("/")[4]
    for candidate in derived_keys(TOKEN):
        with pytest.raises(UnverifiedReceipt):
            ReceiptCodec(candidate).decode(account, "q", receipt)
    # What does verify it: the keyspace's random secret, which nothing derives.
    secret = asyncio.run(_read_receipt_secret(shared_store))
    assert ReceiptCodec(secret).decode(account, "q", receipt).monoton >= 0


async def _read_receipt_secret(store: Store) -> str:
    stored = await store.read_secret(RECEIPT_SECRET)
    assert stored is not None
    return stored.value


def test_the_signing_key_does_not_depend_on_the_operator_token() -> None:
    # The same operator token, the same account and queue, two keyspaces: a receipt of one
    # does not verify on the other.
    name = f"r-{uuid.uuid4().hex[:12]}"
    with server(MemoryStore()) as a, server(MemoryStore()) as b:
        path, key = account_with_message(a, name)
        b_path, b_key = account_with_message(b, name)
        receipt, b_receipt = take(a, path, key), take(b, b_path, b_key)
        assert receipt.rsplit("~", 1)[1] != b_receipt.rsplit("~", 1)[1]
        assert ack(b, b_path, b_key, receipt) == 400
        assert ack(a, path, key, b_receipt) == 400
        assert ack(b, b_path, b_key, b_receipt) == 204


def test_a_receipt_still_acks_after_the_operator_token_changed(shared_store: Store) -> None:
    with server(shared_store) as a:
        path, key = account_with_message(a)
        receipt = take(a, path, key)
    other_token = "a-completely-different-operator-token-0123456789"
    with server(shared_store, Settings(admin_token=other_token)) as b:
        assert ack(b, path, key, receipt) == 204


def test_two_servers_without_a_receipt_secret_accept_each_others_receipts(
    shared_store: Store,
) -> None:
    with server(shared_store) as a, server(shared_store) as b:
        path, key = account_with_message(a)
        assert a.post(path, json="second", headers=key).status_code == 201
        first = take(a, path, key)
        second = take(b, path, key)
        assert ack(b, path, key, first) == 204  # taken through A, acked through B
        assert ack(a, path, key, second) == 204  # and the other way round
        assert b.get(f"{path}/next", headers=key).status_code == 204  # both acked


def test_a_forged_receipt_is_refused(shared_store: Store) -> None:
    with server(shared_store) as a:
        path, key = account_with_message(a)
        receipt = take(a, path, key)
        secret = asyncio.run(_read_receipt_secret(shared_store))
        popped = ReceiptCodec(secret).decode(path.split("/")[4], "q", receipt)
        forged = ReceiptCodec(derived_keys(TOKEN)[0]).encode(path.split("/")[4], "q", popped)
        assert ack(a, path, key, forged) == 400
        assert ack(a, path, key, receipt) == 204


def test_a_rotation_keeps_the_previous_secret_for_its_grace_period() -> None:
    store, clock = MemoryStore(), FakeClock()
    with ExitStack() as stack:
        a = stack.enter_context(server(store, clock=clock))
        b = stack.enter_context(server(store, clock=clock))
        path, key = account_with_message(a)
        for _ in range(2):
            assert a.post(path, json="more", headers=key).status_code == 201
        before = take(a, path, key)
        rotator = QueueEngine(store, clock)
        asyncio.run(rotator.secrets.rotate(RECEIPT_SECRET, grace_ms=300_000))
        clock.advance(61)  # every server has re-read the secrets by now
        after = take(a, path, key)
        assert after.rsplit("~", 1)[1] != before.rsplit("~", 1)[1]  # signed with the new one
        assert ack(b, path, key, after) == 204  # the new one verifies on the other server
        clock.advance(240)  # 301 s after the rotation: the previous one is refused
        assert ack(b, path, key, before) == 400
        still = take(b, path, key)
        assert ack(a, path, key, still) == 204


def test_a_receipt_signed_before_a_rotation_acks_within_the_grace_period() -> None:
    store, clock = MemoryStore(), FakeClock()
    with server(store, clock=clock) as a, server(store, clock=clock) as b:
        path, key = account_with_message(a)
        before = take(a, path, key)
        asyncio.run(QueueEngine(store, clock).secrets.rotate(RECEIPT_SECRET, grace_ms=300_000))
        clock.advance(61)
        assert ack(b, path, key, before) == 204


def test_an_explicit_receipt_secret_signs_and_the_previous_one_verifies_for_a_while() -> None:
    old, new = "old-receipt-secret-" + "o" * 20, "new-receipt-secret-" + "n" * 20
    store, clock = MemoryStore(), FakeClock()
    with server(store, Settings(admin_token=TOKEN, receipt_secret=old), clock) as before:
        path, key = account_with_message(before)
        assert before.post(path, json="more", headers=key).status_code == 201
        first = take(before, path, key)
        second = take(before, path, key)
    # The chaos tool decodes receipts with the secret it gave its servers.
    assert ReceiptCodec(old).decode(path.split("/")[4], "q", first).monoton >= 0
    rotated = Settings(
        admin_token=TOKEN,
        receipt_secret=new,
        receipt_secret_previous=old,
        receipt_secret_grace_seconds=60,
    )
    with server(store, rotated, clock) as after:
        assert ack(after, path, key, first) == 204
        clock.advance(61)
        assert ack(after, path, key, second) == 400  # past the grace period
    # Not the keyspace's secret: nothing was created there.
    assert asyncio.run(store.read_secret(RECEIPT_SECRET)) is None


def test_a_receipt_of_a_newer_secret_makes_a_server_read_the_secrets_again() -> None:
    """Another server may sign with a secret rotated a moment ago: one that does not verify
    makes this server re-read the secrets (at most once a second, so forged receipts do
    not each cost a read)."""
    store, clock, calls = MemoryStore(), FakeClock(), CallCounter()
    with server(store, clock=clock, calls=calls) as a:
        path, key = account_with_message(a)
        receipt = take(a, path, key)
        account = path.split("/")[4]
        old = asyncio.run(_read_receipt_secret(store))
        popped = ReceiptCodec(old).decode(account, "q", receipt)
        rotated = asyncio.run(
            QueueEngine(store, clock).secrets.rotate(RECEIPT_SECRET, grace_ms=300_000)
        )
        newer = ReceiptCodec(rotated.value).encode(account, "q", popped)
        clock.advance(2)  # well within the minute between regular re-reads
        calls.reset()
        assert ack(a, path, key, newer) == 204
        assert calls.calls["read_secret"] == 1
        forged = ReceiptCodec("f" * 40).encode(account, "q", popped)
        for _ in range(5):
            assert ack(a, path, key, forged) == 400
        assert calls.calls["read_secret"] == 1  # within the second: no more reads
        clock.advance(1)
        assert ack(a, path, key, forged) == 400
        assert calls.calls["read_secret"] == 2
