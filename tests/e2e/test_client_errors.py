"""The generated client as issue 17 found it wanting: put takes text (sync and async; a str,
as the document declares the body since #39), and ``sync()`` / ``asyncio()`` raise typed
exceptions carrying the error body instead of returning it. Against a live server on each
store."""

from __future__ import annotations

import asyncio

import pytest
from cassieq_client import AuthenticatedClient
from cassieq_client.api.messages import ack_message, get_next_message, put_message
from cassieq_client.api.queues import create_queue, get_queue
from cassieq_client.api.queues_v2 import get_queue_v2
from cassieq_client.errors import (
    ApiError,
    Conflict,
    NotFound,
    Unauthorized,
    UnprocessableEntity,
    error_for,
)
from cassieq_client.models import (
    ErrorsBody,
    GetMessageBody,
    QueueCreateOptions,
    ResourceErrorBody,
    V2ErrorBody,
)
from cassieq_client_auth import KeyAuth, SignedAuth

from tests.e2e.cli_v2 import Live, live
from tests.e2e.generated_client import client_with

__all__ = ["live"]


def _client(live: Live, key: str | None = None) -> AuthenticatedClient:
    auth = SignedAuth(live.account, key or live.keys["primary"])
    return client_with(live.url, auth)


def _take(live: Live, client: AuthenticatedClient) -> GetMessageBody:
    got = get_next_message.sync(live.account, "jobs", client=client, invisibility_time_seconds=60)
    assert isinstance(got, GetMessageBody), got
    return got


def test_put_takes_text_sync_and_async(live: Live) -> None:
    client = _client(live)
    put_message.sync(live.account, "jobs", client=client, body="héllo")

    async def puts() -> None:
        await put_message.asyncio(live.account, "jobs", client=client, body="async")
        await put_message.asyncio(live.account, "jobs", client=client, body='{"a": "ü"}')

    asyncio.run(puts())
    bodies = sorted(_take(live, client).message for _ in range(3))
    assert bodies == ["async", "héllo", '{"a": "ü"}']  # UTF-8 text kept, no quotes added


def test_errors_raise_typed_exceptions_with_their_bodies(live: Live) -> None:
    client = _client(live)
    with pytest.raises(NotFound) as missing:
        get_queue.sync(live.account, "nope", client=client)
    assert missing.value.status_code == 404
    assert isinstance(missing.value.body, ResourceErrorBody)
    assert missing.value.body.queue_name == "nope"

    put_message.sync(live.account, "jobs", client=client, body="m")
    got = _take(live, client)
    ack_message.sync(live.account, "jobs", client=client, pop_receipt=got.pop_receipt)
    with pytest.raises(Conflict) as stale:
        ack_message.sync(live.account, "jobs", client=client, pop_receipt=got.pop_receipt)
    assert isinstance(stale.value.body, ResourceErrorBody) and stale.value.body.reason == "Conflict"

    options = QueueCreateOptions(queue_name="typo")
    options["maxDeliveryCounts"] = 3  # misspelt: refused, naming it
    with pytest.raises(UnprocessableEntity) as invalid:
        create_queue.sync(live.account, client=client, body=options)
    assert isinstance(invalid.value.body, ErrorsBody)
    assert any("maxDeliveryCounts" in e for e in invalid.value.body.errors)

    with pytest.raises(Unauthorized):
        get_queue.sync(live.account, "jobs", client=_client(live, key="A" * 86))

    with pytest.raises(NotFound) as v2_missing:
        asyncio.run(get_queue_v2.asyncio(live.account, "nope", client=client))
    assert isinstance(v2_missing.value.body, V2ErrorBody) and v2_missing.value.body.code == 404

    # The detailed calls still answer every status without raising.
    detailed = get_queue.sync_detailed(live.account, "nope", client=client)
    assert detailed.status_code == 404 and isinstance(detailed.parsed, ResourceErrorBody)
    # An empty answer (204: no message visible) is None, not an error.
    assert get_next_message.sync(live.account, "jobs", client=client) is None


def test_every_error_status_has_its_class() -> None:
    assert type(error_for(409, b"")) is Conflict
    assert type(error_for(418, b"")) is ApiError
    assert error_for(502, b"x").status_code == 502 and isinstance(error_for(502, b""), ApiError)


def test_key_auth_errors_are_typed_too(live: Live) -> None:
    client = client_with(live.url, KeyAuth("wrong"))
    with pytest.raises(Unauthorized) as refused:
        get_queue.sync(live.account, "jobs", client=client)
    assert refused.value.body is not None
