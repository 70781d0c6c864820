from __future__ import annotations

from litestar.testing import TestClient

from cassieq import __version__
from cassieq.api.app import create_app
from cassieq.config import Settings
from cassieq.store.memory import MemoryStore


def test_health_answers_ok() -> None:
    with TestClient(app=create_app(Settings(), MemoryStore(), background=False)) as client:
        response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "version": __version__}
