"""Every queue and message route of the v1 contract, over HTTP, on Cassandra."""

from __future__ import annotations

import httpx

from cassieq.model import QueueId, StatsSnapshot
from cassieq.pipeline.store_access import StoreAccess
from tests.api.conftest import AccountCtx
from tests.conftest import CassandraNode

Q = {"queueName": "orders"}


def test_create_queue_twice_then_conflict_when_asked(account: AccountCtx) -> None:
    with account.client() as c:
        first = c.post("/queues", json={**Q, "bucketSize": 10})
        assert first.status_code == 201 and first.content == b""
        body = c.get("/queues/orders").json()
        assert body["queueName"] == "orders" and body["accountName"] == account.name
        assert body["bucketSize"] == 10 and body["maxDeliveryCount"] == 5
        for field in (
            "status", "version", "repairWorkerPollFrequencySeconds",
            "repairWorkerTombstonedBucketTimeoutSeconds", "deleteBucketsAfterFinalization",
            "dlqName", "strictFifo",
        ):  # fmt: skip
            assert field in body
        again = c.post("/queues", json=Q)
        assert again.status_code == 200 and again.content == b""
        assert c.get("/queues/orders").json()["bucketSize"] == 10
        conflict = c.post("/queues", json=Q, params={"errorIfExists": "true"})
        assert conflict.status_code == 409
        assert conflict.json()["reason"] == "Conflict"
        assert "already exists" in conflict.json()["message"]


def test_an_unknown_create_option_is_422_naming_it(account: AccountCtx) -> None:
    with account.client() as c:
        refused = c.post("/queues", json={**Q, "bucketSzie": 10})
        assert refused.status_code == 422
        assert any("bucketSzie" in e for e in refused.json()["errors"]), refused.text
        assert c.get("/queues/orders").status_code == 404


def test_list_show_and_delete_queue(account: AccountCtx) -> None:
    with account.client() as c:
        assert c.post("/queues", json=Q).status_code == 201
        assert c.post("/queues", json={"queueName": "audit"}).status_code == 201
        names = sorted(q["queueName"] for q in c.get("/queues").json())
        assert names == ["audit", "orders"]
        assert c.get("/queues/orders").json()["queueName"] == "orders"
        assert c.delete("/queues/orders").status_code == 200
        assert c.get("/queues/orders").status_code == 404
        assert c.delete("/queues/orders").status_code == 404
        assert [q["queueName"] for q in c.get("/queues").json()] == ["audit"]
        recreated = c.post("/queues", json=Q)
        # The wire shows version 0 for a re-created queue too (the engine's identity is internal).
        assert recreated.status_code == 201 and c.get("/queues/orders").json()["version"] == 0


def test_put_get_update_ack_cycle(account: AccountCtx) -> None:
    with account.client() as c:
        c.post("/queues", json=Q)
        assert c.get("/queues/orders/messages/next").status_code == 204
        put = c.post("/queues/orders/messages", content=b'"hi"')
        assert put.status_code == 201
        got = c.get("/queues/orders/messages/next", params={"invisibilityTimeSeconds": 30})
        assert got.status_code == 200
        body = got.json()
        assert body["message"] == '"hi"' and body["deliveryCount"] == 0
        assert set(body) == {"popReceipt", "message", "deliveryCount", "messageTag"}

        updated = c.put(
            "/queues/orders/messages",
            params={"popReceipt": body["popReceipt"]},
            json={"message": "changed", "newInvisibilitySeconds": 0},
        )
        assert updated.status_code == 200
        assert set(updated.json()) == {"popReceipt", "messageTag"}
        stale = c.delete("/queues/orders/messages", params={"popReceipt": body["popReceipt"]})
        assert stale.status_code == 409

        again = c.get("/queues/orders/messages/next").json()
        assert again["message"] == "changed" and again["deliveryCount"] == 1
        ack = c.delete("/queues/orders/messages", params={"popReceipt": again["popReceipt"]})
        assert ack.status_code == 204
        twice = c.delete("/queues/orders/messages", params={"popReceipt": again["popReceipt"]})
        assert twice.status_code == 409
        assert c.get("/queues/orders/messages/next").status_code == 204


def test_statistics(account: AccountCtx) -> None:
    with account.client() as c:
        c.post("/queues", json=Q)
        for i in range(3):
            c.post("/queues/orders/messages", content=f"m{i}".encode())
        got = c.get("/queues/orders/messages/next").json()
        c.delete("/queues/orders/messages", params={"popReceipt": got["popReceipt"]})
        c.get("/queues/orders/messages/next")
        assert c.get("/queues/orders/statistics").json() == {"size": 2}  # v1: exactly this
        with account.client(api="v2") as v2:
            stats = v2.get("/queues/orders/statistics")
        assert stats.status_code == 200
        body = stats.json()
        age = body.pop("oldestMessageAgeSeconds")
        assert isinstance(age, float) and age >= 0
        assert body == {
            "size": 2, "visible": 1, "inFlight": 1, "delayed": 0, "published": 3, "delivered": 2,
            "acked": 1, "deadLettered": 0, "expired": 0, "deadLetterPending": 0,
        }  # fmt: skip


def test_initial_invisibility_via_query(account: AccountCtx) -> None:
    with account.client() as c:
        c.post("/queues", json=Q)
        c.post(
            "/queues/orders/messages", content=b"later", params={"initialInvisibilitySeconds": 3600}
        )
        assert c.get("/queues/orders/messages/next").status_code == 204
        assert c.get("/queues/orders/statistics").json()["size"] == 1


def test_bad_input_gets_a_clear_4xx(account: AccountCtx) -> None:
    with account.client() as c:
        c.post("/queues", json=Q)

        def problem(response: httpx.Response, status: int, words: str) -> None:
            assert response.status_code == status, response.text
            # The contract's shapes: {"errors"} for 400/413/422, {"reason", ...} for 404.
            assert words in response.text, response.text

        problem(c.get("/queues/nope"), 404, "nope")
        problem(c.post("/queues/nope/messages", content=b"x"), 404, "nope")
        problem(
            c.get("/queues/orders/messages/next", params={"invisibilityTimeSeconds": -1}),
            400,
            "invisibilityTimeSeconds",
        )
        problem(
            c.post(
                "/queues/orders/messages",
                content=b"x",
                params={"initialInvisibilitySeconds": "soon"},
            ),
            400,
            "initialInvisibilitySeconds",
        )
        # The reply names the bad parameter, never the rest of the query (a receipt there
        # must not travel back into client or proxy logs).
        leaky = c.put(
            "/queues/orders/messages", params={"popReceipt": "SECRET-RECEIPT"}, content=b"{"
        )
        assert leaky.status_code == 422 and "SECRET-RECEIPT" not in leaky.text, leaky.text
        leaky = c.get(
            "/queues/orders/messages/next",
            params={"invisibilityTimeSeconds": "soon", "note": "SECRET-NOTE"},
        )
        assert leaky.status_code == 400 and "SECRET-NOTE" not in leaky.text, leaky.text
        problem(c.post("/queues", json={"queueName": "bad:name"}), 422, "queueName")
        problem(c.post("/queues", json={"queueName": "x" * 256}), 422, "queueName")
        problem(c.post("/queues", json={"queueName": "ok", "bucketSize": 0}), 422, "bucketSize")
        problem(
            c.post("/queues", content=b"{not json", headers={"content-type": "application/json"}),
            422,
            "malformed",
        )
        problem(c.post("/queues/orders/messages", content=b"x" * (256 * 1024 + 1)), 413, "larger")
        problem(c.post("/queues/orders/messages", content=b"\xff\xfe"), 422, "UTF-8")
        problem(
            c.delete("/queues/orders/messages", params={"popReceipt": "forged"}), 400, "receipt"
        )
        problem(c.delete("/queues/orders/messages"), 400, "popReceipt")
        problem(
            c.put(
                "/queues/orders/messages",
                params={"popReceipt": "x"},
                json={"newInvisibilitySeconds": -5},
            ),
            422,
            "newInvisibilitySeconds",
        )

        # An edited receipt (a valid one with a changed field) is refused too.
        c.post("/queues/orders/messages", content=b"m")
        receipt = c.get("/queues/orders/messages/next").json()["popReceipt"]
        payload, _, signature = receipt.partition(".")
        edited = payload[:-2] + ("A" if payload[-2] != "A" else "B") + payload[-1] + "." + signature
        problem(c.delete("/queues/orders/messages", params={"popReceipt": edited}), 400, "receipt")
        # A receipt for one queue does not ack in another.
        c.post("/queues", json={"queueName": "other"})
        problem(
            c.delete("/queues/other/messages", params={"popReceipt": receipt}), 409, "another queue"
        )
        assert (
            c.delete("/queues/orders/messages", params={"popReceipt": receipt}).status_code == 204
        )


def test_max_delivery_count_moves_messages_to_the_dlq(account: AccountCtx) -> None:
    with account.client() as c:
        c.post("/queues", json={"queueName": "dead"})
        c.post("/queues", json={"queueName": "work", "maxDeliveryCount": 1, "dlqName": "dead"})
        c.post("/queues/work/messages", content=b"poison")
        first = c.get("/queues/work/messages/next", params={"invisibilityTimeSeconds": 0})
        assert first.status_code == 200
        assert c.get("/queues/work/messages/next").status_code == 204
        assert c.get("/queues/dead/messages/next").json()["message"] == "poison"
    with account.client(api="v2") as v2:
        assert v2.get("/queues/work/statistics").json()["deadLettered"] == 1


def test_statistics_detail_shows_the_pipelines_snapshot_of_this_queue_version(
    account: AccountCtx, cassandra_node: CassandraNode
) -> None:
    with account.client() as v1, account.client(api="v2") as c:
        assert v1.post("/queues", json=Q).status_code == 201
        # The engine's own incarnation number (the wire shows version 0 for every queue).
        with StoreAccess(cassandra_node.settings) as store:
            definition = store.run(store.store.read_queue(account.name, "orders"))
        assert definition is not None
        version = definition.version
        plain: dict[str, int | None] = {
            "size": 0,
            "visible": 0,
            "inFlight": 0,
            "delayed": 0,
            "published": 0,
        }
        plain |= {"delivered": 0, "acked": 0, "deadLettered": 0, "expired": 0}
        plain |= {"oldestMessageAgeSeconds": None, "deadLetterPending": 0}
        # No snapshot yet: the body is the plain v1 one, with or without detail.
        assert c.get("/queues/orders/statistics", params={"detail": "true"}).json() == plain
        snapshot = StatsSnapshot(
            queue=QueueId(account.name, "orders", version),
            computed_at=1_800_000_000_000,
            published=9, acked=5, dead_lettered=1, in_flight=2, backlog=1, delivered=11,
            delivery_count_histogram={0: 1, 1: 5, 3: 3}, oldest_unacked_age_s=12.5,
            ack_latency_p50_ms=10.0, ack_latency_p95_ms=40.0, ack_latency_p99_ms=None,
            rows_scanned=9,
        )  # fmt: skip
        with StoreAccess(cassandra_node.settings) as store:
            store.run(store.store.write_stats_snapshot(snapshot))
        assert c.get("/queues/orders/statistics").json() == plain  # detail is asked for
        body = c.get("/queues/orders/statistics", params={"detail": "true"}).json()
        assert body == {
            **plain,
            "detail": {
                "computedAt": 1_800_000_000_000,
                "published": 9, "acked": 5, "deadLettered": 1, "inFlight": 2, "backlog": 1,
                "delivered": 11, "deliveryCountHistogram": {"0": 1, "1": 5, "3": 3},
                "oldestUnackedAgeSeconds": 12.5,
                "ackLatencyMs": {"p50": 10.0, "p95": 40.0, "p99": None},
                "rowsScanned": 9,
            },
        }  # fmt: skip
        bad = c.get("/queues/orders/statistics", params={"detail": "maybe"})
        assert bad.status_code == 400 and bad.json()["code"] == 400
        assert "detail" in bad.json()["message"]
        # Deleted and re-created: the old version's snapshot says nothing about the new queue.
        assert v1.delete("/queues/orders").status_code == 200
        assert v1.post("/queues", json=Q).status_code == 201
        assert c.get("/queues/orders/statistics", params={"detail": "true"}).json() == plain
