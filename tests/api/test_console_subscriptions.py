"""The console's queue page shows the queue's subscriptions (issue 36) beside its pointers:
name, mode, start, committed position (shortened), the monotons its pointers stand at per
partition (a shared one's cursor and done position), lag and oldest unread age, the same
figures v2 answers; on each store, in-process with a FakeClock (tests/api/test_console.py).
"""

from __future__ import annotations

import html
import re
from typing import Any

from tests.api.test_console import Console, console

__all__ = ["console"]  # the fixture, used by name

ROW = re.compile(
    r'<tr class="subscription" data-subscription="(?P<name>[^"]+)">\s*'
    r"<td>[^<]*</td><td>(?P<mode>[^<]*)</td><td>(?P<start>[^<]*)</td>\s*"
    r'<td class="position" title="(?P<position>[^"]*)"><code>(?P<short>[^<]*)</code></td>\s*'
    r'<td class="pointers"(?: title="generation (?P<generation>\d+)")?>(?P<pointers>[^<]*)</td>\s*'
    r'<td class="num lag">(?P<lag>\d+)</td>\s*'
    r'<td class="num age">(?P<age>[^<]*)</td>'
)


def _rows(page: str) -> dict[str, dict[str, str]]:
    return {
        m["name"]: {k: html.unescape(v or "") for k, v in m.groupdict().items()}
        for m in ROW.finditer(page)
    }


def _subscribe(console: Console, queue: str, name: str, start: str, mode: str = "ordered") -> None:
    t = console.tenant
    url = f"/api/v2/accounts/{t.account}/queues/{queue}/subscriptions/{name}"
    made = console.client.put(url, json={"mode": mode, "start": start}, headers=t.key)
    assert made.status_code == 201, made.text


def _listed(console: Console, queue: str) -> dict[str, Any]:
    t = console.tenant
    url = f"/api/v2/accounts/{t.account}/queues/{queue}/subscriptions"
    listed = console.client.get(url, headers=t.key)
    assert listed.status_code == 200, listed.text
    return {s["name"]: s for s in listed.json()["subscriptions"]}


def test_a_queues_subscriptions_are_shown_beside_its_pointers(console: Console) -> None:
    c, t = console.client, console.tenant
    console.login()
    assert 'id="no-subscriptions"' in c.get(console.queue_url(t.work)).text
    _subscribe(console, t.work, "audit", "earliest")
    _subscribe(console, t.work, "fresh", "latest")
    console.clock.advance(9)
    page = c.get(console.queue_url(t.work)).text
    # Beside the queue's pointers: after their table, before the buckets'.
    assert (
        page.index('id="pointers"') < page.index('id="subscriptions"') < page.index('id="buckets"')
    )
    rows, api = _rows(page), _listed(console, t.work)
    assert set(rows) == {"audit", "fresh"}, page
    for name, row in rows.items():
        assert (row["mode"], row["start"]) == ("ordered", api[name]["start"])
        assert row["position"] == row["short"] == api[name]["position"]  # short: whole
        assert int(row["lag"]) == api[name]["lag"]
    assert int(rows["audit"]["lag"]) > 0 and rows["fresh"]["lag"] == "0"
    age = api["audit"]["oldestUnackedAgeSeconds"]
    assert age is not None and age >= 9 and rows["audit"]["age"] == f"{age:.1f} s"
    assert rows["fresh"]["age"] == "-"  # nothing unread
    # A commit moves the position and the lag on the page.
    url = f"/api/v2/accounts/{t.account}/queues/{t.work}/subscriptions/audit"
    read = c.get(f"{url}/messages", params={"limit": 2}, headers=t.key).json()
    assert (
        c.post(f"{url}/position", json={"position": read["next"]}, headers=t.key).status_code == 200
    )
    after = _rows(c.get(console.queue_url(t.work)).text)["audit"]
    assert after["position"] == read["next"] != rows["audit"]["position"]
    assert int(after["lag"]) == int(rows["audit"]["lag"]) - 2


def test_a_long_position_is_shortened_and_whole_in_its_title(console: Console) -> None:
    c, t = console.client, console.tenant
    q = f"/api/v2/accounts/{t.account}/queues/wide"
    assert c.put(q, json={"partitions": 8, "bucketSize": 2}, headers=t.key).status_code == 201
    for i in range(16):  # single sends rotate: two in each partition
        sent = c.post(f"{q}/messages", json={"messages": [{"body": f"m{i}"}]}, headers=t.key)
        assert sent.status_code in (200, 201), sent.text
    _subscribe(console, "wide", "all", "latest")
    console.login()
    page = c.get(console.queue_url("wide")).text
    # After the partitions' table (a position covers them all), before partition 0's view.
    assert (
        page.index('id="partitions"')
        < page.index('id="subscriptions"')
        < page.index('id="pointers"')
    )
    row = _rows(page)["all"]
    position = _listed(console, "wide")["all"]["position"]
    assert row["position"] == position and len(position) > 20
    assert row["short"] == f"{position[:12]}…{position[-6:]}"
    assert row["lag"] == "0"


def test_a_shared_subscriptions_cursor_and_done_position_are_shown(console: Console) -> None:
    c, t = console.client, console.tenant
    q = f"/api/v2/accounts/{t.account}/queues/pair"
    assert c.put(q, json={"partitions": 2}, headers=t.key).status_code == 201
    _subscribe(console, "pair", "work", "earliest", mode="shared")
    for i in range(4):  # single sends rotate: two in each partition
        sent = c.post(f"{q}/messages", json={"messages": [{"body": f"m{i}"}]}, headers=t.key)
        assert sent.status_code in (200, 201), sent.text
    console.login()
    assert _rows(c.get(console.queue_url("pair")).text)["work"]["pointers"] == "p0 0 / 0 · p1 0 / 0"
    subs, portal = console.state.engine.subscriptions, c.blocking_portal
    assert portal is not None
    got = portal.call(subs.receive, t.account, "pair", "work", 4, 30)
    assert len(got) == 4
    acked = [d.receipt for d in got if d.receipt.partition == 0]
    assert portal.call(subs.ack_batch, t.account, "pair", "work", acked) == [None, None]
    row = _rows(c.get(console.queue_url("pair")).text)["work"]
    # Every message delivered (cursor 2 in each); the acks count at once in the lag, and
    # the done position moves at the next receive's scan.
    assert row["pointers"] == "p0 2 / 0 · p1 2 / 0", row
    assert row["mode"] == "shared" and int(row["generation"]) > 0
    assert int(row["lag"]) == _listed(console, "pair")["work"]["lag"] == 2
    assert portal.call(subs.receive, t.account, "pair", "work", 4, 30) == []  # leased
    row = _rows(c.get(console.queue_url("pair")).text)["work"]
    assert row["pointers"] == "p0 2 / 2 · p1 2 / 0", row
