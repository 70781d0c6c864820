"""The generated client's subscription functions (api_spec/client, regenerated for issue 36)
against a live server on each store: create, read, commit with expected, every form of
seek (the request's `to` is a union of a string and an object), list, show and delete; a
shared subscription's receive, visibility and ack."""

from __future__ import annotations

from cassieq_client.api.subscriptions_v2 import (
    ack_subscription_messages,
    change_subscription_message_visibility,
    commit_subscription_position,
    delete_subscription,
    get_subscription,
    list_subscriptions,
    put_subscription,
    read_subscription,
    receive_subscription_messages,
    seek_subscription,
)
from cassieq_client.models import (
    AckRequest,
    AckResponse,
    CommitRequest,
    ReadBody,
    ReceiveRequest,
    ReceiveResponse,
    SeekPoint,
    SeekRequest,
    SeekRequestToType0,
    SubscriptionBody,
    SubscriptionDetailBody,
    SubscriptionListBody,
    SubscriptionOptionsBody,
    SubscriptionOptionsBodyMode,
    VisibilityEntry,
    VisibilityRequest,
    VisibilityResponse,
)
from cassieq_client_auth import KeyAuth

from tests.e2e.cli_v2 import Live, live
from tests.e2e.generated_client import client_with

__all__ = ["live"]  # the fixture


def test_the_generated_client_reads_commits_and_seeks(live: Live) -> None:
    client = client_with(live.url, KeyAuth(live.keys["primary"]))
    a, q = live.account, "jobs"
    options = SubscriptionOptionsBody(mode=SubscriptionOptionsBodyMode.ORDERED, start="earliest")
    made = put_subscription.sync_detailed(a, q, "audit", client=client, body=options)
    assert made.status_code == 201, made.content
    assert isinstance(made.parsed, SubscriptionBody) and made.parsed.start == "earliest"
    with live.v2() as v2:
        sent = v2.post(f"/{q}/messages", json={"messages": [{"body": "x"}, {"body": "y"}]})
        assert sent.status_code == 201, sent.text

    page = read_subscription.sync(a, q, "audit", client=client, limit=1)
    assert isinstance(page, ReadBody) and [m.body for m in page.messages] == ["x"]
    body = CommitRequest(position=page.next_, expected=made.parsed.position)
    moved = commit_subscription_position.sync(a, q, "audit", client=client, body=body)
    assert isinstance(moved, SubscriptionBody) and moved.position == page.next_
    stale = commit_subscription_position.sync_detailed(a, q, "audit", client=client, body=body)
    assert stale.status_code == 409

    def bodies() -> list[str]:
        got = read_subscription.sync(a, q, "audit", client=client)
        assert isinstance(got, ReadBody)
        return [m.body for m in got.messages]

    assert bodies() == ["y"]
    for to, expected in (
        (SeekRequestToType0.EARLIEST, ["x", "y"]),
        (SeekRequestToType0.LATEST, []),
        (SeekPoint(time="2000-01-01T00:00:00Z"), ["x", "y"]),
        (SeekPoint(position=page.next_), ["y"]),
    ):
        sought = seek_subscription.sync_detailed(
            a, q, "audit", client=client, body=SeekRequest(to=to)
        )
        assert sought.status_code == 200, (to, sought.content)
        assert bodies() == expected, to

    listed = list_subscriptions.sync(a, q, client=client)
    assert isinstance(listed, SubscriptionListBody)
    assert [(s.name, s.lag) for s in listed.subscriptions] == [("audit", 1)]
    shown = get_subscription.sync(a, q, "audit", client=client)
    assert isinstance(shown, SubscriptionDetailBody) and shown.position == page.next_
    assert delete_subscription.sync_detailed(a, q, "audit", client=client).status_code == 204
    gone = get_subscription.sync_detailed(a, q, "audit", client=client)
    assert gone.status_code == 404


def test_the_generated_client_receives_acks_and_leases_in_a_shared_subscription(
    live: Live,
) -> None:
    client = client_with(live.url, KeyAuth(live.keys["primary"]))
    a, q = live.account, "jobs"
    options = SubscriptionOptionsBody(mode=SubscriptionOptionsBodyMode.SHARED, start="earliest")
    made = put_subscription.sync_detailed(a, q, "work", client=client, body=options)
    assert made.status_code == 201, made.content
    with live.v2() as v2:
        sent = v2.post(f"/{q}/messages", json={"messages": [{"body": "x"}, {"body": "y"}]})
        assert sent.status_code == 201, sent.text
    got = receive_subscription_messages.sync(
        a, q, "work", client=client, body=ReceiveRequest(max_messages=10)
    )
    assert isinstance(got, ReceiveResponse)
    assert [(m.body, m.delivery_count) for m in got.messages] == [("x", 1), ("y", 1)]
    x, y = got.messages
    lease = VisibilityEntry(pop_receipt=y.pop_receipt, visibility_timeout_seconds=60)
    changed = change_subscription_message_visibility.sync(
        a, q, "work", client=client, body=VisibilityRequest(entries=[lease])
    )
    assert isinstance(changed, VisibilityResponse) and changed.failed == []
    receipts = [x.pop_receipt, changed.updated[0].new_pop_receipt, y.pop_receipt]
    acked = ack_subscription_messages.sync(
        a, q, "work", client=client, body=AckRequest(pop_receipts=receipts[:2])
    )
    assert isinstance(acked, AckResponse) and acked.acked == receipts[:2]
    stale = ack_subscription_messages.sync(
        a, q, "work", client=client, body=AckRequest(pop_receipts=receipts[2:])
    )
    assert isinstance(stale, AckResponse) and [f.code for f in stale.failed] == [409]
    # The queue's own consumers still have both: the subscription's acks are its own.
    with live.v2() as v2:
        mine = v2.post(f"/{q}/messages/receive", json={"maxMessages": 10})
        assert [m["body"] for m in mine.json()["messages"]] == ["x", "y"]
