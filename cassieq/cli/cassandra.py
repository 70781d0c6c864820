"""``cassieq cassandra`` (a local node or cluster) and ``cassieq schema``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cassieq.cli.common import err as _err
from cassieq.config import Settings

if TYPE_CHECKING:
    from cassieq.tools.devcluster.cluster import ClusterConfig

# --------------------------------------------------------------------------- cassandra


@click.group()
def cassandra() -> None:
    """Run a local Apache Cassandra for development and tests: the single dev node on
    127.0.0.1, or (--nodes 3) a three-node cluster on 127.0.0.2-4."""


_NODES = click.option(
    "--nodes",
    type=click.IntRange(min=1),
    default=None,
    help="1 (default): the single dev node; N: the local cluster of N nodes.",
)
_HOSTS = click.option(
    "--hosts",
    default=None,
    help="Cluster node addresses, comma-separated (default 127.0.0.2,127.0.0.3,127.0.0.4 "
    "or $CASSIEQ_CLUSTER_HOSTS); implies the cluster.",
)
_PORT = click.option(
    "--port",
    type=int,
    default=None,
    help="CQL port (default 9042, or $CASSIEQ_CASSANDRA_PORT / $CASSIEQ_CLUSTER_PORT).",
)


@cassandra.command("start")
@_NODES
@_HOSTS
@_PORT
@click.option("--version", "version", default=None, help="Cassandra 5.0.x version, or 'latest'.")
@click.option(
    "--inter-node-delay-ms",
    type=click.IntRange(min=1),
    default=None,
    help="Cluster only: route the nodes' storage traffic through Toxiproxy with this latency "
    "each way (a network between machines; own data dirs). Needs Toxiproxy: "
    "go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0",
)
def cassandra_start(
    nodes: int | None,
    hosts: str | None,
    port: int | None,
    version: str | None,
    inter_node_delay_ms: int | None,
) -> None:
    """Fetch (once), start and wait for the node(s); reuse what already runs."""
    from cassieq.tools.devcluster import cassandra as tool

    if version == "latest":
        version = tool.resolve_latest_version(tool.NodeConfig.from_env().home)
    ring = _cluster_config(nodes, hosts, port, version, inter_node_delay_ms)
    if ring is not None:
        _cluster_start(ring)
        return
    cfg = tool.NodeConfig.from_env(native_port=port, version=version)
    try:
        seconds = tool.start(cfg, log=_err)
        status = tool.node_status(cfg)
    except tool.CassandraToolError as exc:
        raise click.ClickException(str(exc)) from exc
    took = f", ready in {seconds:.1f} s" if seconds else ", already running"
    pid = f"pid {status.pid}" if status.pid else "not started by cassieq"
    click.echo(
        f"Apache Cassandra {status.version} ready on {cfg.host}:{cfg.native_port} ({pid}{took})"
    )


@cassandra.command("stop")
@_NODES
@_HOSTS
@click.option("--port", type=int, default=None, help="CQL port of the node(s) to stop.")
def cassandra_stop(nodes: int | None, hosts: str | None, port: int | None) -> None:
    """Stop what `cassieq cassandra start` started (never another process)."""
    from cassieq.tools.devcluster import cassandra as tool
    from cassieq.tools.devcluster import cluster

    ring = _cluster_config(nodes, hosts, port)
    if ring is not None:
        cluster.stop_cluster(cluster.running_variant(ring), log=click.echo)
        return
    tool.stop(tool.NodeConfig.from_env(native_port=port), log=click.echo)


@cassandra.command("status")
@_NODES
@_HOSTS
@click.option("--port", type=int, default=None, help="CQL port of the node(s).")
def cassandra_status(nodes: int | None, hosts: str | None, port: int | None) -> None:
    """Say whether the node (each cluster node) runs; exit 3 when one does not answer."""
    from cassieq.tools.devcluster import cassandra as tool

    ring = _cluster_config(nodes, hosts, port)
    if ring is not None:
        _cluster_status(ring)
        return
    cfg = tool.NodeConfig.from_env(native_port=port)
    st = tool.node_status(cfg)
    if not st.reachable:
        click.echo(f"not running on {cfg.host}:{cfg.native_port}")
        sys.exit(3)
    owner = f"pid {st.pid}, started by cassieq" if st.owned else "not started by cassieq"
    click.echo(f"Apache Cassandra {st.version} on {cfg.host}:{cfg.native_port} ({owner})")


@cassandra.command("kill")
@click.argument("node", type=int)
@_HOSTS
@click.option("--port", type=int, default=None, help="CQL port of the cluster nodes.")
def cassandra_kill(node: int, hosts: str | None, port: int | None) -> None:
    """SIGKILL cluster node NODE (1-based; a crash, no shutdown) by its pid file."""
    from cassieq.tools.devcluster import cluster

    ring = _cluster_node(node, hosts, port)
    try:
        pid = cluster.kill_node(ring, node)
    except cluster.CassandraToolError as exc:
        raise click.ClickException(f"cannot kill node {node}: {exc}") from exc
    click.echo(f"killed node {node} ({ring.hosts[node - 1]}:{ring.native_port}, pid {pid})")


@cassandra.command("restart")
@click.argument("node", type=int)
@_HOSTS
@click.option("--port", type=int, default=None, help="CQL port of the cluster nodes.")
def cassandra_restart(node: int, hosts: str | None, port: int | None) -> None:
    """Start cluster node NODE again on its data (stopping it first if it runs); wait until
    it serves CQL and the other live nodes' gossip shows it UP (and it them)."""
    from cassieq.tools.devcluster import cluster

    ring = _cluster_node(node, hosts, port)
    try:
        seconds = cluster.restart_node(ring, node, log=_err)
    except cluster.CassandraToolError as exc:
        raise click.ClickException(f"cannot restart node {node}: {exc}") from exc
    where = f"{ring.hosts[node - 1]}:{ring.native_port}"
    click.echo(f"node {node} back on {where}, seen UP by the live nodes, in {seconds:.1f} s")


def _cluster_config(
    nodes: int | None,
    hosts: str | None,
    port: int | None,
    version: str | None = None,
    inter_node_delay_ms: int | None = None,
) -> ClusterConfig | None:
    from cassieq.tools.devcluster import cluster

    try:
        return cluster.from_options(nodes, hosts, port, version, inter_node_delay_ms)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc


def _cluster_node(node: int, hosts: str | None, port: int | None) -> ClusterConfig:
    from cassieq.tools.devcluster import cluster

    try:
        ring = cluster.ClusterConfig.from_env(hosts=hosts, native_port=port)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    if node not in ring.numbers:
        raise click.ClickException(f"no node {node}: the cluster has nodes 1..{len(ring.hosts)}")
    return cluster.running_variant(ring)


def _cluster_start(ring: ClusterConfig) -> None:
    from cassieq.tools.devcluster import cluster

    try:
        seconds = cluster.start_cluster(ring, log=_err)
        statuses = cluster.cluster_status(ring)
    except cluster.CassandraToolError as exc:
        raise click.ClickException(f"the cluster did not start: {exc}") from exc
    for n, st in zip(ring.numbers, statuses, strict=True):
        click.echo(
            f"node {n}: Apache Cassandra {st.version} on {ring.hosts[n - 1]}:"
            f"{ring.native_port} (pid {st.pid})"
        )
    took = f"ready in {seconds:.1f} s" if seconds else "already running"
    rf = min(3, len(ring.hosts))
    click.echo(f"cluster of {len(ring.hosts)} nodes {took}; replication {ring.replication(rf)}")
    if ring.delayed:
        click.echo(
            f"inter-node traffic through Toxiproxy ({ring.toxiproxy().url}): "
            f"{ring.inter_node_delay_ms} ms each way; stop with `cassieq cassandra stop --nodes "
            f"{len(ring.hosts)}`"
        )


def _cluster_status(ring: ClusterConfig) -> None:
    from cassieq.tools.devcluster import cluster

    ring = cluster.running_variant(ring)
    if ring.delayed:
        click.echo(f"the delayed cluster: {ring.inter_node_delay_ms} ms each way (Toxiproxy)")
    down = 0
    for n, st in zip(ring.numbers, cluster.cluster_status(ring), strict=True):
        where = f"node {n} {ring.hosts[n - 1]}:{ring.native_port}"
        if not st.reachable:
            down += 1
            click.echo(f"{where}: not running")
            continue
        owner = f"pid {st.pid}, started by cassieq" if st.owned else "not started by cassieq"
        up = ", ".join(cluster.gossip_up(ring, n)) or "none"
        click.echo(f"{where}: Apache Cassandra {st.version} ({owner}); gossip shows UP: {up}")
    if down:
        sys.exit(3)


# --------------------------------------------------------------------------- schema


@click.group()
def schema() -> None:
    """Create and migrate the cassieq keyspace."""


@schema.command("apply")
@click.option(
    "--hosts", default=None, help="Comma-separated contact points ($CASSIEQ_CASSANDRA_HOSTS)."
)
@click.option("--port", type=int, default=None, help="CQL port ($CASSIEQ_CASSANDRA_PORT).")
@click.option("--keyspace", default=None, help="Keyspace ($CASSIEQ_KEYSPACE, default cassieq).")
@click.option("--replication", default=None, help="CQL replication map ($CASSIEQ_REPLICATION).")
@click.option("--schema-dir", type=click.Path(path_type=Path, exists=True), default=None)
@click.option(
    "--recreate",
    is_flag=True,
    help="Drop the keyspace first (test runs start empty). Destroys all its data.",
)
def schema_apply(
    hosts: str | None,
    port: int | None,
    keyspace: str | None,
    replication: str | None,
    schema_dir: Path | None,
    recreate: bool,
) -> None:
    """Apply schema/cassandra/NNNN_*.cql in order; re-applying is harmless."""
    from cassieq.store import cassandra as cql

    settings = Settings.from_env(
        cassandra_hosts=hosts.split(",") if hosts else None,
        cassandra_port=port,
        keyspace=keyspace,
        replication=replication,
    )
    try:
        cluster, session = cql.connect(settings.cassandra_hosts, settings.cassandra_port)
    except cql.CassandraUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        if recreate:
            cql.drop_keyspace(session, settings.keyspace)
        applied = cql.apply_schema(
            session, settings.keyspace, settings.replication, schema_dir or cql.default_schema_dir()
        )
    except cql.SchemaError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        cluster.shutdown()
    done = ", ".join(applied) if applied else "nothing new"
    click.echo(f"schema of keyspace {settings.keyspace} is up to date (applied: {done})")
