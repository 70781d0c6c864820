"""The generated client (installed into the test venv from api_spec/client) against a live
server on Cassandra: Signed auth, then a signed-query-string grant limited to rpa."""

from __future__ import annotations

import httpx
from cassieq_client import AuthenticatedClient
from cassieq_client.api.messages import ack_message, get_next_message, put_message
from cassieq_client.api.queues import create_queue, get_statistics
from cassieq_client.api.queues_v2 import get_statistics_v2
from cassieq_client.models import GetMessageBody, QueueCreateOptions
from cassieq_client_auth import GrantAuth, SignedAuth

from tests.api.conftest import AccountCtx, Server
from tests.e2e.generated_client import client_with

N = 100


def _round_trip(client: AuthenticatedClient, account: str, queue: str, prefix: str) -> list[str]:
    for i in range(N):
        response = put_message.sync_detailed(account, queue, client=client, body=f"{prefix}-{i}")
        assert response.status_code == 201, response.content
    seen = []
    while True:
        got = get_next_message.sync(account, queue, client=client, invisibility_time_seconds=30)
        if got is None:
            break
        assert isinstance(got, GetMessageBody), got
        seen.append(got.message)
        ack = ack_message.sync_detailed(account, queue, client=client, pop_receipt=got.pop_receipt)
        assert ack.status_code == 204
    return seen


def test_generated_client_with_signed_auth_and_a_grant(server: Server, account: AccountCtx) -> None:
    signed = client_with(server.url, SignedAuth(account.name, account.keys["primary"]))
    created = create_queue.sync_detailed(
        account.name, client=signed, body=QueueCreateOptions(queue_name="e2e")
    )
    assert created.status_code == 201
    assert sorted(_round_trip(signed, account.name, "e2e", "signed")) == sorted(
        f"signed-{i}" for i in range(N)
    )

    with server.admin() as admin:
        issued = admin.post(
            "/api/v1/permissions",
            json={
                "accountName": account.name,
                "keyName": "secondary",
                "levels": ["r", "p", "a"],
                "queueName": "e2e",
            },
        )
    assert issued.status_code == 201
    granted = client_with(server.url, GrantAuth(issued.json()["queryParam"]))
    assert sorted(_round_trip(granted, account.name, "e2e", "grant")) == sorted(
        f"grant-{i}" for i in range(N)
    )
    # The grant carries no g level: statistics need the account's own credentials.
    denied = get_statistics.sync_detailed(account.name, "e2e", client=granted)
    assert denied.status_code == 403
    assert get_statistics.sync(account.name, "e2e", client=signed).to_dict() == {"size": 0}  # type: ignore[union-attr]
    stats = get_statistics_v2.sync(account.name, "e2e", client=signed)
    assert stats is not None and stats.size == 0 and stats.published == 2 * N  # type: ignore[union-attr]
    assert httpx.get(f"{server.url}/health").status_code == 200
