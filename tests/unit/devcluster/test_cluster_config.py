"""The local cluster's configuration (cassieq/tools/devcluster/cluster.py), without Cassandra."""

from __future__ import annotations

from pathlib import Path

import pytest

from cassieq.tools.devcluster.cassandra import SINGLE_NODE_OPTIONS, NodeConfig, render_yaml
from cassieq.tools.devcluster.cluster import (
    DEFAULT_CLUSTER_HOSTS,
    ClusterConfig,
    from_options,
    gossip_view,
)

_ENV = (
    "CASSIEQ_CLUSTER_HOSTS",
    "CASSIEQ_CLUSTER_PORT",
    "CASSIEQ_CLUSTER_STORAGE_PORT",
    "CASSIEQ_CLUSTER_HEAP",
    "CASSIEQ_CASSANDRA_HEAP",
    "CASSIEQ_CASSANDRA_VERSION",
    "CASSIEQ_CASSANDRA_PORT",
    "CASSIEQ_CASSANDRA_STORAGE_PORT",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CASSIEQ_HOME", str(tmp_path))


def _yaml_lines(cfg: NodeConfig) -> list[str]:
    return [line for line in render_yaml(cfg).splitlines() if not line.startswith("#")]


def test_every_node_seeds_from_every_node_and_listens_on_its_own_address() -> None:
    lines = _yaml_lines(ClusterConfig.from_env().node(2))
    seeds = '      - seeds: "127.0.0.2:7000,127.0.0.3:7000,127.0.0.4:7000"'
    assert seeds in lines
    assert "cluster_name: cassieq-cluster" in lines
    assert "listen_address: 127.0.0.3" in lines
    assert "rpc_address: 127.0.0.3" in lines
    assert "native_transport_port: 9042" in lines
    assert "paxos_variant: v2" in lines
    assert not any("allocate_tokens" in line for line in lines)  # random tokens: see the yaml
    data = [line for line in lines if "/data/" in line]
    assert data and all("cluster-127.0.0.3-9042/data/" in line for line in data)


def test_the_single_node_keeps_its_own_seed_name_and_directory(tmp_path: Path) -> None:
    node = NodeConfig.from_env()
    lines = _yaml_lines(node)
    assert '      - seeds: "127.0.0.1:7000"' in lines
    assert "cluster_name: cassieq-local" in lines
    assert node.node_dir == tmp_path / "node-9042"
    assert node.startup_options == SINGLE_NODE_OPTIONS
    assert "-Dcassandra.load_ring_state=false" in node.startup_options


def test_node_dirs_differ_per_host_and_from_the_single_node() -> None:
    cfg = ClusterConfig.from_env()
    dirs = {cfg.node(n).node_dir for n in cfg.numbers}
    assert len(dirs) == 3
    assert NodeConfig.from_env().node_dir not in dirs
    other_port = ClusterConfig.from_env(native_port=9142)
    assert dirs.isdisjoint(other_port.node(n).node_dir for n in other_port.numbers)


def test_cluster_nodes_load_their_saved_ring_and_skip_the_settle_wait() -> None:
    options = ClusterConfig.from_env().node(1).startup_options
    assert "-Dcassandra.load_ring_state=false" not in options
    assert "-Dcassandra.skip_wait_for_gossip_to_settle=0" in options


def test_defaults() -> None:
    cfg = ClusterConfig.from_env()
    assert cfg.hosts == DEFAULT_CLUSTER_HOSTS == ("127.0.0.2", "127.0.0.3", "127.0.0.4")
    assert (cfg.native_port, cfg.storage_port, cfg.heap) == (9042, 7000, "768M")
    assert cfg.replication() == "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}"
    assert cfg.replication(2) == "{'class': 'NetworkTopologyStrategy', 'datacenter1': 2}"


def test_from_env_reads_the_environment_and_overrides_win(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CASSIEQ_CLUSTER_HOSTS", " 10.0.0.1, 10.0.0.2 ,")
    monkeypatch.setenv("CASSIEQ_CLUSTER_PORT", "9142")
    monkeypatch.setenv("CASSIEQ_CLUSTER_STORAGE_PORT", "7100")
    monkeypatch.setenv("CASSIEQ_CASSANDRA_HEAP", "512M")
    monkeypatch.setenv("CASSIEQ_CASSANDRA_VERSION", "5.0.8")
    cfg = ClusterConfig.from_env()
    assert cfg.hosts == ("10.0.0.1", "10.0.0.2")
    assert (cfg.native_port, cfg.storage_port, cfg.heap, cfg.version) == (
        9142,
        7100,
        "512M",
        "5.0.8",
    )
    assert cfg.home == tmp_path
    assert cfg.node(2).seeds == ("10.0.0.1:7100", "10.0.0.2:7100")
    monkeypatch.setenv("CASSIEQ_CLUSTER_HEAP", "640M")
    assert ClusterConfig.from_env().heap == "640M"  # the cluster's own heap setting wins
    over = ClusterConfig.from_env(hosts="127.0.0.5,127.0.0.6", native_port=None, heap="1G")
    assert (over.hosts, over.native_port, over.heap) == (("127.0.0.5", "127.0.0.6"), 9142, "1G")


def test_bad_configurations_are_refused() -> None:
    cfg = ClusterConfig.from_env()
    for n in (0, 4):
        with pytest.raises(ValueError, match=r"nodes 1\.\.3"):
            cfg.node(n)
    with pytest.raises(ValueError, match="repeat"):
        ClusterConfig(hosts=("127.0.0.2", "127.0.0.2"))
    with pytest.raises(ValueError, match="no hosts"):
        ClusterConfig.from_env(hosts=" , ")


def test_command_line_options_name_the_single_node_or_the_cluster() -> None:
    assert from_options(None, None, None) is None
    assert from_options(1, None, None) is None
    three = from_options(3, None, 9142)
    assert three is not None and three.hosts == DEFAULT_CLUSTER_HOSTS
    assert three.native_port == 9142
    two = from_options(2, None, None)
    assert two is not None and two.hosts == ("127.0.0.2", "127.0.0.3")
    given = from_options(None, "127.0.0.7,127.0.0.8", None)
    assert given is not None and given.hosts == ("127.0.0.7", "127.0.0.8")
    with pytest.raises(ValueError, match="--nodes 3 but 2 hosts"):
        from_options(3, "127.0.0.7,127.0.0.8", None)


_PREFIX = "INFO  [{}] 2026-11-22 16:31:14,000 {}.java:100 - "
_RUN = _PREFIX.format("main", "YamlConfigurationLoader") + "Configuration location: file:/x\n"


def _event(peer: str, state: str) -> str:
    return _PREFIX.format("GossipStage:1", "Gossiper") + f"InetAddress /{peer} is now {state}\n"


def test_the_gossip_view_is_the_last_event_per_peer_of_the_current_run() -> None:
    node = ClusterConfig.from_env().node(1)
    node.log_file.parent.mkdir(parents=True)
    earlier_run = _RUN + _event("127.0.0.3:7000", "UP") + _event("127.0.0.4:7000", "UP")
    current_run = _RUN + _event("127.0.0.3:7000", "UP") + _event("127.0.0.3:7000", "DOWN")
    node.log_file.write_text(earlier_run + current_run)
    # The earlier process saw 127.0.0.4 UP; this one has not (yet).
    assert gossip_view(node) == {"127.0.0.3:7000": False}
    offset = node.log_file.stat().st_size
    with node.log_file.open("a") as log:
        log.write(_event("127.0.0.4:7000", "UP"))
    assert gossip_view(node) == {"127.0.0.3:7000": False, "127.0.0.4:7000": True}
    assert gossip_view(node, since=offset) == {"127.0.0.4:7000": True}
    assert gossip_view(node, since=offset * 10) == gossip_view(node)  # log replaced: all of it
