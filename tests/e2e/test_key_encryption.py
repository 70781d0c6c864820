"""Keys at rest (#40 finding 11), on a keyspace of its own (a reseal touches every account of
a keyspace): a server whose key-encryption key lives beside the keys says so at start;
`cassieq secrets reseal-keys` moves every key under CASSIEQ_KEY_ENCRYPTION_KEY; a server
with it then authenticates the same keys and says nothing."""

from __future__ import annotations

import base64
import secrets
import uuid
from pathlib import Path

import httpx

from cassieq.auth.keyring import KeyCipher
from cassieq.engine import QueueEngine
from cassieq.store.cassandra import CassandraStore, drop_keyspace
from tests.api.conftest import start_server, stop_server
from tests.cli_process import run_cassieq
from tests.conftest import CassandraNode

WARNING = "key_encryption_key_in_keyspace"


async def test_the_keys_move_out_of_the_keyspaces_reach(
    cassandra_node: CassandraNode, tmp_path: Path
) -> None:
    s = cassandra_node.settings
    hosts, port = ",".join(s.cassandra_hosts), str(s.cassandra_port)
    keyspace = f"kek_{uuid.uuid4().hex[:10]}"
    kek = secrets.token_bytes(32)
    kek_setting = base64.urlsafe_b64encode(kek).decode()
    applied = run_cassieq(
        "schema", "apply", "--keyspace", keyspace,
        CASSIEQ_CASSANDRA_HOSTS=hosts, CASSIEQ_CASSANDRA_PORT=port,
    )  # fmt: skip
    assert applied.returncode == 0, applied.stderr
    try:
        store = CassandraStore(cassandra_node.session, keyspace)
        created = await QueueEngine(store).accounts.create("acme")  # the keyspace's own key

        beside = start_server(cassandra_node, tmp_path / "beside.log", CASSIEQ_KEYSPACE=keyspace)
        stop_server(beside)
        assert WARNING in beside.log.read_text()

        resealed = run_cassieq(
            "secrets", "reseal-keys",
            CASSIEQ_KEYSPACE=keyspace, CASSIEQ_CASSANDRA_HOSTS=hosts,
            CASSIEQ_CASSANDRA_PORT=port, CASSIEQ_KEY_ENCRYPTION_KEY=kek_setting,
        )  # fmt: skip
        assert resealed.returncode == 0, resealed.stderr
        assert f"accounts of keyspace {keyspace} read" in resealed.stdout
        assert kek_setting not in resealed.stdout + resealed.stderr
        stored = await store.read_account("acme")
        assert stored is not None
        opened = {n: KeyCipher(kek).open("acme", n, v) for n, v in stored.keys.items()}
        assert opened == created.keys

        outside = start_server(
            cassandra_node,
            tmp_path / "outside.log",
            CASSIEQ_KEYSPACE=keyspace,
            CASSIEQ_KEY_ENCRYPTION_KEY=kek_setting,
        )
        try:
            key = created.keys["primary"]
            async with httpx.AsyncClient(base_url=outside.url) as client:
                listed = await client.get(
                    "/api/v1/accounts/acme/queues", headers={"Authorization": f"Key {key}"}
                )
            assert listed.status_code == 200, listed.text
        finally:
            stop_server(outside)
        assert WARNING not in outside.log.read_text()
    finally:
        drop_keyspace(cassandra_node.session, keyspace)


def test_reseal_needs_a_key_to_reseal_under() -> None:
    refused = run_cassieq("secrets", "reseal-keys")
    assert refused.returncode == 1
    assert "CASSIEQ_KEY_ENCRYPTION_KEY is not set" in refused.stderr
