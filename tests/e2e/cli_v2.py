"""A live server per store for the v2 CLI tests: the app is served in this process
(tests/api/live.py), so a test can look at what the server saw (its replay cache). The
commands run through `python -m cassieq`'s own `main()` in this process (see
tests/cli_process.py), or each in a subprocess of its own (`Live.spawned()`: a test per
group of commands, so that the command as a shell starts it stays tested too)."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar

from cassieq.api.app import create_app
from cassieq.api.state import AppState
from cassieq.config import Settings
from cassieq.store.base import Store
from tests.api.live import served
from tests.cli_process import invoke_cassieq, run_cassieq

TOKEN = "cli-v2-operator-token"


@dataclass
class Live:
    app: Litestar
    url: str
    account: str
    keys: dict[str, str]
    in_a_process: bool = False

    def spawned(self) -> Live:
        """The same server, each command run in a subprocess of its own."""
        return replace(self, in_a_process=True)

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        environment = {
            "CASSIEQ_URL": self.url,
            "CASSIEQ_ACCOUNT": self.account,
            "CASSIEQ_KEY": self.keys["primary"],
            **env,
        }
        if self.in_a_process:
            return run_cassieq(*args, env=environment)
        return invoke_cassieq(*args, env=environment)

    def ok(self, *args: str, **env: str) -> Any:
        result = self.run(*args, "--json", **env)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def v2(self) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.url}/api/v2/accounts/{self.account}/queues",
            headers={"Authorization": f"Key {self.keys['primary']}"},
            timeout=30,
        )

    @property
    def replay_entries(self) -> int:
        state: AppState = self.app.state.cassieq
        return len(state.replay)


@pytest.fixture
def live(store: Store) -> Iterator[Live]:
    app = create_app(Settings(admin_token=TOKEN), store, background=False)
    with served(app) as port:
        url = f"http://127.0.0.1:{port}"
        name = f"cli2-{uuid.uuid4().hex[:10]}"  # the Cassandra keyspace is shared
        admin = {"Authorization": f"Bearer {TOKEN}"}
        created = httpx.post(f"{url}/api/v1/accounts", json=name, headers=admin, timeout=30)
        assert created.status_code == 201, created.text
        running = Live(app, url, name, created.json()["keys"])
        assert running.ok("queue", "create", "jobs")["queueName"] == "jobs"
        yield running


def lines_file(tmp_path: Path, lines: list[str], name: str = "in.txt") -> str:
    path = tmp_path / name
    path.write_text("".join(f"{line}\n" for line in lines))
    return str(path)


def size(live: Live, queue: str = "jobs") -> int:
    found: int = live.ok("stats", queue)["size"]
    return found
