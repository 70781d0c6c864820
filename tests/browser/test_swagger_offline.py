"""Swagger UI and ReDoc render with no network, and Swagger's "Authorize" + "Try it out"
sends an account key to a v1 route and shows its 200."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.engine import FakeClock
from cassieq.store.memory import MemoryStore
from tests.api.live import served
from tests.browser.conftest import OfflinePage, offline_page

TOKEN = "browser-operator-token-" + "z" * 20


@pytest.fixture
def site(browser: Browser, tmp_path: Path) -> Iterator[tuple[OfflinePage, httpx.Client]]:
    app = create_app(Settings(admin_token=TOKEN), MemoryStore(), clock=FakeClock(),
                     background=False)  # fmt: skip
    with served(app) as port, httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
        yield from ((p, http) for p in offline_page(browser, str(http.base_url), tmp_path))


def test_swagger_ui_renders_offline_and_try_it_out_sends_the_key(
    site: tuple[OfflinePage, httpx.Client],
) -> None:
    offline, http = site
    admin = {"Authorization": f"Bearer {TOKEN}"}
    key = http.post("/api/v1/accounts", json="swagger", headers=admin).json()["keys"]["primary"]
    made = http.post("/api/v1/accounts/swagger/queues", json={"queueName": "jobs"},
                     headers={"Authorization": f"Key {key}"})  # fmt: skip
    assert made.status_code == 201
    page = offline.page
    page.goto("/schema/swagger")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("cassieq")
    page.locator("button.authorize").first.click()
    scheme_name = page.locator("h4 code", has_text=re.compile(r"^Key$"))
    key_form = page.locator(".auth-container").filter(has=scheme_name)
    key_form.locator("input").fill(f"Key {key}")
    key_form.locator("button.authorize").click()
    expect(key_form.locator("h6")).to_have_text("Authorized")
    key_form.locator("button.btn-done").click()
    operation = page.locator("#operations-queues-getQueue")
    operation.locator(".opblock-summary").click()
    operation.get_by_role("button", name="Try it out").click()
    operation.locator('tr[data-param-name="account"] input').fill("swagger")
    operation.locator('tr[data-param-name="queue"] input').fill("jobs")
    operation.get_by_role("button", name="Execute").click()
    live = operation.locator(".live-responses-table .response .response-col_status")
    expect(live.first).to_have_text("200")
    expect(operation.locator(".live-responses-table .microlight").first).to_contain_text(
        '"queueName": "jobs"'
    )
    operation.scroll_into_view_if_needed()
    offline.shot("swagger-try-it-out", full_page=False)
    assert offline.blocked == []


def test_redoc_renders_offline(site: tuple[OfflinePage, httpx.Client]) -> None:
    offline, _ = site
    offline.page.goto("/schema/redoc")
    expect(offline.page.locator("h1").first).to_contain_text("cassieq")
    expect(offline.page.get_by_role("heading", name="Show a queue").first).to_be_visible()
    offline.shot("redoc", full_page=False)
    assert offline.blocked == []
