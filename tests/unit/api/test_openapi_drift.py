"""api_spec/ is what the code generates: the OpenAPI document, and the client generated from
it. Regenerate both with `cassieq openapi`."""

from __future__ import annotations

from pathlib import Path

from cassieq.cli.server import openapi_document
from cassieq.tools.devcluster.client import stale_files

API_SPEC = Path(__file__).resolve().parents[3] / "api_spec"
SPEC = API_SPEC / "openapi.json"


def test_committed_openapi_matches_the_code() -> None:
    assert SPEC.exists(), "api_spec/openapi.json is missing: run `cassieq openapi`"
    assert SPEC.read_text() == openapi_document(), (
        "api_spec/openapi.json is stale: run `cassieq openapi` and commit the result"
    )


def test_committed_client_matches_the_spec() -> None:
    stale = stale_files(SPEC, API_SPEC / "client")
    assert stale == [], f"api_spec/client is stale ({stale[:5]}): run `cassieq openapi`"
