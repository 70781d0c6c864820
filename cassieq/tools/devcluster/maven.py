"""Fetch jars from Maven Central with ``mvn``, once, into a verified cache directory.

Used for the local Cassandra node and for the Spark Cassandra connector. A fetched
directory holds ``lib/*.jar`` and ``MANIFEST.sha256``; the manifest is checked on every
use, and a half-fetched tree never looks fetched (it is renamed into place at the end).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

Log = Callable[[str], None]


def cassieq_home() -> Path:
    """Where fetched jars and local nodes live: ``$CASSIEQ_HOME``, default ~/.cache/cassieq."""
    return Path(os.environ.get("CASSIEQ_HOME", str(Path.home() / ".cache" / "cassieq")))


class MavenError(RuntimeError):
    """mvn is missing, or could not fetch the artifacts, or a cached jar is corrupt."""


@dataclass(frozen=True)
class Artifact:
    group: str
    artifact: str
    version: str

    def __str__(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"


def ensure_fetched(
    artifacts: Sequence[Artifact],
    dest: Path,
    *,
    exclude: Sequence[str] = (),
    log: Log | None = None,
) -> list[Path]:
    """The jars of ``artifacts`` and their runtime dependencies, fetched into ``dest``
    on first use (leaving out the artifact ids in ``exclude``); verified every time."""
    lib, manifest = dest / "lib", dest / "MANIFEST.sha256"
    if manifest.exists():
        return verify_manifest(manifest, lib)
    say = log or (lambda _: None)
    say(f"fetching {', '.join(map(str, artifacts))} and dependencies with mvn ...")
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="fetch-", dir=dest.parent))
    try:
        copy_dependencies(artifacts, staging / "lib", staging, exclude=exclude)
        jars = sorted((staging / "lib").glob("*.jar"))
        for a in artifacts:
            if not any(j.name == f"{a.artifact}-{a.version}.jar" for j in jars):
                raise MavenError(f"mvn did not produce {a.artifact}-{a.version}.jar")
        (staging / "MANIFEST.sha256").write_text("".join(f"{sha256(j)}  {j.name}\n" for j in jars))
        (staging / "pom.xml").unlink(missing_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)  # the commit point
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    say(f"fetched {len(jars)} jars into {dest}")
    return [lib / j.name for j in jars]  # just hashed into the manifest


def copy_dependencies(
    artifacts: Sequence[Artifact], out: Path, workdir: Path, *, exclude: Sequence[str] = ()
) -> None:
    """``mvn dependency:copy-dependencies`` of a throwaway pom naming ``artifacts``."""
    if shutil.which("mvn") is None:
        raise MavenError("mvn is not on PATH; install Maven (apt-get install maven)")
    pom = workdir / "pom.xml"
    deps = "".join(
        f"<dependency><groupId>{a.group}</groupId><artifactId>{a.artifact}</artifactId>"
        f"<version>{a.version}</version></dependency>"
        for a in artifacts
    )
    pom.write_text(_POM.format(dependencies=deps))
    cmd = [
        "mvn",
        "-B",
        "-q",
        "-f",
        str(pom),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={out}",
        "-DincludeScope=runtime",
    ]
    if exclude:
        cmd.append(f"-DexcludeArtifactIds={','.join(exclude)}")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise MavenError(f"mvn could not fetch {', '.join(map(str, artifacts))}:\n{tail}")


_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>cassieq.tools.devcluster</groupId><artifactId>fetch</artifactId>
  <version>1</version><packaging>pom</packaging>
  <dependencies>{dependencies}</dependencies>
</project>
"""


def verify_manifest(manifest: Path, lib: Path) -> list[Path]:
    jars = []
    for line in manifest.read_text().splitlines():
        digest, name = line.split("  ", 1)
        jar = lib / name
        if not jar.exists() or sha256(jar) != digest:
            raise MavenError(
                f"{jar} is missing or corrupt; delete {manifest.parent} and fetch again"
            )
        jars.append(jar)
    return jars


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
