from __future__ import annotations

import re
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


CONFIGURATION_PAGE = Path(__file__).resolve().parents[2] / "docs/operations/configuration.md"
# A row of the page's table: | `CASSIEQ_NAME` | default | meaning |
TABLE_ROW = re.compile(r"^\| `CASSIEQ_([A-Z0-9_]+)` \| (.*?) \| .* \|$", re.MULTILINE)


def _documented_default(value: object) -> str:
    """A setting's default as the table writes it when it writes it in `code`."""
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def test_the_configuration_page_has_a_row_for_every_setting_and_no_other() -> None:
    rows = {
        name.lower(): default for name, default in TABLE_ROW.findall(CONFIGURATION_PAGE.read_text())
    }
    fields = set(Settings.__struct_fields__)
    assert sorted(fields - rows.keys()) == [], "settings without a row"
    assert sorted(rows.keys() - fields) == [], "rows without a setting"
    defaults = Settings()
    wrong = {
        name: (written, _documented_default(getattr(defaults, name)))
        for name, written in rows.items()
        # A default written as one code span is the value; prose (unset, none: ...) is not.
        if re.fullmatch(r"`[^`]*`", written)
        and written.strip("`") != _documented_default(getattr(defaults, name))
    }
    assert wrong == {}, "defaults (written, actual) that differ from the settings object"
