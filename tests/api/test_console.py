"""The web console (/console) over HTTP, on each store: operator login and session cookie,
dev mode, escaping of tenant data, the bucket-and-pointer view with a stall, the charts,
peek, and the dead-letter queue's redrive with its CSRF protection.

The app runs in-process (Litestar's TestClient) with a FakeClock and no background work,
so the repair pointer stays where it is while the reader moves on. Browser tests of the
same pages: tests/browser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from cassieq.api.app import create_app
from cassieq.api.state import AppState
from cassieq.api.web_console.history import History
from cassieq.api.web_console.session import COOKIE
from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.store.base import Store
from cassieq.store.memory import MemoryStore
from cassieq.tools.bench.servers import free_port
from tests.api.live import served
from tests.console_data import XSS_ATTRIBUTE, XSS_BODY, Tenant, populate

TOKEN = "console-operator-token-" + "x" * 20
ADMIN = {"Authorization": f"Bearer {TOKEN}"}


@dataclass
class Console:
    client: TestClient[Litestar]
    clock: FakeClock
    tenant: Tenant

    def queue_url(self, queue: str) -> str:
        return f"/console/accounts/{self.tenant.account}/queues/{queue}"

    def login(self) -> None:
        done = self.client.post("/console/login", data={"token": TOKEN}, follow_redirects=False)
        assert done.status_code == 303, done.text

    def csrf(self, page: str) -> str:
        found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
        assert found, "no CSRF token in the form"
        return found.group(1)

    @property
    def state(self) -> AppState:
        state: AppState = self.client.app.state.cassieq
        return state


@pytest.fixture
def console(store: Store) -> Iterator[Console]:
    clock = FakeClock()
    app = create_app(Settings(admin_token=TOKEN), store, clock=clock, background=False)
    with TestClient(app=app) as client:
        yield Console(client, clock, populate(client, ADMIN, clock))


def test_console_needs_the_operator_login(console: Console) -> None:
    c = console.client
    first = c.get("/console/", follow_redirects=False)
    assert (first.status_code, first.headers["location"]) == (303, "/console/login")
    assert c.get(console.queue_url("orders"), follow_redirects=False).status_code == 303
    wrong = c.post("/console/login", data={"token": "not-it"}, follow_redirects=False)
    assert wrong.status_code == 401
    assert COOKIE not in wrong.cookies
    # The Bearer header is not a console session either (the console is for browsers).
    assert c.get("/console/", headers=ADMIN, follow_redirects=False).status_code == 303
    right = c.post("/console/login", data={"token": TOKEN}, follow_redirects=False)
    assert (right.status_code, right.headers["location"]) == (303, "/console")
    cookie = right.headers["set-cookie"]
    assert "HttpOnly" in cookie and "Path=/console" in cookie
    assert "samesite=strict" in cookie.lower()
    assert TOKEN not in cookie
    page = c.get("/console/")
    assert page.status_code == 200
    assert console.tenant.account in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")


def test_a_tampered_or_foreign_session_is_refused(console: Console) -> None:
    c = console.client
    console.login()
    good = c.cookies[COOKIE]
    c.cookies.set(COOKIE, good[:-2] + ("AA" if not good.endswith("AA") else "BB"), path="/console")
    assert c.get("/console/", follow_redirects=False).status_code == 303
    # A session signed under another operator token (the token was changed) ends.
    other = create_app(Settings(admin_token="another-token-" + "y" * 30), MemoryStore())
    with TestClient(app=other) as elsewhere:
        elsewhere.post("/console/login", data={"token": "another-token-" + "y" * 30})
        foreign = elsewhere.cookies[COOKIE]
    c.cookies.set(COOKIE, foreign, path="/console")
    assert c.get("/console/", follow_redirects=False).status_code == 303


def test_tenant_markup_is_escaped(console: Console) -> None:
    console.login()
    page = console.client.get(console.queue_url("orders")).text
    assert XSS_BODY not in page and XSS_ATTRIBUTE not in page
    assert "&lt;script&gt;document.title=" in page
    assert "&lt;img src=x onerror=" in page
    assert "<script" not in page  # the console itself has no script at all


def test_bucket_and_pointer_view_shows_the_stall_in_red(console: Console) -> None:
    console.login()
    fresh = console.client.get(console.queue_url("orders")).text
    assert re.search(r'class="pointer" data-pointer="repair"', fresh), "repair stalls too soon"
    assert 'id="buckets"' in fresh and "reader" in fresh
    # No repair runs (no background work): past the finalize wait plus a minute, the
    # repair pointer two buckets behind the reader is a stall.
    console.clock.advance(15 + 61)
    later = console.client.get(console.queue_url("orders")).text
    assert re.search(r'class="pointer stall" data-pointer="repair"', later), later
    assert "STALLED" in later


def test_dead_letter_queue_redrive_with_csrf(console: Console) -> None:
    c, t = console.client, console.tenant
    console.login()
    page = c.get(console.queue_url(t.dlq)).text
    assert 'id="dlq"' in page and "Dead letters of: orders" in page
    assert "first, to be dead-lettered" in page  # peek shows what waits there
    url = console.queue_url(t.dlq) + "/redrive"
    assert c.post(url, data={"csrf": "0" * 64}).status_code == 403
    token = console.csrf(page)
    other_site = c.post(url, data={"csrf": token}, headers={"Origin": "https://evil.example"})
    assert other_site.status_code == 403
    started = c.post(url, data={"csrf": token}, follow_redirects=False)
    assert started.status_code == 303
    assert "?task=" in started.headers["location"]
    assert c.blocking_portal is not None
    c.blocking_portal.call(console.state.engine.redriver.join)
    done = c.get(started.headers["location"]).text
    assert re.search(r"Redrive \S+: completed, moved 1 of 1", done), done
    stats = c.get(f"/api/v2/accounts/{t.account}/queues/{t.dlq}/statistics", headers=t.key)
    assert stats.json()["size"] == 0


def test_peek_pages_through_the_messages(console: Console) -> None:
    console.login()
    page = console.client.get(console.queue_url("orders")).text
    assert "order 5" in page
    shown = [int(m) for m in re.findall(r'<td class="num">(\d+)</td>\s*<td><pre>', page)]
    assert shown == sorted(shown) and len(shown) == 7  # 8 sent, 1 dead-lettered
    after = console.client.get(console.queue_url("orders"), params={"after": shown[3]}).text
    rest = [int(m) for m in re.findall(r'<td class="num">(\d+)</td>\s*<td><pre>', after)]
    assert rest == shown[4:]


def test_bad_input_is_a_4xx_with_a_json_body(console: Console) -> None:
    console.login()
    c = console.client
    missing = c.get(console.queue_url("nope"))
    assert missing.status_code == 404 and "nope" in missing.json()["message"]
    negative = c.get(console.queue_url("orders"), params={"after": "-1"})
    assert negative.status_code == 400 and "after" in negative.json()["errors"][0]
    unknown_task = c.get(console.queue_url(console.tenant.dlq), params={"task": "x" * 65})
    assert unknown_task.status_code == 400


def test_charts_draw_the_samples(console: Console) -> None:
    console.login()
    c, t = console.client, console.tenant
    first = c.get(console.queue_url("orders")).text
    assert "collecting samples" in first
    history: History = c.app.state.console_history
    for _ in range(3):
        console.clock.advance(10)
        c.post(f"/api/v2/accounts/{t.account}/queues/orders/messages",
               json={"messages": [{"body": "more"}] * 5}, headers=t.key)  # fmt: skip
        assert c.blocking_portal is not None
        assert c.blocking_portal.call(history.sample_once) == 1  # the viewed queue
    rates = history.rates((t.account, "orders"))
    assert [round(r.sent, 2) for r in rates[-3:]] == [0.5, 0.5, 0.5]
    later = c.get(console.queue_url("orders")).text
    assert later.count("<polyline") >= 5  # depth, in flight, three rates, age


def test_dev_mode_opens_the_console_on_its_admin_port_from_loopback_only() -> None:
    port = free_port()
    settings = Settings(admin_token=TOKEN, admin_port=port)
    app = create_app(settings, MemoryStore(), background=False, open_admin_port=True)
    with served(app, port=port):
        page = httpx.get(f"http://127.0.0.1:{port}/console/", follow_redirects=False)
        assert page.status_code == 200
        assert COOKIE in page.cookies  # for the CSRF token of its forms
    # Elsewhere (here: a request that came in on no admin port) the login is asked for (#39:
    # `cassieq dev` bound to 0.0.0.0 gave its console to any client on the API port).
    with TestClient(app=app) as c:
        other = c.get("/console/", follow_redirects=False)
        assert (other.status_code, other.headers["location"]) == (303, "/console/login")


def test_no_operator_token_disables_the_console() -> None:
    with TestClient(app=create_app(Settings(), MemoryStore(), background=False)) as c:
        page = c.get("/console/", follow_redirects=False)
        assert page.status_code == 403 and "CASSIEQ_ADMIN_TOKEN" in page.text
        assert c.post("/console/login", data={"token": ""}).status_code == 401


def test_overview_lists_a_bounded_number_of_accounts(
    console: Console, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cassieq.api.web_console.views as views

    populate(console.client, ADMIN, console.clock)  # a second account at least
    monkeypatch.setattr(views, "OVERVIEW_ACCOUNTS", 1)
    console.login()
    page = console.client.get("/console/").text
    assert page.count('<h2 class="account">') == 1
    assert re.search(r"\d+ more accounts are not shown", page)


def test_a_redrive_of_a_queue_that_is_no_dead_letter_queue_is_refused_with_the_reason(
    console: Console,
) -> None:
    """A console form posted for "orders" (no queue names it as its dlqName): refused on the
    page with the reason, not a task that fails each message (#39 item 7)."""
    c = console.client
    console.login()
    token = console.csrf(c.get(console.queue_url(console.tenant.dlq)).text)  # the session's
    refused = c.post(console.queue_url("orders") + "/redrive", data={"csrf": token})
    assert refused.status_code == 422
    assert "is no dead-letter queue" in refused.text and "Refused" in refused.text


def test_purge_and_delete_a_queue_from_the_console(console: Console) -> None:
    """#39 item 7: the console can purge and delete, behind the CSRF token, the deletion
    behind a ticked confirmation too."""
    c, t = console.client, console.tenant
    console.login()
    page = c.get(console.queue_url("orders")).text
    assert 'id="purge"' in page and 'id="delete"' in page
    token = console.csrf(page)
    v2 = f"/api/v2/accounts/{t.account}/queues/orders"
    before = c.get(f"{v2}/statistics", headers=t.key).json()["size"]
    assert before > 0
    url = console.queue_url("orders")
    assert c.post(url + "/purge", data={"csrf": "0" * 64}).status_code == 403
    purged = c.post(url + "/purge", data={"csrf": token}, follow_redirects=False)
    assert purged.status_code == 303 and f"purged={before}" in purged.headers["location"]
    assert f"Purged: {before} messages removed." in c.get(purged.headers["location"]).text
    assert c.get(f"{v2}/statistics", headers=t.key).json()["size"] == 0

    unconfirmed = c.post(url + "/delete", data={"csrf": token})
    assert unconfirmed.status_code == 422 and "nothing was deleted" in unconfirmed.text
    assert c.get(f"{v2}/statistics", headers=t.key).status_code == 200  # still there
    deleted = c.post(
        url + "/delete", data={"csrf": token, "confirm": "yes"}, follow_redirects=False
    )
    assert deleted.status_code == 303
    assert f"Queue {t.account}/orders deleted" in c.get(deleted.headers["location"]).text
    assert c.get(f"{v2}/statistics", headers=t.key).status_code == 404


def test_the_pages_reload_themselves(console: Console) -> None:
    c = console.client
    console.login()
    overview = c.get("/console/").text
    assert '<meta http-equiv="refresh" content="10; url=/console/">' in overview
    page = c.get(console.queue_url("orders"), params={"purged": 3}).text
    # The reload forgets the one-off notice ...
    assert f'content="10; url={console.queue_url("orders")}"' in page and "Purged: 3" in page
    # ... and keeps following a redrive task.
    dlq = console.queue_url(console.tenant.dlq)
    token = console.csrf(c.get(dlq).text)
    started = c.post(dlq + "/redrive", data={"csrf": token}, follow_redirects=False)
    task = started.headers["location"].split("?task=")[1]
    assert f'content="10; url={dlq}?task={task}"' in c.get(started.headers["location"]).text
    assert c.blocking_portal is not None
    c.blocking_portal.call(console.state.engine.redriver.join)


def test_a_partitioned_queue_shows_a_row_of_pointers_per_partition(console: Console) -> None:
    c, t = console.client, console.tenant
    q = f"/api/v2/accounts/{t.account}/queues/wide"
    assert c.put(q, json={"partitions": 3, "bucketSize": 2}, headers=t.key).status_code == 201
    for i in range(9):  # single sends rotate: three in each partition
        sent = c.post(f"{q}/messages", json={"messages": [{"body": f"m{i}"}]}, headers=t.key)
        assert sent.status_code in (200, 201), sent.text
    console.login()
    page = c.get(console.queue_url("wide")).text
    assert 'id="partitions"' in page and "3 partitions" in page
    rows = re.findall(r'<tr class="partition" data-partition="(\d+)">', page)
    assert rows == ["0", "1", "2"], page
    # Each partition's own next monoton: 3 messages each.
    monotons = re.findall(
        r'data-partition="\d+">\s*<td class="num">\d+</td><td class="num">\d+</td>'
        r'\s*<td class="num">[^<]*</td>\s*<td class="num">[^<]*</td>\s*<td class="num">(\d+)</td>',
        page,
    )
    assert monotons == ["3", "3", "3"], page
    # A queue of one partition shows no partition table.
    assert 'id="partitions"' not in c.get(console.queue_url("orders")).text
