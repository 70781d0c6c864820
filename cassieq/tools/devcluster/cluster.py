"""A local Apache Cassandra cluster: several nodes on loopback addresses (default three).

Every node is a ``NodeConfig`` of ``cassandra.py`` beside this file and is fetched,
configured, started, stopped and checked by that module's code: the same jars from the same
Maven fetch, the same ``cassandra.yaml`` template, the same pid-file ownership rules. Each
node listens on its own 127.0.0.x address with the same ports (the dev node keeps 127.0.0.1)
and lives in ``$CASSIEQ_HOME/cluster-<host>-<port>/``. No node opens JMX or any other fixed port.

How the ring forms (see the comments of ``CLUSTER_NODE_OPTIONS`` and the yaml template): every
node is a seed, so none bootstraps and all start at once; tokens are random.

How "node X sees node Y UP" is told. No JMX (nodetool) runs, and no CQL table shows the failure
detector's view: ``system_views.gossip_info`` lists gossip states (generation, heartbeat,
STATUS) but not liveness, and the driver's ``Host.is_up`` is the driver's own connection state
(it deliberately ignores a server's DOWN event while it can connect). What does show it is
the gossiper's own record: ``Gossiper.realMarkAlive`` logs "InetAddress /<ip>:<port> is now
UP" once the peer has answered an echo, and ``markDead`` logs "... is now DOWN"; coordinators
consult exactly that state when they count live replicas. So a node's view is the last such
line per peer in its ``logs/system.log`` since its own start, and after a (re)start of Y only
an UP line written after Y was launched counts (an older one predates Y's death).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from cassieq.tools.devcluster import delay, maven
from cassieq.tools.devcluster.cassandra import (
    DEFAULT_VERSION,
    CassandraToolError,
    NodeConfig,
    NodeStatus,
    kill,
    launch,
    node_status,
    owned_pid,
    pid_alive,
    port_open,
    send_stop,
    serves_cql,
    stop,
    wait_stopped,
)

__all__ = [
    "DEFAULT_CLUSTER_HOSTS",
    "CassandraToolError",
    "ClusterConfig",
    "NodeConfig",
    "NodeStatus",
    "cluster_status",
    "gossip_up",
    "kill_node",
    "restart_node",
    "running_variant",
    "start_cluster",
    "stop_cluster",
]

DEFAULT_CLUSTER_HOSTS = ("127.0.0.2", "127.0.0.3", "127.0.0.4")
CLUSTER_NAME = "cassieq-cluster"  # not the dev node's: the two rings can never merge
DELAYED_CLUSTER_NAME = "cassieq-cluster-delayed"  # nor the plain cluster's (its own dirs)
START_TIMEOUT_S = 300.0  # three cold JVMs on two cores
RESTART_TIMEOUT_S = 180.0
_POLL_S = 0.5
_Log = maven.Log

CLUSTER_NODE_OPTIONS = (
    # Cassandra's own wait (at least 5 s, until the live-node count is stable for 3 polls) only
    # delays CQL: start_cluster and restart_node wait for the ring themselves, and stricter
    # (every live node must log every other one UP).
    "-Dcassandra.skip_wait_for_gossip_to_settle=0",
    # For a seed that does not bootstrap the ring delay only bounds the shadow round: how long
    # a starting node waits for any peer to answer before it goes on alone. Nodes that start
    # together find nobody listening yet, so waiting is pure loss; gossip merges them a moment
    # later. (A bootstrapping node would need the delay; none bootstraps here.)
    "-Dcassandra.ring_delay_ms=0",
    # The quarantine and the fat-client timeout are derived from the ring delay (2x, 1x): at 0
    # a peer that gossips before it has announced its tokens would be evicted every second.
    # Keep them at their stock values (60 s, 30 s).
    "-Dcassandra.gossip_quarantine_delay_ms=60000",
    # load_ring_state stays true (unlike the single node): a restarted node then knows its
    # peers' tokens from disk and treats them as down until gossip says otherwise, instead of
    # briefly believing it owns the whole ring.
    # superuser_setup_delay_ms stays at its stock 10 s (the single node uses 0): the default
    # role lives on one node (system_auth has RF 1), and a restarted node that looks for it
    # while its peers still count as down retries after that delay, so at 0 it spins a few
    # hundred failed reads until gossip catches up. No one logs in (AllowAllAuthenticator).
    "-Dcassandra.migration_task_wait_in_seconds=0",
)

# Gossiper.realMarkAlive / markDead; the peer is InetAddressAndPort.toString(), "[name]/ip:port".
_UP_DOWN = re.compile(r"InetAddress \S*/(?P<peer>\S+) is now (?P<state>UP|DOWN)$", re.MULTILINE)
# The first line every CassandraDaemon run writes (YamlConfigurationLoader): a run's start.
_RUN_START = "Configuration location:"


@dataclass(frozen=True)
class ClusterConfig:
    """Where and how the local cluster runs; node ``n`` (1-based) is ``hosts[n - 1]``."""

    hosts: tuple[str, ...] = DEFAULT_CLUSTER_HOSTS
    native_port: int = 9042
    storage_port: int = 7000
    heap: str = "768M"  # 3 JVMs + the dev node on a 2-core / 24 GB machine
    version: str = DEFAULT_VERSION
    home: Path = field(default_factory=maven.cassieq_home)  # the single node's $CASSIEQ_HOME
    datacenter: str = "datacenter1"  # what SimpleSnitch (the yaml's snitch) reports
    # > 0: the delayed cluster (delay.py): peers talk through Toxiproxy, this many ms each
    # way, and the nodes keep their own data dirs ("-delayed"). 0: the plain cluster.
    inter_node_delay_ms: int = 0

    def __post_init__(self) -> None:
        if not self.hosts:
            raise ValueError("a cluster needs at least one host")
        if len(set(self.hosts)) != len(self.hosts):
            raise ValueError(f"cluster hosts repeat: {','.join(self.hosts)}")
        if self.inter_node_delay_ms < 0:
            raise ValueError(f"a negative inter-node delay: {self.inter_node_delay_ms} ms")
        if self.inter_node_delay_ms:
            for host in self.hosts:
                delay.proxy_host(host)  # refuses hosts a loopback proxy cannot stand beside

    @classmethod
    def from_env(cls, **overrides: object) -> ClusterConfig:
        """Defaults, then $CASSIEQ_CLUSTER_HOSTS (comma list), $CASSIEQ_CLUSTER_PORT,
        $CASSIEQ_CLUSTER_STORAGE_PORT, $CASSIEQ_CLUSTER_HEAP (else $CASSIEQ_CASSANDRA_HEAP),
        $CASSIEQ_CASSANDRA_VERSION, $CASSIEQ_HOME, then the overrides that are not None."""
        env = os.environ
        values: dict[str, object] = {"home": maven.cassieq_home()}
        if "CASSIEQ_CLUSTER_HOSTS" in env:
            values["hosts"] = parse_hosts(env["CASSIEQ_CLUSTER_HOSTS"])
        if "CASSIEQ_CLUSTER_PORT" in env:
            values["native_port"] = int(env["CASSIEQ_CLUSTER_PORT"])
        if "CASSIEQ_CLUSTER_STORAGE_PORT" in env:
            values["storage_port"] = int(env["CASSIEQ_CLUSTER_STORAGE_PORT"])
        heap = env.get("CASSIEQ_CLUSTER_HEAP") or env.get("CASSIEQ_CASSANDRA_HEAP")
        if heap:
            values["heap"] = heap
        if "CASSIEQ_CASSANDRA_VERSION" in env:
            values["version"] = env["CASSIEQ_CASSANDRA_VERSION"]
        values.update({k: v for k, v in overrides.items() if v is not None})
        if isinstance(values.get("hosts"), str):
            values["hosts"] = parse_hosts(str(values["hosts"]))
        return cls(**values)  # type: ignore[arg-type]

    @property
    def numbers(self) -> range:
        """The node numbers, 1..len(hosts)."""
        return range(1, len(self.hosts) + 1)

    @property
    def delayed(self) -> bool:
        return self.inter_node_delay_ms > 0

    def advertised(self, host: str) -> str:
        """The address peers reach ``host`` at: its proxy in the delayed cluster."""
        return delay.proxy_host(host) if self.delayed else host

    @property
    def seeds(self) -> tuple[str, ...]:
        return tuple(f"{self.advertised(host)}:{self.storage_port}" for host in self.hosts)

    def toxiproxy(self) -> delay.Toxiproxy:
        return delay.Toxiproxy(self.home)

    def proxies(self) -> list[dict[str, object]]:
        """Toxiproxy's configuration for this cluster (delay.proxies)."""
        return delay.proxies(self.hosts, self.storage_port)

    def variant(self, inter_node_delay_ms: int) -> ClusterConfig:
        return replace(self, inter_node_delay_ms=inter_node_delay_ms)

    def node(self, n: int) -> NodeConfig:
        """Node ``n`` (1-based) as the single-node tool sees it."""
        if n not in self.numbers:
            raise ValueError(f"no node {n}: the cluster has nodes 1..{len(self.hosts)}")
        host = self.hosts[n - 1]
        return NodeConfig(
            version=self.version,
            host=host,
            native_port=self.native_port,
            storage_port=self.storage_port,
            heap=self.heap,
            home=self.home,
            seeds=self.seeds,
            cluster_name=DELAYED_CLUSTER_NAME if self.delayed else CLUSTER_NAME,
            dir_name=f"cluster-{host}-{self.native_port}" + ("-delayed" if self.delayed else ""),
            startup_options=CLUSTER_NODE_OPTIONS,
            broadcast_host=delay.proxy_host(host) if self.delayed else "",
        )

    def replication(self, rf: int = 3) -> str:
        """A CQL replication map for a keyspace on this cluster."""
        return f"{{'class': 'NetworkTopologyStrategy', '{self.datacenter}': {rf}}}"


def default_hosts(nodes: int) -> tuple[str, ...]:
    """127.0.0.2, 127.0.0.3, ...: beside the dev node on 127.0.0.1."""
    if not 1 <= nodes <= 253:
        raise ValueError(f"{nodes} nodes: the loopback defaults allow 1..253")
    return tuple(f"127.0.0.{i}" for i in range(2, nodes + 2))


def from_options(
    nodes: int | None,
    hosts: str | None,
    port: int | None,
    version: str | None = None,
    inter_node_delay_ms: int | None = None,
) -> ClusterConfig | None:
    """The cluster that command-line options name, or None for the single dev node (no
    --hosts and --nodes absent or 1). --nodes N alone takes N default hosts."""
    if hosts is None and nodes in (None, 1):
        if inter_node_delay_ms:
            raise ValueError("--inter-node-delay-ms needs a cluster (--nodes 3)")
        return None
    more = {"native_port": port, "version": version, "inter_node_delay_ms": inter_node_delay_ms}
    cfg = ClusterConfig.from_env(hosts=hosts, **more)
    if nodes is None or nodes == len(cfg.hosts):
        return cfg
    if hosts is None and "CASSIEQ_CLUSTER_HOSTS" not in os.environ:
        return ClusterConfig.from_env(hosts=default_hosts(nodes), **more)
    raise ValueError(f"--nodes {nodes} but {len(cfg.hosts)} hosts: {','.join(cfg.hosts)}")


def parse_hosts(text: str) -> tuple[str, ...]:
    hosts = tuple(h.strip() for h in text.split(",") if h.strip())
    if not hosts:
        raise ValueError(f"no hosts in {text!r}")
    return hosts


# --------------------------------------------------------------------------- commands


def _silent(_: str) -> None:
    return None


def start_cluster(
    cfg: ClusterConfig, *, log: _Log | None = None, timeout: float = START_TIMEOUT_S
) -> float:
    """Start every node that does not run (reusing the ones that do), all at once; wait until
    all serve CQL and each logs every other UP. Return the seconds taken (0.0: all reused)."""
    say = log or _silent
    began = time.monotonic()
    _refuse_the_other_variant(cfg)
    if cfg.delayed:
        # Before any node: a node gossips with its peers through their proxies from the start.
        proxy = cfg.toxiproxy()
        proxy_pid = proxy.start(cfg.proxies(), cfg.inter_node_delay_ms)
        say(f"Toxiproxy (pid {proxy_pid}, {proxy.url}): {cfg.inter_node_delay_ms} ms each way")
    pids: dict[int, int] = {}
    for n in cfg.numbers:
        node = cfg.node(n)
        pid = owned_pid(node)
        if pid is None:
            _refuse_foreign(node, n)
        else:
            say(f"node {n}: reusing the running node (pid {pid}) on {_where(node)}")
            pids[n] = pid
    to_start = [n for n in cfg.numbers if n not in pids]
    offsets = {n: log_offset(cfg.node(n)) for n in cfg.numbers}
    for n in to_start:
        pids[n] = launch(cfg.node(n), log=_prefixed(say, n))
    _wait_for_ring(cfg, pids, set(to_start), offsets, began + timeout)
    return time.monotonic() - began if to_start else 0.0


def stop_cluster(cfg: ClusterConfig, *, log: _Log | None = None) -> int:
    """SIGTERM (then, after a minute, SIGKILL) every node this tool started; return how many.
    All are signalled first, so they shut down side by side."""
    say = log or _silent
    signalled = {n: send_stop(cfg.node(n)) for n in cfg.numbers}
    stopped = 0
    for n, pid in signalled.items():
        if pid is not None:
            wait_stopped(cfg.node(n), pid, log=say)
            say(f"node {n}: stopped Cassandra (pid {pid}) on {_where(cfg.node(n))}")
            stopped += 1
    if not stopped:
        say("no cluster node started by cassieq is running")
    if cfg.delayed and (proxy_pid := cfg.toxiproxy().stop()) is not None:
        say(f"stopped Toxiproxy (pid {proxy_pid})")
    return stopped


def running_variant(cfg: ClusterConfig) -> ClusterConfig:
    """The delayed variant of ``cfg`` (with the latency its Toxiproxy sets) when any of its
    nodes or its Toxiproxy runs, else ``cfg``: status, stop, kill and restart then act on
    the cluster that runs without being told which."""
    if cfg.delayed:
        return cfg
    try:
        delayed = cfg.variant(1)
    except ValueError:  # hosts no proxy can stand beside: never a delayed cluster
        return cfg
    proxy = delayed.toxiproxy()
    nodes = any(owned_pid(delayed.node(n)) is not None for n in delayed.numbers)
    if not nodes and proxy.owned_pid() is None:
        return cfg
    latencies = set(proxy.latency().values())
    return delayed.variant(max(latencies) if latencies else 1)


def kill_node(cfg: ClusterConfig, n: int, *, log: _Log | None = None) -> int:
    """SIGKILL node ``n`` (a crash: no shutdown announced to gossip) by its pid file; return
    the pid. Raises CassandraToolError when that node is not running or not ours."""
    node = cfg.node(n)
    pid = kill(node)
    (log or _silent)(f"node {n}: killed Cassandra (pid {pid}) on {_where(node)}")
    return pid


def restart_node(
    cfg: ClusterConfig, n: int, *, log: _Log | None = None, timeout: float = RESTART_TIMEOUT_S
) -> float:
    """Start node ``n`` again on its data (stopping it first if it runs); wait until it serves
    CQL, every other live node of ours logs it UP after this start, and it logs them UP.
    Return the seconds taken."""
    say = log or _silent
    began = time.monotonic()
    node = cfg.node(n)
    if owned_pid(node) is not None:
        say(f"node {n}: running; stopping it first")
        stop(node, log=say)
    _refuse_foreign(node, n)
    pids = {m: pid for m in cfg.numbers if m != n and (pid := owned_pid(cfg.node(m)))}
    offsets = {m: log_offset(cfg.node(m)) for m in cfg.numbers}
    pids[n] = launch(node, log=_prefixed(say, n))
    _wait_for_ring(cfg, pids, {n}, offsets, began + timeout)
    return time.monotonic() - began


def cluster_status(cfg: ClusterConfig) -> list[NodeStatus]:
    """The status of node 1..N, in order."""
    return [node_status(cfg.node(n)) for n in cfg.numbers]


def gossip_up(cfg: ClusterConfig, n: int) -> tuple[str, ...]:
    """The other nodes' hosts that node ``n``'s gossip shows UP now (from its log); none when
    node ``n`` does not run (its log then holds a dead process's view)."""
    if owned_pid(cfg.node(n)) is None:
        return ()
    view = gossip_view(cfg.node(n))
    return tuple(host for m, host in enumerate(cfg.hosts, 1) if view.get(_peer(cfg, m)) is True)


# --------------------------------------------------------------------------- gossip view


def log_offset(node: NodeConfig) -> int:
    """The size of the node's system.log now: events after it are newer than this moment."""
    try:
        return node.log_file.stat().st_size
    except FileNotFoundError:
        return 0


def gossip_view(node: NodeConfig, *, since: int = 0) -> dict[str, bool]:
    """Peer ("ip:storage_port") -> True if this node's gossip last marked it UP, False if DOWN,
    counting only log lines after offset ``since`` that its current run wrote."""
    return _view(_read_log(node), since)


def _read_log(node: NodeConfig) -> bytes:
    try:
        return node.log_file.read_bytes()
    except FileNotFoundError:
        return b""


def _view(log: bytes, since: int) -> dict[str, bool]:
    # A log shorter than the offset was replaced: all of it is newer.
    text = log[since if since <= len(log) else 0 :].decode(errors="replace")
    run = text.rfind(_RUN_START)
    if run >= 0:
        text = text[run:]  # a run's view starts empty: earlier lines are another process's
    return {m["peer"]: m["state"] == "UP" for m in _UP_DOWN.finditer(text)}


def _wait_for_ring(
    cfg: ClusterConfig,
    pids: Mapping[int, int],
    launched: Collection[int],
    offsets: Mapping[int, int],
    deadline: float,
) -> None:
    """Until ``deadline``: every member (node number -> pid) serves CQL, and each logs every
    other member UP (a member launched just now: in a line after the observer's offset)."""
    members = sorted(pids)
    serving: set[int] = set()
    while True:
        _check_alive(cfg, pids)
        serving |= {n for n in members if n not in serving and serves_cql(cfg.node(n))}
        problem = _first_problem(cfg, members, serving, launched, offsets)
        if problem is None:
            return
        if time.monotonic() > deadline:
            n, what = problem
            raise CassandraToolError(
                f"the cluster was not up in time: node {n} {what}; read {cfg.node(n).log_file}"
            )
        time.sleep(_POLL_S)


def _check_alive(cfg: ClusterConfig, pids: Mapping[int, int]) -> None:
    # By pid, not by pid file: a process exec'd a moment ago shows an empty /proc cmdline.
    for n, pid in pids.items():
        node = cfg.node(n)
        if not pid_alive(pid):
            raise CassandraToolError(
                f"node {n} ({_where(node)}) is not running (it exited); read {node.log_file}"
            )


def _first_problem(
    cfg: ClusterConfig,
    members: list[int],
    serving: set[int],
    launched: Collection[int],
    offsets: Mapping[int, int],
) -> tuple[int, str] | None:
    """(node, what it lacks) for the first unmet condition, or None when the ring is up."""
    for n in members:
        if n not in serving:
            return n, f"does not serve CQL on {_where(cfg.node(n))}"
    for n in members:
        log = _read_log(cfg.node(n))
        whole_run, since_launch = _view(log, 0), _view(log, offsets.get(n, 0))
        for m in members:
            view = since_launch if m in launched else whole_run
            if m != n and view.get(_peer(cfg, m)) is not True:
                return n, f"does not see node {m} ({cfg.hosts[m - 1]}) UP in gossip"
    return None


def _refuse_the_other_variant(cfg: ClusterConfig) -> None:
    """The plain and the delayed cluster share addresses and ports: one runs at a time."""
    other = cfg.variant(0) if cfg.delayed else running_variant(cfg)
    if other.delayed != cfg.delayed and any(owned_pid(other.node(n)) for n in other.numbers):
        which = "delayed" if other.delayed else "plain"
        raise CassandraToolError(
            f"the {which} cluster runs on these addresses; stop it first: "
            f"cassieq cassandra stop --nodes {len(cfg.hosts)}"
        )


def _refuse_foreign(node: NodeConfig, n: int) -> None:
    """A cluster node must be ours (kill and restart go by our pid file): never adopt another
    process that holds its address."""
    for port in (node.native_port, node.storage_port):
        if port_open(node.host, port):
            raise CassandraToolError(
                f"node {n}: {node.host}:{port} is held by a process cassieq did not start "
                f"(no live CassandraDaemon in {node.pid_file}); stop it or choose other --hosts"
            )


def _prefixed(say: _Log, n: int) -> _Log:
    def prefixed(message: str) -> None:
        say(f"node {n}: {message}")

    return prefixed


def _peer(cfg: ClusterConfig, m: int) -> str:
    return cfg.node(m).storage_address


def _where(node: NodeConfig) -> str:
    return f"{node.host}:{node.native_port}"
