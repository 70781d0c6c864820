"""Every example request body of the served OpenAPI document succeeds as sent on a fresh
server (#39): Swagger UI's "Try it out" sends a body's example as it is (``examples[0]`` of
its schema) and, where there is none, makes one up from the schema, which failed (a
made-up ``dlqName``: 422; ``delaySeconds: 900``). The v1 put's text body must be a string,
not ``format: binary`` (Swagger UI offered only a file picker for it).

A fresh server is what `cassieq dev` starts: an empty store with the account ``dev`` (keys
``primary`` and ``secondary``), on each store (a keyspace created empty for the Cassandra
side). The examples are sent in the document's order to one server, as someone trying them
one after the other would; each operation's path names its own queue, created first when
the operation needs one (a redrive's is some queue's dead-letter queue); a v1 update's
``popReceipt`` (a query parameter) comes from a message put and got first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.engine.clock import SystemClock
from cassieq.store.base import Store
from cassieq.store.cassandra import (
    CassandraStore,
    apply_schema,
    connect,
    default_schema_dir,
    drop_keyspace,
)
from cassieq.store.memory import MemoryStore
from tests.conftest import TEST_KEYSPACE, AppClient, CassandraNode, app_client

TOKEN = "openapi-examples-operator-token-0123456789"
DEV = "dev"  # the account `cassieq dev` creates
METHODS = ("get", "put", "post", "patch", "delete")


@dataclass(frozen=True)
class Call:
    """One operation with a request body, and the body its example gives (None: none)."""

    operation_id: str
    method: str
    path: str
    content_type: str
    example: Any
    operator: bool
    required_query: tuple[str, ...]


def _schema_example(schema: dict[str, Any], document: dict[str, Any]) -> Any:
    """The body Swagger UI fills in from a schema: its first example, following a $ref and
    the first alternative of allOf/oneOf/anyOf; None when there is none."""
    if schema.get("examples"):
        return schema["examples"][0]
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/components/schemas/")
        return _schema_example(document["components"]["schemas"][name], document)
    for key in ("allOf", "oneOf", "anyOf"):
        if schema.get(key):
            return _schema_example(schema[key][0], document)
    return None


def body_calls(document: dict[str, Any]) -> list[Call]:
    calls = []
    for path, item in document["paths"].items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None or "requestBody" not in operation:
                continue
            ((content_type, media),) = operation["requestBody"]["content"].items()
            if "example" in media:
                example = media["example"]
            elif media.get("examples"):
                example = next(iter(media["examples"].values()))["value"]
            else:
                example = _schema_example(media["schema"], document)
            security = operation.get("security") or []
            calls.append(
                Call(
                    operation_id=operation["operationId"],
                    method=method,
                    path=path,
                    content_type=content_type,
                    example=example,
                    operator=security == [{"Operator": []}],
                    required_query=tuple(
                        p["name"]
                        for p in operation.get("parameters", [])
                        if p["in"] == "query" and p.get("required")
                    ),
                )
            )
    return calls


def served_document(client: TestClient[Litestar]) -> dict[str, Any]:
    got = client.get("/schema/openapi.json")
    assert got.status_code == 200, got.text
    document: dict[str, Any] = got.json()
    return document


def test_every_request_body_has_an_example() -> None:
    app = create_app(Settings(admin_token=TOKEN), MemoryStore(), background=False)
    with TestClient(app=app) as client:
        calls = body_calls(served_document(client))
    # The document's JSON bodies and the v1 put's text: the walk found them all.
    assert len(calls) >= 13, [c.operation_id for c in calls]
    missing = [c.operation_id for c in calls if c.example is None]
    assert missing == [], f"request bodies without an example (Swagger UI makes one up): {missing}"


def test_the_v1_put_body_is_text_to_type_in() -> None:
    app = create_app(Settings(admin_token=TOKEN), MemoryStore(), background=False)
    with TestClient(app=app) as client:
        document = served_document(client)
    put = document["paths"]["/api/v1/accounts/{account}/queues/{queue}/messages"]["post"]
    schema = put["requestBody"]["content"]["text/plain"]["schema"]
    # `format: binary` made Swagger UI offer a file picker and nowhere to type the message.
    assert schema.get("type") == "string"
    assert "format" not in schema, schema


@pytest.fixture
def fresh_store(store_kind: str, request: pytest.FixtureRequest) -> Iterator[Store]:
    """An empty store: a MemoryStore, or a keyspace of its own, created empty for this test
    (dropped by the next run rather than after this one: a drop takes tens of seconds)."""
    if store_kind == "memory":
        yield MemoryStore()
        return
    node: CassandraNode = request.getfixturevalue("cassandra_node")
    keyspace = f"{TEST_KEYSPACE}_examples"
    # A connection of its own: apply_schema sets the session's keyspace.
    cluster, session = connect(node.settings.cassandra_hosts, node.settings.cassandra_port)
    try:
        drop_keyspace(session, keyspace)  # left by an interrupted run
        apply_schema(session, keyspace, node.settings.replication, default_schema_dir())
        yield CassandraStore(session, keyspace)
    finally:
        cluster.shutdown()


@pytest.fixture
def dev(fresh_store: Store) -> Iterator[AppClient[SystemClock]]:
    settings = Settings(admin_token=TOKEN)
    with app_client(AppClient, fresh_store, settings, SystemClock(), prefix="ex", name=DEV) as api:
        yield api


def _queue_for(api: AppClient[SystemClock], call: Call, index: int) -> str:
    """The queue the call's path names, prepared as the operation needs it."""
    queue = f"ex{index}-{call.operation_id}"
    if call.operation_id == "putQueueV2":
        return queue  # it creates the queue
    api.create_queue(queue)
    if call.operation_id == "startRedrive":
        # A redrive moves a dead-letter queue's messages: some queue must name this one.
        api.create_queue(f"{queue}-source", dlq_name=queue)
    return queue


# A shared subscription's operations (the others are an ordered one's, or either's).
SHARED_OPERATIONS = frozenset(
    {
        "receiveSubscriptionMessages",
        "ackSubscriptionMessages",
        "changeSubscriptionMessageVisibility",
    }
)


def _subscription_for(api: AppClient[SystemClock], call: Call, queue: str) -> str:
    """The subscription the call's path names, created first unless the call creates it."""
    name = "ex-subscription"
    if call.operation_id != "putSubscription":
        url = f"{api.v2}/queues/{queue}/subscriptions/{name}"
        mode = "shared" if call.operation_id in SHARED_OPERATIONS else "ordered"
        made = api.client.put(url, json={"mode": mode}, headers=api.auth)
        assert made.status_code == 201, made.text
    return name


def _receipt_v1(api: AppClient[SystemClock], queue: str) -> str:
    put = api.client.post(
        f"{api.v1}/queues/{queue}/messages", content=b"to update", headers=api.auth
    )
    assert put.status_code == 201, put.text
    got = api.client.get(f"{api.v1}/queues/{queue}/messages/next", headers=api.auth)
    assert got.status_code == 200, got.text
    receipt: str = got.json()["popReceipt"]
    return receipt


def _receipt_v2(api: AppClient[SystemClock], queue: str, receive_url: str | None = None) -> str:
    """A receipt of the queue's, or of the receive at ``receive_url`` (a subscription's)."""
    base = f"{api.v2}/queues/{queue}/messages"
    sent = api.client.post(base, json={"messages": [{"body": "m"}]}, headers=api.auth)
    assert sent.status_code == 201, sent.text
    receive = receive_url or f"{base}/receive"
    got = api.client.post(receive, json={"maxMessages": 1}, headers=api.auth)
    assert got.status_code == 200, got.text
    (message,) = got.json()["messages"]
    receipt: str = message["popReceipt"]
    return receipt


def _send(
    api: AppClient[SystemClock], call: Call, url: str, body: Any, query: dict[str, str]
) -> Any:
    headers = dict(api.admin if call.operator else api.auth)
    if call.content_type == "application/json":
        return api.client.request(call.method, url, json=body, params=query, headers=headers)
    assert call.content_type == "text/plain", call
    headers["Content-Type"] = "text/plain"
    return api.client.request(
        call.method, url, content=str(body).encode(), params=query, headers=headers
    )


def _receipts_in(value: Any) -> list[str]:
    """The pop receipts an example holds (v2's ack and visibility batches)."""
    if isinstance(value, list):
        return [r for v in value for r in _receipts_in(v)]
    if not isinstance(value, dict):
        return []
    found = list(value.get("popReceipts", []))
    if "popReceipt" in value:
        found.append(value["popReceipt"])
    return found + [r for k, v in value.items() if k != "popReceipts" for r in _receipts_in(v)]


def _with_receipt(value: Any, receipt: str) -> Any:
    if isinstance(value, list):
        return [_with_receipt(v, receipt) for v in value]
    if not isinstance(value, dict):
        return value
    replaced = {k: _with_receipt(v, receipt) for k, v in value.items()}
    if "popReceipt" in replaced:
        replaced["popReceipt"] = receipt
    if "popReceipts" in replaced:
        replaced["popReceipts"] = [receipt] * len(value["popReceipts"])
    return replaced


def test_every_example_body_succeeds_as_sent(dev: AppClient[SystemClock]) -> None:
    calls = body_calls(served_document(dev.client))
    assert calls, "the document has no request body"
    failures = []
    for index, call in enumerate(calls):
        if call.example is None:
            failures.append(f"{call.operation_id}: no example (Swagger UI makes one up)")
            continue
        queue = _queue_for(api=dev, call=call, index=index) if "{queue}" in call.path else ""
        url = call.path.replace("{account}", DEV).replace("{queue}", queue)
        if "{subscription}" in url:
            url = url.replace("{subscription}", _subscription_for(dev, call, queue))
        query = {}
        for name in call.required_query:
            # A receipt comes from a get; the test knows no other required parameter.
            assert name == "popReceipt", f"{call.operation_id}: how to fill {name}?"
            query[name] = _receipt_v1(dev, queue)
        answer = _send(dev, call, url, call.example, query)
        if not 200 <= answer.status_code < 300:
            failures.append(
                f"{call.method.upper()} {call.path} ({call.operation_id}) "
                f"with {call.example!r}: {answer.status_code} {answer.text}"
            )
            continue
        placeholders = _receipts_in(call.example)
        if placeholders:
            # A static example holds no real receipt: the batch answers its placeholder under
            # "failed"; with a real receipt in its place, the rest of the example is accepted.
            assert [f["popReceipt"] for f in answer.json()["failed"]] == placeholders
            shared = call.operation_id in SHARED_OPERATIONS
            receive = url.rsplit("/", 1)[0] + "/receive" if shared else None
            real = _with_receipt(call.example, _receipt_v2(dev, queue, receive))
            again = _send(dev, call, url, real, query)
            assert again.status_code == 200, again.text
            assert again.json()["failed"] == [], (call.operation_id, again.text)
    assert failures == [], "\n".join(failures)
