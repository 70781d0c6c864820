from __future__ import annotations

from pathlib import Path

import pytest

from cassieq.config import Settings
from cassieq.store.cassandra import SchemaError, load_migrations, split_statements


def test_settings_come_from_env_and_flags_win() -> None:
    env = {"CASSIEQ_CASSANDRA_HOSTS": "10.0.0.1, 10.0.0.2", "CASSIEQ_PORT": "9000"}
    s = Settings.from_env(env, port=9100)
    assert s.cassandra_hosts == ("10.0.0.1", "10.0.0.2")
    assert s.port == 9100
    assert Settings.from_env(env).port == 9000


def test_a_bad_setting_names_the_field() -> None:
    with pytest.raises(ValueError, match="port"):
        Settings.from_env({"CASSIEQ_PORT": "eighty"})


def test_statements_split_on_line_ending_semicolons_and_skip_comments() -> None:
    text = (
        "-- a comment; not a statement\n"
        "CREATE TABLE a (k int PRIMARY KEY);\n\n"
        "CREATE TABLE b (\n k int PRIMARY KEY\n);\n"
    )
    assert split_statements(text) == [
        "CREATE TABLE a (k int PRIMARY KEY)",
        "CREATE TABLE b (\n k int PRIMARY KEY\n)",
    ]


def test_an_unterminated_statement_is_an_error() -> None:
    with pytest.raises(SchemaError):
        split_statements("CREATE TABLE a (k int PRIMARY KEY)")


def test_schema_files_must_be_numbered(tmp_path: Path) -> None:
    (tmp_path / "init.cql").write_text("CREATE TABLE a (k int PRIMARY KEY);\n")
    with pytest.raises(SchemaError, match="NNNN"):
        load_migrations(tmp_path)


def test_project_schema_files_load_in_order() -> None:
    migrations = load_migrations(Path(__file__).resolve().parents[2] / "schema" / "cassandra")
    numbers = [m.number for m in migrations]
    assert numbers == sorted(numbers) and numbers[0] == 1


def test_every_setting_has_a_row_in_the_readme_configuration_table() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    missing = [
        f"CASSIEQ_{name.upper()}"
        for name in Settings.__struct_fields__
        if f"| `CASSIEQ_{name.upper()}` |" not in readme
    ]
    assert missing == []
