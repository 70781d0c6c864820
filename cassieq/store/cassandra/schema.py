"""The schema: numbered CQL files applied in order, each recorded with its checksum."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from cassandra.cluster import Session

from cassieq.store.base import SchemaStatus
from cassieq.store.cassandra.session import check_keyspace

_MIGRATION_FILE_RE = re.compile(r"^(\d{4})_[a-z0-9_]+\.cql$")


class SchemaError(RuntimeError):
    """The schema files or the recorded migrations are inconsistent."""


# --------------------------------------------------------------------------- schema


@dataclass(frozen=True)
class Migration:
    number: int
    name: str
    checksum: str
    statements: tuple[str, ...]


def load_migrations(schema_dir: Path) -> list[Migration]:
    migrations = []
    for path in sorted(schema_dir.glob("*.cql")):
        match = _MIGRATION_FILE_RE.match(path.name)
        if not match:
            raise SchemaError(f"{path.name}: schema files are named NNNN_snake_case.cql")
        text = path.read_text()
        migrations.append(
            Migration(
                number=int(match.group(1)),
                name=path.name,
                checksum=hashlib.sha256(text.encode()).hexdigest(),
                statements=tuple(split_statements(text)),
            )
        )
    numbers = [m.number for m in migrations]
    if len(set(numbers)) != len(numbers):
        raise SchemaError(f"two schema files share a number in {schema_dir}")
    return migrations


def split_statements(text: str) -> list[str]:
    """Split a CQL file on ';' ending a line; drop '--' comment lines."""
    lines = [ln for ln in text.splitlines() if not ln.strip().startswith("--")]
    statements, current = [], []
    for line in lines:
        current.append(line)
        if line.rstrip().endswith(";"):
            statement = "\n".join(current).strip().rstrip(";").strip()
            if statement:
                statements.append(statement)
            current = []
    if "\n".join(current).strip():
        raise SchemaError("the last statement of a schema file does not end with ';'")
    return statements


def pending_migrations(applied: dict[int, str], migrations: list[Migration]) -> list[str]:
    """The schema files not (or not as they are now) recorded in the keyspace."""
    return [m.name for m in migrations if applied.get(m.number) != m.checksum]


def apply_schema(session: Session, keyspace: str, replication: str, schema_dir: Path) -> list[str]:
    """Create the keyspace and apply every migration not yet recorded; return those applied.

    Every statement is ``IF NOT EXISTS``-safe, and each file is recorded with its
    checksum once all its statements ran, so a run cut short is simply re-run.
    """
    check_keyspace(keyspace, SchemaError)
    migrations = load_migrations(schema_dir)
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = {replication}")
    session.execute(
        f"CREATE TABLE IF NOT EXISTS {keyspace}.schema_migrations ("
        "number int PRIMARY KEY, name text, checksum text, applied_at timestamp)"
    )
    # On a loaded multi-node cluster the driver's own wait after a DDL statement can end
    # before every node has the change; the next statement, coordinated by a node without
    # it, then fails ("table schema_migrations does not exist"). Each step waits for it.
    _wait_for_schema_agreement(session)
    session.set_keyspace(keyspace)
    done = {
        r.number: r for r in session.execute("SELECT number, name, checksum FROM schema_migrations")
    }
    applied = []
    for m in migrations:
        previous = done.get(m.number)
        if previous is not None:
            if previous.checksum != m.checksum:
                raise SchemaError(
                    f"{m.name} changed after it was applied to keyspace {keyspace}; "
                    "add a new migration instead of editing an applied one"
                )
            continue
        for statement in m.statements:
            session.execute(statement, timeout=60.0)
            _wait_for_schema_agreement(session)
        session.execute(
            "INSERT INTO schema_migrations (number, name, checksum, applied_at) "
            "VALUES (%s, %s, %s, toTimestamp(now()))",
            (m.number, m.name, m.checksum),
        )
        applied.append(m.name)
    _wait_for_schema_agreement(session)
    return applied


def drop_keyspace(session: Session, keyspace: str) -> None:
    check_keyspace(keyspace, SchemaError)
    session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=120)
    _wait_for_schema_agreement(session)


def _wait_for_schema_agreement(session: Session, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not session.cluster.control_connection.wait_for_schema_agreement(wait_time=timeout):
        if time.monotonic() > deadline:
            raise SchemaError("the cluster did not agree on the schema in time")


def default_schema_dir() -> Path:
    """schema/cassandra of the source tree, or $CASSIEQ_SCHEMA_DIR (set in the Docker image)."""
    env = os.environ.get("CASSIEQ_SCHEMA_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "schema" / "cassandra"


@functools.cache
def _expected_migrations(schema_dir: Path) -> tuple[Migration, ...]:
    return tuple(load_migrations(schema_dir))


def schema_status(applied: dict[int, str], schema_dir: Path | None = None) -> SchemaStatus:
    """Compare the schema files recorded as applied with the files this server was built
    with (``schema_dir``: default_schema_dir())."""
    try:
        expected = _expected_migrations(schema_dir or default_schema_dir())
    except SchemaError as exc:
        return SchemaStatus("answers", ok=False, detail=str(exc))
    if not expected:
        # An installed package without its schema files (the image sets the directory).
        detail = "no schema files here to compare with (CASSIEQ_SCHEMA_DIR)"
        return SchemaStatus("answers", ok=True, detail=detail)
    pending = pending_migrations(applied, list(expected))
    if pending:
        detail = f"not applied: {', '.join(pending)} (run `cassieq schema apply`)"
        return SchemaStatus("answers", ok=False, detail=detail)
    return SchemaStatus("answers", ok=True, detail=f"{len(expected)} files applied")
