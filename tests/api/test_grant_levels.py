"""A grant does what its levels say and no more (#40 finding 6), on both stores.

Measured before: a grant with only the create level (`c`) PATCHed a queue's retention to
60 s and so expired all its messages (a delete without `d`); a `g` grant read message bodies
through v2 peek; a `p` grant on a dead-letter queue alone redrove its messages back into
their source queues, which it had no grant for.
"""

from __future__ import annotations

from tests.api.test_v2_purge_redrive import NO_KEY, Api, _dead_lettered, api

__all__ = ["api"]  # the fixture (both stores)


def test_a_patch_that_can_end_messages_needs_the_delete_level(api: Api) -> None:
    c = api.client
    api.queue("dlq")
    api.queue("q", dlqName="dlq")
    api.put("q", "kept")
    url = f"{api.v2}/queues/q"
    create_only = api.grant("c", queue="q")
    shorter = c.patch(url, json={"messageRetentionSeconds": 60}, params=create_only, headers=NO_KEY)
    assert shorter.status_code == 403, shorter.text
    for destructive in ({"maxDeliveryCount": 1}, {"deadLetterQueue": None}):
        refused = c.patch(url, json=destructive, params=create_only, headers=NO_KEY)
        assert refused.status_code == 403, (destructive, refused.text)
    # What cannot end a message stays the create level's.
    longer = c.patch(url, json={"visibilityTimeoutSeconds": 45}, params=create_only, headers=NO_KEY)
    assert longer.status_code == 200, longer.text
    # The refused change was not made: the message outlives a minute.
    api.clock.advance(61)
    assert api.drain("q") == ["kept"]
    with_delete = api.grant("c", "d", queue="q")
    allowed = c.patch(url, json={"messageRetentionSeconds": 60}, params=with_delete, headers=NO_KEY)
    assert allowed.status_code == 200, allowed.text
    assert allowed.json()["messageRetentionSeconds"] == 60


def test_peek_needs_the_read_level(api: Api) -> None:
    c = api.client
    api.queue("q")
    api.put("q", "secret body")
    url = f"{api.v2}/queues/q/messages/peek"
    info_only = c.get(url, params=api.grant("g", queue="q"), headers=NO_KEY)
    assert info_only.status_code == 403, info_only.text
    assert "secret body" not in info_only.text
    read = c.get(url, params=api.grant("r", queue="q"), headers=NO_KEY)
    assert read.status_code == 200, read.text
    assert [m["body"] for m in read.json()["messages"]] == ["secret body"]


def test_a_redrive_to_the_sources_needs_put_on_them_not_only_on_the_dead_letter_queue(
    api: Api,
) -> None:
    c = api.client
    _dead_lettered(api, {"a": ["x"]})
    url = f"{api.v2}/queues/dead/redrive"
    dead_only = c.post(url, json={}, params=api.grant("p", queue="dead"), headers=NO_KEY)
    assert dead_only.status_code in (401, 403), dead_only.text
    api.join_redrives()
    assert api.drain("a") == []  # nothing moved into "a"
    account_wide = c.post(url, json={}, params=api.grant("p"), headers=NO_KEY)
    assert account_wide.status_code == 202, account_wide.text
    api.join_redrives()
    assert api.drain("a") == ["x"]
