"""Browser tests: Playwright for Python driving the system's Chromium (Debian's `chromium`,
installed by `make test`; Playwright's own browser downloads are never used).

Every page is loaded with the network cut off: the browser's proxy is a closed local port
and only 127.0.0.1 bypasses it, so a request to any other host fails; each such request
is recorded, and the tests assert there was none. (Not page.route interception: routing
every request through Python made loading Swagger's 1.5 MB bundle take tens of seconds.)
Screenshots go to the test's tmp dir and are copied to artifacts/console/ (git-ignored).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, Request, expect, sync_playwright

from cassieq.tools.bench.servers import free_port

# Bounds on waits for the page, not pauses: on a loaded 2-core machine Chromium took 25 s to
# run Swagger UI's bundle (30 s is Playwright's default).
TIMEOUT_MS = 120_000
expect.set_options(timeout=TIMEOUT_MS)

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "console"


def chromium_path() -> str:
    found = os.environ.get("CASSIEQ_CHROMIUM") or shutil.which("chromium")
    if not found:
        pytest.fail(
            "browser tests need Debian's chromium (`apt-get install chromium`, done by "
            "`make test`), or CASSIEQ_CHROMIUM naming a Chromium executable",
            pytrace=False,
        )
    return found


def closed_port() -> int:
    """A local port nothing listens on (the dead proxy)."""
    return free_port()


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    # Package scope, not session: while sync_playwright is open its event loop counts as
    # running in this thread, and every async test after it failed ("Runner.run() cannot
    # be called from a running event loop"). Closed after the browser tests, it is gone.
    with sync_playwright() as p:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        launched = p.chromium.launch(
            executable_path=chromium_path(),
            args=["--no-sandbox"],
            proxy={"server": f"http://127.0.0.1:{closed_port()}", "bypass": "127.0.0.1"},
        )
        yield launched
        launched.close()


@dataclass
class OfflinePage:
    page: Page
    blocked: list[str] = field(default_factory=list)
    screenshots: Path = Path()

    def shot(self, name: str, full_page: bool = True) -> Path:
        path = self.screenshots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, ARTIFACTS / path.name)
        return path


def offline_page(browser: Browser, base_url: str, tmp_path: Path) -> Iterator[OfflinePage]:
    allowed = urlsplit(base_url).netloc
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    holder = OfflinePage(context.new_page(), screenshots=tmp_path)

    def record(request: Request) -> None:
        url = request.url
        if urlsplit(url).netloc != allowed and not url.startswith(("data:", "blob:")):
            holder.blocked.append(url)

    holder.page.on("request", record)
    try:
        yield holder
    finally:
        context.close()
