"""Swagger UI's "Try it out" with the document's examples (#39 item 4), as a newcomer does it
on `cassieq dev`: the v1 create fills in the example body (it made one up before: a
``dlqName`` naming no queue, 422), which is created (201); the v1 put offers a text box
holding the example message (it offered only a file picker: ``format: binary``), which is
stored (201); the v2 send's example is sent (201). tests/api/test_openapi_examples.py sends
every example without a browser."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.engine.clock import SystemClock
from cassieq.store.memory import MemoryStore
from tests.api.live import served
from tests.browser.conftest import OfflinePage, offline_page

TOKEN = "browser-examples-operator-token-" + "x" * 12


@pytest.fixture
def site(browser: Browser, tmp_path: Path) -> Iterator[tuple[OfflinePage, httpx.Client]]:
    app = create_app(Settings(admin_token=TOKEN), MemoryStore(), clock=SystemClock(),
                     background=False)  # fmt: skip
    with served(app) as port, httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
        yield from ((p, http) for p in offline_page(browser, str(http.base_url), tmp_path))


def _authorize(page: Page, key: str) -> None:
    page.locator("button.authorize").first.click()
    scheme_name = page.locator("h4 code", has_text=re.compile(r"^Key$"))
    key_form = page.locator(".auth-container").filter(has=scheme_name)
    key_form.locator("input").fill(f"Key {key}")
    key_form.locator("button.authorize").click()
    expect(key_form.locator("h6")).to_have_text("Authorized")
    key_form.locator("button.btn-done").click()


def _try(page: Page, operation_id: str, **path: str) -> Locator:
    operation = page.locator(f'[id$="-{operation_id}"]').first
    operation.locator(".opblock-summary").click()
    operation.get_by_role("button", name="Try it out").click()
    for name, value in path.items():
        operation.locator(f'tr[data-param-name="{name}"] input').fill(value)
    return operation


def _execute(operation: Locator, status: str) -> None:
    operation.get_by_role("button", name="Execute").click()
    live = operation.locator(".live-responses-table .response .response-col_status")
    expect(live.first).to_have_text(status)


def test_try_it_out_sends_the_examples_and_the_put_is_a_text_box(
    site: tuple[OfflinePage, httpx.Client],
) -> None:
    offline, http = site
    admin = {"Authorization": f"Bearer {TOKEN}"}
    created = http.post("/api/v1/accounts", json="dev", headers=admin)  # as `cassieq dev` does
    assert created.status_code == 201, created.text
    key = created.json()["keys"]["primary"]
    page = offline.page
    page.goto("/schema/swagger")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("cassieq")
    _authorize(page, key)

    create = _try(page, "createQueue", account="dev")
    body = create.locator("textarea.body-param__text")
    expect(body).to_be_visible()
    assert json.loads(body.input_value()) == {
        "queueName": "orders", "bucketSize": 20, "maxDeliveryCount": 5, "strictFifo": False,
    }  # fmt: skip
    _execute(create, "201")

    put = _try(page, "putMessage", account="dev", queue="orders")
    text = put.locator("textarea.body-param__text")
    expect(text).to_have_value("Hello, world")
    assert put.locator('input[type="file"]').count() == 0
    _execute(put, "201")

    send = _try(page, "sendMessages", account="dev", queue="orders")
    assert json.loads(send.locator("textarea.body-param__text").input_value())["messages"]
    _execute(send, "201")
    offline.shot("swagger-examples", full_page=False)

    got = http.get("/api/v1/accounts/dev/queues/orders/messages/next",
                   headers={"Authorization": f"Key {key}"})  # fmt: skip
    assert got.json()["message"] == "Hello, world"
    assert offline.blocked == []
