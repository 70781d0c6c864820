"""Account keys at rest: sealed in the store, plaintext to the engine's callers, old
plaintext rows sealed on read; and unknown account names remembered like known ones."""

from __future__ import annotations

import asyncio
import base64
import secrets
import uuid
from typing import Any

import pytest

from cassieq.auth.keyring import (
    KeyCipher,
    UndecryptableKey,
    is_sealed,
    parse_key_encryption_key,
    previous_key_encryption_keys,
)
from cassieq.engine import CallCounter, FakeClock, QueueEngine
from cassieq.engine.context import Tuning
from cassieq.engine.errors import AccountNotFound
from cassieq.engine.tenancy.keyspace_secrets import KEY_ENCRYPTION_SECRET, secret_bytes
from cassieq.model import Account
from cassieq.store.base import Store
from cassieq.store.memory import MemoryStore
from tests.conftest import CassandraNode


def _name() -> str:
    return f"k-{uuid.uuid4().hex[:12]}"


async def _raw(store: Store, name: str) -> dict[str, str]:
    """The keys as the store holds them (no engine in between)."""
    stored = await store.read_account(name)
    assert stored is not None
    return dict(stored.keys)


# --------------------------------------------------------------------------- sealed


async def test_keys_are_stored_sealed_and_given_back_in_plaintext(
    engine: QueueEngine, store: Store
) -> None:
    name = _name()
    created = await engine.accounts.create(name)
    raw = await _raw(store, name)
    assert set(raw) == {"primary", "secondary"}
    for key_name, key in created.keys.items():
        assert raw[key_name].startswith("v1:") and key not in raw[key_name]
    assert (await engine.accounts.get(name)).keys == created.keys
    assert (await engine.accounts.get_for_auth(name)).keys == created.keys
    listed = {a.name: a for a in await engine.accounts.list()}
    assert listed[name].keys == created.keys

    added = await engine.accounts.add_key(name, "third")
    raw = await _raw(store, name)
    assert is_sealed(raw["third"]) and added not in raw["third"]
    assert (await engine.accounts.get(name)).keys["third"] == added


async def test_a_select_of_the_accounts_table_shows_no_usable_key(
    cassandra_node: CassandraNode, cassandra_store: Any
) -> None:
    engine = QueueEngine(cassandra_store)
    name = _name()
    created = await engine.accounts.create(name)
    ks = cassandra_node.settings.keyspace
    row = cassandra_node.session.execute(
        f"SELECT keys FROM {ks}.accounts WHERE account_name = %s", (name,)
    ).one()
    assert row is not None and set(row.keys) == {"primary", "secondary"}
    for key_name, stored in row.keys.items():
        assert stored.startswith("v1:"), stored
        assert created.keys[key_name][:16] not in stored  # not even a piece of it


async def test_a_plaintext_row_is_sealed_on_read(
    calls: CallCounter, engine: QueueEngine, store: Store, clock: FakeClock
) -> None:
    name, key = _name(), secrets.token_urlsafe(64)
    # As an older version stored it.
    assert await store.insert_account(
        Account(name=name, keys={"primary": key}, created_at=clock.now())
    )
    assert (await _raw(store, name))["primary"] == key
    assert (await engine.accounts.get_for_auth(name)).keys == {"primary": key}
    sealed = (await _raw(store, name))["primary"]
    assert is_sealed(sealed) and key not in sealed
    sealings = calls.calls["replace_key"]
    # On Cassandra the session's API server shares the keyspace, and its background pass
    # may seal the row first (with the same keyspace key): then this read finds it sealed.
    assert sealings == 1 if isinstance(store, MemoryStore) else sealings in (0, 1)
    # Read again: opened, not re-sealed.
    assert (await engine.accounts.get(name)).keys == {"primary": key}
    assert calls.calls["replace_key"] == sealings


async def test_a_plaintext_row_written_with_cql_is_sealed_on_read(
    cassandra_node: CassandraNode, cassandra_store: Any
) -> None:
    name, key = _name(), secrets.token_urlsafe(64)
    ks = cassandra_node.settings.keyspace
    cassandra_node.session.execute(
        f"INSERT INTO {ks}.accounts (account_name, keys, created_at) "
        "VALUES (%s, %s, toTimestamp(now()))",
        (name, {"primary": key}),
    )
    engine = QueueEngine(cassandra_store)
    assert (await engine.accounts.get(name)).keys == {"primary": key}
    row = cassandra_node.session.execute(
        f"SELECT keys FROM {ks}.accounts WHERE account_name = %s", (name,)
    ).one()
    assert row.keys["primary"].startswith("v1:") and key not in row.keys["primary"]


async def test_sealing_a_plaintext_key_never_brings_back_a_deleted_one(
    store: Store, clock: FakeClock
) -> None:
    name, key = _name(), secrets.token_urlsafe(64)
    await store.insert_account(Account(name=name, keys={"a": key}, created_at=clock.now()))
    await store.remove_key(name, "a")
    assert await store.replace_key(name, "a", key, "v1:x:y") is False
    assert "a" not in await _raw(store, name)
    assert await store.replace_key("no-such-account-" + name, "a", key, "v1:x:y") is False


async def test_a_ciphertext_copied_to_another_account_does_not_decrypt(
    engine: QueueEngine, store: Store
) -> None:
    victim, thief = _name(), _name()
    stolen = await engine.accounts.create(victim)
    await engine.accounts.create(thief)
    sealed = (await _raw(store, victim))["primary"]
    thief_sealed = (await _raw(store, thief))["primary"]
    assert await store.replace_key(thief, "primary", thief_sealed, sealed)
    opened = await engine.accounts.get(thief)
    assert "primary" not in opened.keys  # left out, not the victim's key
    assert stolen.keys["primary"] not in opened.keys.values()
    # The same ciphertext under another key name of the same account does not open either.
    secondary = (await _raw(store, victim))["secondary"]
    assert await store.replace_key(victim, "secondary", secondary, sealed)
    assert set((await engine.accounts.get(victim)).keys) == {"primary"}
    # A key that does not decrypt can still be deleted.
    await engine.accounts.delete_key(thief, "primary")
    assert "primary" not in await _raw(store, thief)


async def test_an_explicit_key_encryption_key_is_used_and_no_other(
    calls: CallCounter, store: Store, clock: FakeClock
) -> None:
    kek = secrets.token_bytes(32)
    engine = QueueEngine(store, clock, key_encryption_key=kek, observers=[calls])
    name = _name()
    created = await engine.accounts.create(name)
    sealed = (await _raw(store, name))["primary"]
    assert KeyCipher(kek).open(name, "primary", sealed) == created.keys["primary"]
    assert calls.calls["read_secret"] == 0 and calls.calls["insert_secret"] == 0
    # A server with another KEK cannot open it: the key authenticates nothing there.
    other = QueueEngine(store, clock, key_encryption_key=secrets.token_bytes(32))
    assert (await other.accounts.get(name)).keys == {}


async def test_without_one_the_keyspace_key_is_made_once_and_shared(
    store: Store, clock: FakeClock
) -> None:
    a = QueueEngine(store, clock)
    b = QueueEngine(store, clock, instance_id="b")
    name = _name()
    created = await a.accounts.create(name)
    assert (await b.accounts.get(name)).keys == created.keys
    stored = await store.read_secret(KEY_ENCRYPTION_SECRET)
    assert stored is not None and len(secret_bytes(stored.value)) == 32
    sealed = (await _raw(store, name))["primary"]
    assert (
        KeyCipher(secret_bytes(stored.value)).open(name, "primary", sealed)
        == (created.keys["primary"])
    )


def test_the_key_encryption_key_setting_is_32_bytes_base64url() -> None:
    good = base64.urlsafe_b64encode(b"k" * 32).decode()
    assert parse_key_encryption_key(good) == b"k" * 32
    assert parse_key_encryption_key(good.rstrip("=")) == b"k" * 32
    for bad in ("", "short", base64.urlsafe_b64encode(b"k" * 16).decode(), "not base64 !!"):
        with pytest.raises(ValueError, match="CASSIEQ_KEY_ENCRYPTION_KEY must be 32"):
            parse_key_encryption_key(bad)


# --------------------------------------------------------------------------- unknown names


async def test_an_unknown_name_is_remembered_as_long_as_a_known_one(
    calls: CallCounter, engine: QueueEngine, store: Store, clock: FakeClock
) -> None:
    known, unknown = _name(), _name()
    await engine.accounts.create(known)
    calls.reset()
    for name in (known, unknown):
        for _ in range(3):
            if name == known:
                await engine.accounts.get_for_auth(name)
            else:
                with pytest.raises(AccountNotFound):
                    await engine.accounts.get_for_auth(name)
    # One read each: the second lookup of either costs no read.
    assert calls.calls["read_account"] == 2
    clock.advance(Tuning().account_cache_ms / 1000)
    with pytest.raises(AccountNotFound):
        await engine.accounts.get_for_auth(unknown)
    await engine.accounts.get_for_auth(known)
    assert calls.calls["read_account"] == 4


async def test_creating_the_account_here_forgets_that_it_was_missing(
    engine: QueueEngine, store: Store
) -> None:
    name = _name()
    with pytest.raises(AccountNotFound):
        await engine.accounts.get_for_auth(name)
    created = await engine.accounts.create(name)
    # No clock move: known at once.
    assert (await engine.accounts.get_for_auth(name)).keys == created.keys


async def test_a_create_during_a_lookup_is_not_hidden_by_its_miss(
    store: Store, clock: FakeClock
) -> None:
    """The lookup read 'missing' before the create stored the row, and answers after it:
    its miss must not be remembered over the account just created."""
    gate = asyncio.Event()
    read_done = asyncio.Event()

    class SlowFirstRead:
        def __getattr__(self, name: str) -> Any:
            return getattr(store, name)

        async def read_account(self, name: str) -> Account | None:
            found: Account | None = await store.read_account(name)
            if not read_done.is_set():
                read_done.set()
                await gate.wait()  # the first read answers only when told
            return found

    engine = QueueEngine(SlowFirstRead(), clock)
    name = _name()
    lookup = asyncio.ensure_future(engine.accounts.get_for_auth(name))
    await read_done.wait()
    await engine.accounts.create(name)
    gate.set()
    with pytest.raises(AccountNotFound):
        await lookup
    assert (await engine.accounts.get_for_auth(name)).name == name


async def test_names_sprayed_at_random_are_bounded_and_do_not_evict_accounts(
    calls: CallCounter, store: Store, clock: FakeClock
) -> None:
    engine = QueueEngine(store, clock, tuning=Tuning(account_cache_entries=8), observers=[calls])
    known = _name()
    await engine.accounts.create(known)
    await engine.accounts.get_for_auth(known)
    sprayed = [_name() for _ in range(20)]
    for name in sprayed:
        with pytest.raises(AccountNotFound):
            await engine.accounts.get_for_auth(name)
    assert len(engine.accounts._unknown) == 8  # bounded
    calls.reset()
    await engine.accounts.get_for_auth(known)  # still remembered: no read
    with pytest.raises(AccountNotFound):
        await engine.accounts.get_for_auth(sprayed[-1])  # recent miss: no read
    assert calls.calls["read_account"] == 0
    with pytest.raises(AccountNotFound):
        await engine.accounts.get_for_auth(sprayed[0])  # pushed out: read again
    assert calls.calls["read_account"] == 1


async def test_a_name_no_account_can_have_is_not_read_nor_remembered(
    calls: CallCounter, engine: QueueEngine, store: Store
) -> None:
    calls.reset()
    for bad in ("bad name", "a:b", "x" * 300, ""):
        with pytest.raises(AccountNotFound):
            await engine.accounts.get_for_auth(bad)
    assert calls.calls["read_account"] == 0
    assert len(engine.accounts._unknown) == 0


async def test_keys_under_the_keyspace_key_move_to_an_operator_key_as_they_are_read(
    store: Store, clock: FakeClock
) -> None:
    """#40 finding 11: from the default (the key-encryption key beside the keys) to the safe
    setup is setting CASSIEQ_KEY_ENCRYPTION_KEY; nothing is lost on the way."""
    before = QueueEngine(store, clock)  # no operator key: the keyspace's own
    name = _name()
    created = await before.accounts.create(name)
    kek = secrets.token_bytes(32)
    after = QueueEngine(store, clock, key_encryption_key=kek, instance_id="after")
    assert (await after.accounts.get(name)).keys == created.keys
    stored = await _raw(store, name)
    assert {n: KeyCipher(kek).open(name, n, v) for n, v in stored.items()} == created.keys
    # From now on the keyspace's key opens nothing: reading the keyspace is not enough.
    own = await store.read_secret(KEY_ENCRYPTION_SECRET)
    assert own is not None
    with pytest.raises(UndecryptableKey):
        KeyCipher(secret_bytes(own.value)).open(name, "primary", stored["primary"])


async def test_a_rotated_key_encryption_key_opens_with_the_previous_one_and_reseals(
    store: Store, clock: FakeClock
) -> None:
    old, new = secrets.token_bytes(32), secrets.token_bytes(32)
    name = _name()
    created = await QueueEngine(store, clock, key_encryption_key=old).accounts.create(name)
    without_previous = QueueEngine(store, clock, key_encryption_key=new, instance_id="a")
    assert (await without_previous.accounts.get(name)).keys == {}  # cannot open: logged
    rotated = QueueEngine(
        store, clock, key_encryption_key=new, previous_key_encryption_keys=[old], instance_id="b"
    )
    # (Not reseal_account_keys here: on the shared keyspace it would re-seal every other
    # test's accounts under this test's key; tests/e2e/test_key_encryption.py runs it.)
    assert (await rotated.accounts.get(name)).keys == created.keys
    assert (await without_previous.accounts.get(name)).keys == created.keys  # re-sealed
    with pytest.raises(UndecryptableKey):
        KeyCipher(old).open(name, "primary", (await _raw(store, name))["primary"])


def test_previous_key_encryption_keys_are_a_comma_separated_list() -> None:
    one, two = (base64.urlsafe_b64encode(k * 32).decode() for k in (b"a", b"b"))
    assert previous_key_encryption_keys(f"{one}, {two}") == [b"a" * 32, b"b" * 32]
    assert previous_key_encryption_keys(None) == previous_key_encryption_keys(" ") == []
    with pytest.raises(ValueError, match=r"CASSIEQ_KEY_ENCRYPTION_KEY_PREVIOUS: .* 32"):
        previous_key_encryption_keys(f"{one},short")
