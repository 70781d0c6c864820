"""The operator token: compared by digest (length-independent), the scheme word in any case,
and `cassieq serve` refuses one (or a receipt secret) too short to be safe."""

from __future__ import annotations

import pytest

from cassieq.auth.access import admin_token_matches
from cassieq.cli.server import MIN_SECRET_LENGTH, secret_length_problem
from cassieq.config import Settings
from tests.cli_process import run_cassieq

TOKEN = "t" * 40


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_the_scheme_word_is_case_insensitive(scheme: str) -> None:
    assert admin_token_matches(f"{scheme} {TOKEN}", TOKEN)
    assert admin_token_matches(f"  {scheme}   {TOKEN}  ", TOKEN)


@pytest.mark.parametrize(
    "header",
    [
        f"Basic {TOKEN}",
        f"Bearer {TOKEN[:-1]}",  # a prefix
        f"Bearer {TOKEN}x",  # longer
        f"Bearer {TOKEN.upper()}",  # the token itself is case-sensitive
        "Bearer t",
        f"Bearer{TOKEN}",
        "",
    ],
)
def test_anything_else_does_not_match(header: str) -> None:
    assert not admin_token_matches(header, TOKEN)


def test_no_configured_token_matches_nothing() -> None:
    assert not admin_token_matches(f"Bearer {TOKEN}", None)
    assert not admin_token_matches("Bearer ", "")


def test_short_secrets_are_named() -> None:
    short = "x" * (MIN_SECRET_LENGTH - 1)
    assert secret_length_problem(Settings(admin_token="x" * MIN_SECRET_LENGTH)) is None
    assert secret_length_problem(Settings()) is None  # no token: operator routes off
    problem = secret_length_problem(Settings(admin_token=short))
    assert problem is not None and "CASSIEQ_ADMIN_TOKEN" in problem and "32" in problem
    problem = secret_length_problem(Settings(admin_token=TOKEN, receipt_secret=short))
    assert problem is not None and "CASSIEQ_RECEIPT_SECRET" in problem


def test_serve_refuses_a_short_operator_token_in_one_line() -> None:
    # Refused before connecting anywhere: the port below has no Cassandra.
    done = run_cassieq("serve", CASSIEQ_ADMIN_TOKEN="sec-admin", CASSIEQ_CASSANDRA_PORT="1")
    assert done.returncode != 0
    assert "CASSIEQ_ADMIN_TOKEN is 9 characters long" in done.stderr
    assert "at least 32" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_refuses_a_bad_key_encryption_key_in_one_line() -> None:
    done = run_cassieq(
        "serve",
        CASSIEQ_ADMIN_TOKEN=TOKEN,
        CASSIEQ_KEY_ENCRYPTION_KEY="too-short",
        CASSIEQ_CASSANDRA_PORT="1",
    )
    assert done.returncode != 0
    assert "CASSIEQ_KEY_ENCRYPTION_KEY must be 32 random bytes" in done.stderr
    assert "Traceback" not in done.stderr
