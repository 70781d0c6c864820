"""The FIFO guide's curl session (docs/snippets/fifo-v2.sh, included by docs/guides/fifo.md)
run as written against a served app, on each store: every answer the session's comments
show in full (`# -> ...` without an ellipsis) is the line the session printed."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import httpx

from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.store.base import Store
from tests.api.live import served

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "docs" / "snippets" / "fifo-v2.sh"
DOC_BASE = "http://127.0.0.1:8080/api/v2/accounts/dev"
TOKEN = "fifo-docs-operator-token"


def _shown(session: str) -> list[str]:
    """The answers the comments show whole, in order."""
    prefix = "# -> "
    answers = [line[len(prefix) :] for line in session.splitlines() if line.startswith(prefix)]
    return [a for a in answers if "..." not in a and not a.endswith(",")]


def test_the_fifo_session_runs_as_written(store: Store, tmp_path: Path) -> None:
    assert shutil.which("curl") and shutil.which("jq"), "the session needs curl and jq"
    session = SESSION.read_text()
    app = create_app(Settings(admin_token=TOKEN), store, background=False)
    with served(app) as port:
        url = f"http://127.0.0.1:{port}"
        account = f"fifodoc-{uuid.uuid4().hex[:10]}"  # the Cassandra keyspace is shared
        created = httpx.post(
            f"{url}/api/v1/accounts",
            json=account,
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=30,
        )
        assert created.status_code == 201, created.text
        key = created.json()["keys"]["primary"]
        code = f"KEY={key}\n" + session.replace(DOC_BASE, f"{url}/api/v2/accounts/{account}")
        ran = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", code],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )
    assert ran.returncode == 0, ran.stderr
    printed = ran.stdout.splitlines()
    assert len(printed) == 6, ran.stdout
    first_send = printed[1]
    assert first_send.count('"duplicate":false') == 3, first_send
    # Every answer shown whole, in order, among the lines printed.
    rest = iter(printed)
    for answer in _shown(session):
        assert answer in rest, f"{answer!r} not printed (in order):\n{ran.stdout}"
