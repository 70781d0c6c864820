"""api_spec/openapi.json is what the code generates; regenerate with `cassieq openapi`."""

from __future__ import annotations

from pathlib import Path

from cassieq.cli import openapi_document

SPEC = Path(__file__).resolve().parents[2] / "api_spec" / "openapi.json"


def test_committed_openapi_matches_the_code() -> None:
    assert SPEC.exists(), "api_spec/openapi.json is missing: run `cassieq openapi`"
    assert SPEC.read_text() == openapi_document(), (
        "api_spec/openapi.json is stale: run `cassieq openapi` and commit the result"
    )
