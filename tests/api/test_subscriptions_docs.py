"""The subscriptions guide's snippets (docs/guides/subscriptions.md includes them as they
are) run as written against a served app, on each store: the v2 curl sessions (ordered,
shared) and the CLI session; every answer their comments show (`# -> ...`) is a line they
printed, in order."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.store.base import Store
from tests.api.live import served

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "docs" / "snippets"
DOC_BASE = "http://127.0.0.1:8080/api/v2/accounts/dev"
TOKEN = "subscriptions-docs-operator-token"


@dataclass(frozen=True)
class Served:
    url: str
    account: str
    key: str


@pytest.fixture
def served_app(store: Store) -> Iterator[Served]:
    assert shutil.which("curl") and shutil.which("jq"), "the sessions need curl and jq"
    app = create_app(Settings(admin_token=TOKEN), store, background=False)
    with served(app) as port:
        url = f"http://127.0.0.1:{port}"
        account = f"subdoc-{uuid.uuid4().hex[:10]}"  # the Cassandra keyspace is shared
        created = httpx.post(
            f"{url}/api/v1/accounts",
            json=account,
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=30,
        )
        assert created.status_code == 201, created.text
        yield Served(url, account, created.json()["keys"]["primary"])


def _run(code: str, tmp_path: Path, env: dict[str, str]) -> list[str]:
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.splitlines()


def _check_shown(session: str, printed: list[str]) -> None:
    prefix = "# -> "
    shown = [line[len(prefix) :] for line in session.splitlines() if line.startswith(prefix)]
    assert shown, "the session shows no answer"
    rest = iter(printed)
    for answer in shown:
        assert answer in rest, f"{answer!r} not printed (in order):\n" + "\n".join(printed)


def test_the_curl_session_runs_as_written(served_app: Served, tmp_path: Path) -> None:
    session = (SNIPPETS / "subscriptions-v2.sh").read_text()
    base = f"{served_app.url}/api/v2/accounts/{served_app.account}"
    code = f"KEY={served_app.key}\n" + session.replace(DOC_BASE, base)
    printed = _run(code, tmp_path, dict(os.environ))
    _check_shown(session, printed)
    assert len(printed) == len([x for x in session.splitlines() if x.startswith("# -> ")])


def test_the_shared_curl_session_runs_as_written(served_app: Served, tmp_path: Path) -> None:
    session = (SNIPPETS / "subscriptions-shared-v2.sh").read_text()
    base = f"{served_app.url}/api/v2/accounts/{served_app.account}"
    code = f"KEY={served_app.key}\n" + session.replace(DOC_BASE, base)
    printed = _run(code, tmp_path, dict(os.environ))
    _check_shown(session, printed)
    assert len(printed) == len([x for x in session.splitlines() if x.startswith("# -> ")])


def test_the_cli_session_runs_as_written(served_app: Served, tmp_path: Path) -> None:
    session = (SNIPPETS / "subscriptions-cli.sh").read_text()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSIEQ_")}
    env.update(
        PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}",
        CASSIEQ_URL=served_app.url,
        CASSIEQ_ACCOUNT=served_app.account,
        CASSIEQ_KEY=served_app.key,
    )
    printed = _run(session, tmp_path, env)
    _check_shown(session, printed)
