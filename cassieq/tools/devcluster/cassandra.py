"""Fetch, start, stop and inspect a local Apache Cassandra node.

One code path serves the single dev node (``cassieq cassandra start``) and each node of the
local three-node cluster (``cassieq/tools/devcluster/cluster.py``): a node is a ``NodeConfig``.

Apache Cassandra 5.0 is not published on Maven Central as a binary tarball
(``org.apache.cassandra:apache-cassandra`` stops at 4.0-alpha2), so the node is
assembled from ``org.apache.cassandra:cassandra-all`` and its runtime
dependencies, fetched with ``mvn dependency:copy-dependencies`` and started as
``CassandraDaemon`` with the project's own ``cassandra.yaml``.

Everything lives outside the repository, under ``$CASSIEQ_HOME`` (default
``~/.cache/cassieq``):

    cassandra/<version>/lib/*.jar       the node's classpath (fetched once)
    cassandra/<version>/MANIFEST.sha256  digests checked before every start
    node-<port>/conf  data  logs  cassandra.pid            the single node
    cluster-<host>-<port>/...                             each cluster node
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from cassieq.tools.devcluster import maven

DEFAULT_VERSION = "5.0.9"  # newest 5.0 patch on Maven Central on 2026-11-21
VERSION_RANGE_LATEST = "[5.0.0,5.0.99999]"
MAIN_CLASS = "org.apache.cassandra.service.CassandraDaemon"
START_TIMEOUT_S = 180.0
_Log = maven.Log
STOP_TIMEOUT_S = 60.0

# Copied in spirit from Cassandra's conf/jvm17-server.options: JPMS openings the
# daemon needs on Java 17, without which it fails at start-up reflecting into
# java.base.
JVM17_OPTIONS = (
    "-XX:+UseG1GC",
    "-XX:+ParallelRefProcEnabled",
    "-XX:MaxTenuringThreshold=1",
    "-XX:G1RSetUpdatingPauseTimePercent=5",
    "-XX:MaxGCPauseMillis=300",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.attach.allowAttachSelf=true",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports=java.sql/java.sql=ALL-UNNAMED",
    "--add-exports=java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-exports=jdk.attach/sun.tools.attach=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dio.netty.allocator.useCacheForAllThreads=true",
    "-Dio.netty.allocator.maxOrder=11",
)

# A single node has nobody to gossip with: do not wait for the ring to settle.
SINGLE_NODE_OPTIONS = (
    "-Dcassandra.skip_wait_for_gossip_to_settle=0",
    "-Dcassandra.ring_delay_ms=0",
    "-Dcassandra.load_ring_state=false",
    "-Dcassandra.superuser_setup_delay_ms=0",
    "-Dcassandra.migration_task_wait_in_seconds=0",
)
SINGLE_NODE_CLUSTER_NAME = "cassieq-local"


class CassandraToolError(RuntimeError):
    """The local node could not be fetched, started or stopped."""


@dataclass(frozen=True)
class NodeConfig:
    """Where and how the local node runs."""

    version: str = DEFAULT_VERSION
    host: str = "127.0.0.1"
    native_port: int = 9042
    storage_port: int = 7000
    heap: str = "1G"
    home: Path = Path.home() / ".cache" / "cassieq"
    # What a node of a ring needs on top (cassieq/tools/devcluster/cluster.py fills these in);
    # the defaults give the single node exactly its configuration of before.
    seeds: tuple[str, ...] = ()  # "host:storage_port" of every seed; empty: itself alone
    cluster_name: str = SINGLE_NODE_CLUSTER_NAME
    dir_name: str = ""  # empty: node-<native_port>
    startup_options: tuple[str, ...] = SINGLE_NODE_OPTIONS
    # The address peers reach this node at, when not its own (the delayed cluster's proxy,
    # cassieq/tools/devcluster/delay.py); empty: the yaml leaves broadcast_address unset.
    broadcast_host: str = ""

    @classmethod
    def from_env(cls, **overrides: object) -> NodeConfig:
        env = os.environ
        values: dict[str, object] = {
            "version": env.get("CASSIEQ_CASSANDRA_VERSION", DEFAULT_VERSION),
            "native_port": int(env.get("CASSIEQ_CASSANDRA_PORT", "9042")),
            "storage_port": int(env.get("CASSIEQ_CASSANDRA_STORAGE_PORT", "7000")),
            "heap": env.get("CASSIEQ_CASSANDRA_HEAP", "1G"),
            "home": maven.cassieq_home(),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]

    @property
    def dist_dir(self) -> Path:
        return self.home / "cassandra" / self.version

    @property
    def node_dir(self) -> Path:
        return self.home / (self.dir_name or f"node-{self.native_port}")

    @property
    def storage_address(self) -> str:
        """How gossip names this node ("host:storage_port", the advertised host)."""
        return f"{self.broadcast_host or self.host}:{self.storage_port}"

    @property
    def pid_file(self) -> Path:
        return self.node_dir / "cassandra.pid"

    @property
    def log_file(self) -> Path:
        return self.node_dir / "logs" / "system.log"

    @property
    def stdout_file(self) -> Path:
        return self.node_dir / "logs" / "stdout.log"


@dataclass(frozen=True)
class NodeStatus:
    running: bool
    pid: int | None
    version: str | None
    reachable: bool
    owned: bool  # started by this tool (pid file points at a live CassandraDaemon)


# --------------------------------------------------------------------------- fetch


def _cassandra_all(version: str) -> maven.Artifact:
    return maven.Artifact("org.apache.cassandra", "cassandra-all", version)


def resolve_latest_version(home: Path) -> str:
    """Ask Maven Central (through mvn) for the newest 5.0.x of cassandra-all."""
    with tempfile.TemporaryDirectory(dir=_ensure(home)) as tmp:
        out = Path(tmp) / "lib"
        try:
            maven.copy_dependencies([_cassandra_all(VERSION_RANGE_LATEST)], out, Path(tmp))
        except maven.MavenError as exc:
            raise CassandraToolError(str(exc)) from exc
        for jar in out.glob("cassandra-all-*.jar"):
            return jar.name.removeprefix("cassandra-all-").removesuffix(".jar")
    raise CassandraToolError("mvn resolved no cassandra-all 5.0.x artifact")


def ensure_distribution(cfg: NodeConfig, *, log: _Log | None = None) -> Path:
    """Fetch cassandra-all and its dependencies once, then verify them on every use."""
    try:
        maven.ensure_fetched([_cassandra_all(cfg.version)], cfg.dist_dir, log=log)
    except maven.MavenError as exc:
        raise CassandraToolError(str(exc)) from exc
    return cfg.dist_dir / "lib"


# --------------------------------------------------------------------------- configure


# The package whose conf/ holds the node templates.
_CONF_PACKAGE = "cassieq.tools.devcluster"


def render_yaml(cfg: NodeConfig) -> str:
    """The node's cassandra.yaml: the project's template filled in for this node."""
    template = resources.files(_CONF_PACKAGE).joinpath("conf/cassandra.yaml").read_text()
    if cfg.broadcast_host:
        # Appended, not templated: a node without one renders exactly as before.
        template += "\n# Peers reach this node through its proxy.\n"
        template += f"broadcast_address: {cfg.broadcast_host}\n"
    return template.format(
        cluster_name=cfg.cluster_name,
        seeds=",".join(cfg.seeds) or cfg.storage_address,
        host=cfg.host,
        native_port=cfg.native_port,
        storage_port=cfg.storage_port,
        data=cfg.node_dir / "data",
    )


def write_node_conf(cfg: NodeConfig) -> Path:
    conf = _ensure(cfg.node_dir / "conf")
    data = cfg.node_dir / "data"
    for sub in ("data", "commitlog", "saved_caches", "hints", "cdc_raw"):
        _ensure(data / sub)
    _ensure(cfg.node_dir / "logs")
    (conf / "cassandra.yaml").write_text(render_yaml(cfg))
    logback = resources.files(_CONF_PACKAGE).joinpath("conf/logback.xml").read_text()
    (conf / "logback.xml").write_text(logback.replace("@LOG_FILE@", str(cfg.log_file)))
    return conf


# --------------------------------------------------------------------------- run


def _silent(_: str) -> None:
    return None


def start(cfg: NodeConfig, *, log: _Log | None = None, timeout: float = START_TIMEOUT_S) -> float:
    """Start the node unless it already runs; return the seconds it took to become ready."""
    say = log or _silent
    status = node_status(cfg)
    if status.owned and status.running:
        wait_until_ready(cfg, pid=status.pid, timeout=timeout)
        say(f"reusing the running node (pid {status.pid}) on {cfg.host}:{cfg.native_port}")
        return 0.0
    if port_open(cfg.host, cfg.native_port) and not status.owned:
        # Someone else's Cassandra (or another program) holds the port: use it as it is,
        # never touch a process this tool did not start.
        say(f"a server already answers on {cfg.host}:{cfg.native_port}; using it")
        return 0.0
    began = time.monotonic()
    pid = launch(cfg, log=say)
    wait_until_ready(cfg, pid=pid, timeout=timeout)
    return time.monotonic() - began


def launch(cfg: NodeConfig, *, log: _Log | None = None) -> int:
    """Spawn the node's JVM (detached) and write its pid file; do not wait. Return the pid."""
    say = log or _silent
    if shutil.which("java") is None:
        raise CassandraToolError("java is not on PATH; Cassandra 5.0 needs a JDK 11 or 17")
    lib = ensure_distribution(cfg, log=say)
    conf = write_node_conf(cfg)
    cmd = [
        "java",
        f"-Xms{cfg.heap}",
        f"-Xmx{cfg.heap}",
        *JVM17_OPTIONS,
        *cfg.startup_options,
        f"-Dcassandra.config=file://{conf / 'cassandra.yaml'}",
        f"-Dlogback.configurationFile={conf / 'logback.xml'}",
        f"-Dcassandra.logdir={cfg.node_dir / 'logs'}",
        f"-Dcassandra.storagedir={cfg.node_dir / 'data'}",
        "-Dcassandra-foreground=yes",
        "-cp",
        f"{conf}:{lib}/*",
        MAIN_CLASS,
    ]
    with cfg.stdout_file.open("ab") as out:
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=cfg.node_dir,
            start_new_session=True,  # survives the shell that started it
        )
    cfg.pid_file.write_text(f"{proc.pid}\n")
    say(f"starting Apache Cassandra {cfg.version} (pid {proc.pid}), logs in {cfg.log_file}")
    return proc.pid


def wait_until_ready(cfg: NodeConfig, *, pid: int | None, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pid is not None and not pid_alive(pid):
            raise CassandraToolError(
                f"Cassandra (pid {pid}) exited during start-up.\n{log_tail(cfg)}"
            )
        if serves_cql(cfg):
            return
        time.sleep(0.5)
    raise CassandraToolError(
        f"Cassandra did not accept CQL on {cfg.host}:{cfg.native_port} within {timeout:.0f} s.\n"
        f"{log_tail(cfg)}"
    )


def serves_cql(cfg: NodeConfig) -> bool:
    """The node answers a CQL query now (an open port alone is not enough)."""
    return port_open(cfg.host, cfg.native_port) and query_version(cfg) is not None


def stop(cfg: NodeConfig, *, log: _Log | None = None, timeout: float = STOP_TIMEOUT_S) -> bool:
    """Stop the node this tool started (by its pid). Return False when none was running."""
    say = log or _silent
    pid = send_stop(cfg)
    if pid is None:
        say("no Cassandra started by cassieq is running")
        return False
    wait_stopped(cfg, pid, log=say, timeout=timeout)
    say(f"stopped Cassandra (pid {pid})")
    return True


def send_stop(cfg: NodeConfig) -> int | None:
    """SIGTERM the node this tool started, without waiting; its pid, or None if none runs."""
    pid = owned_pid(cfg)
    if pid is None:
        cfg.pid_file.unlink(missing_ok=True)
        return None
    os.kill(pid, signal.SIGTERM)
    return pid


def wait_stopped(
    cfg: NodeConfig, pid: int, *, log: _Log | None = None, timeout: float = STOP_TIMEOUT_S
) -> None:
    """Wait for a SIGTERMed node to exit; SIGKILL it when it takes longer than ``timeout``."""
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if pid_alive(pid):
        (log or _silent)(f"pid {pid} ignored SIGTERM for {timeout:.0f} s; sending SIGKILL")
        os.kill(pid, signal.SIGKILL)
        _wait_gone(pid)
    cfg.pid_file.unlink(missing_ok=True)


def kill(cfg: NodeConfig) -> int:
    """SIGKILL the node this tool started (a crash, not a shutdown); return its pid."""
    pid = owned_pid(cfg)
    if pid is None:
        raise CassandraToolError(
            f"no Cassandra started by cassieq runs on {cfg.host}:{cfg.native_port} "
            f"(no live CassandraDaemon in {cfg.pid_file})"
        )
    os.kill(pid, signal.SIGKILL)
    _wait_gone(pid)
    cfg.pid_file.unlink(missing_ok=True)
    return pid


def _wait_gone(pid: int) -> None:
    # SIGKILL cannot be ignored: the process is gone (or a zombie) within moments.
    while pid_alive(pid):
        time.sleep(0.05)


def node_status(cfg: NodeConfig) -> NodeStatus:
    pid = owned_pid(cfg)
    reachable = port_open(cfg.host, cfg.native_port)
    version = query_version(cfg) if reachable else None
    return NodeStatus(
        running=pid is not None or reachable,
        pid=pid,
        version=version,
        reachable=reachable,
        owned=pid is not None,
    )


def query_version(cfg: NodeConfig) -> str | None:
    """The node's release_version over CQL, or None when it does not answer yet.

    Asked of this node alone: a driver session would otherwise also connect to every peer
    it learns about, which says nothing about this node and costs a cluster node's start.
    """
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import WhiteListRoundRobinPolicy

    from cassieq.store.cassandra import server_version

    profile = ExecutionProfile(
        load_balancing_policy=WhiteListRoundRobinPolicy([cfg.host]), request_timeout=5.0
    )
    cluster = Cluster(
        [cfg.host],
        port=cfg.native_port,
        protocol_version=5,
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        connect_timeout=3.0,
        control_connection_timeout=3.0,
        schema_metadata_enabled=False,
        token_metadata_enabled=False,
    )
    try:
        return server_version(cluster.connect())
    except Exception:  # refused, or a node still starting refuses queries: not ready yet
        return None
    finally:
        cluster.shutdown()


def log_tail(cfg: NodeConfig, lines: int = 40) -> str:
    chunks = []
    for path in (cfg.log_file, cfg.stdout_file):
        if path.exists():
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            chunks.append(f"--- last {len(tail)} lines of {path} ---\n" + "\n".join(tail))
    return "\n".join(chunks) or "(no log written)"


def owned_pid(cfg: NodeConfig) -> int | None:
    """The pid in our pid file, if it is alive and really is our CassandraDaemon."""
    try:
        pid = int(cfg.pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return None
    # Pids are recycled: only a process running our daemon on our node dir is ours.
    # (The trailing "/" keeps node-9042 from matching node-90421.)
    if MAIN_CLASS in cmdline and f"{cfg.node_dir}/" in cmdline:
        return pid
    return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours still "exists" to kill(0), and a SIGKILLed JVM's main thread is
    # a zombie while its other threads, which still hold its sockets, are torn down: the
    # process is alive while any of its threads is not a zombie.
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    return any(_thread_state(pid, tid) not in ("Z", "X", "") for tid in tids)


def _thread_state(pid: int, tid: str) -> str:
    try:
        return Path(f"/proc/{pid}/task/{tid}/stat").read_text().split(") ", 1)[1][0]
    except (OSError, IndexError):
        return ""  # gone meanwhile


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
