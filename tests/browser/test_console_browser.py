"""The web console in a real browser, with no network: the operator logs in through the
form, sees the overview, one queue's buckets and pointers with the stalled repair pointer
in red, and redrives the dead-letter queue with its button. On each store."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.store.base import Store
from tests.api.live import served
from tests.browser.conftest import OfflinePage, offline_page
from tests.console_data import XSS_BODY, Tenant, populate

TOKEN = "browser-console-token-" + "q" * 20
ADMIN = {"Authorization": f"Bearer {TOKEN}"}
STALL_RED = "rgb(198, 40, 40)"  # .stall in the console's stylesheet


class Site:
    def __init__(
        self, offline: OfflinePage, http: httpx.Client, clock: FakeClock, store: str
    ) -> None:
        self.offline, self.http, self.clock, self.store = offline, http, clock, store
        self.tenant: Tenant = populate(http, ADMIN, clock)

    def queue_url(self, queue: str) -> str:
        return f"/console/accounts/{self.tenant.account}/queues/{queue}"


@pytest.fixture
def site(browser: Browser, tmp_path: Path, store: Store, store_kind: str) -> Iterator[Site]:
    clock = FakeClock()
    app = create_app(Settings(admin_token=TOKEN), store, clock=clock, background=False)
    with served(app) as port, httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
        for offline in offline_page(browser, str(http.base_url), tmp_path / store_kind):
            offline.screenshots.mkdir(parents=True, exist_ok=True)
            yield Site(offline, http, clock, store_kind)


def test_console_overview_pointers_and_redrive(site: Site) -> None:
    page, t = site.offline.page, site.tenant
    store = site.store
    page.goto("/console/")
    assert page.url.endswith("/console/login")
    page.locator("#token").fill(TOKEN)
    page.locator("#login").click()
    expect(page.get_by_role("heading", name="Accounts and queues")).to_be_visible()
    assert TOKEN not in page.url
    row = page.locator("h2.account", has_text=t.account)
    expect(row).to_be_visible()
    site.offline.shot(f"overview-{store}")

    # The repair pointer stays put (no background work) while the reader has moved on:
    # past the finalize wait plus a minute it is a stall, in red.
    site.clock.advance(15 + 61)
    page.goto(site.queue_url(t.work))
    expect(page.locator("#queue-name")).to_have_text(t.work)
    repair = page.locator('tr.pointer[data-pointer="repair"]')
    expect(repair).to_contain_text("STALLED")
    assert repair.evaluate("e => getComputedStyle(e).backgroundColor") == STALL_RED
    reader = page.locator('tr.pointer[data-pointer="reader"]')
    assert reader.evaluate("e => getComputedStyle(e).backgroundColor") != STALL_RED
    expect(page.locator("#buckets")).to_contain_text("reader")
    # The markup in a message is shown as text, never run.
    expect(page.locator("#messages")).to_contain_text(XSS_BODY)
    assert page.title() != "owned"
    site.offline.shot(f"queue-pointers-{store}")

    page.goto(site.queue_url(t.dlq))
    expect(page.locator("#dlq")).to_be_visible()
    expect(page.locator("#messages")).to_contain_text("first, to be dead-lettered")
    site.offline.shot(f"dlq-{store}")
    page.locator("#redrive").click()
    expect(page.locator("#redrive-status")).to_contain_text("moved")
    task = page.url.split("task=")[1]
    _until_redriven(site, task)
    page.reload()
    expect(page.locator("#redrive-status")).to_contain_text("completed, moved 1 of 1")
    expect(page.get_by_text("No messages left")).to_be_visible()
    site.offline.shot(f"dlq-redriven-{store}")
    back = site.http.get(f"/api/v2/accounts/{t.account}/queues/{t.work}/statistics",
                         headers=t.key).json()  # fmt: skip
    assert back["size"] == 8  # the 7 left there, and the one moved back
    assert site.offline.blocked == []


def _until_redriven(site: Site, task: str) -> None:
    """The redrive runs on the server's event loop, in its thread: poll its status (a
    bounded wait on a condition, not a pause)."""
    url = f"/api/v2/accounts/{site.tenant.account}/queues/{site.tenant.dlq}/redrive/{task}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = site.http.get(url, headers=site.tenant.key).json()
        if status["status"] != "running":
            assert status["status"] == "completed", status
            return
        time.sleep(0.05)
    raise AssertionError(f"redrive {task} still running after 60 s")
