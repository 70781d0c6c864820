"""The delayed cluster's wiring (cassieq/tools/devcluster/delay.py and its use in
cluster.py): Toxiproxy's configuration and each node's yaml, without Cassandra or Toxiproxy."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cassieq.tools.devcluster.cassandra import CassandraToolError, render_yaml
from cassieq.tools.devcluster.cluster import ClusterConfig, from_options, running_variant
from cassieq.tools.devcluster.delay import (
    TOXIPROXY_INSTALL,
    Toxiproxy,
    find_toxiproxy,
    latency_toxics,
    proxies,
    proxy_host,
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("CASSIEQ_CLUSTER_HOSTS", "CASSIEQ_CLUSTER_PORT", "CASSIEQ_TOXIPROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CASSIEQ_HOME", str(tmp_path))


def _yaml(cfg: ClusterConfig, n: int) -> list[str]:
    return [line for line in render_yaml(cfg.node(n)).splitlines() if not line.startswith("#")]


def test_each_node_advertises_its_proxy_and_seeds_from_the_proxies() -> None:
    cfg = ClusterConfig.from_env(inter_node_delay_ms=1)
    lines = _yaml(cfg, 2)
    assert "listen_address: 127.0.0.3" in lines  # listens on its own address, as before
    assert "rpc_address: 127.0.0.3" in lines  # clients are not delayed
    assert "broadcast_address: 127.0.1.3" in lines  # peers reach it through its proxy
    assert '      - seeds: "127.0.1.2:7000,127.0.1.3:7000,127.0.1.4:7000"' in lines
    assert "cluster_name: cassieq-cluster-delayed" in lines
    data = [line for line in lines if "/data/" in line]
    assert data and all("cluster-127.0.0.3-9042-delayed/data/" in line for line in data)
    # Gossip names a peer by what it advertises: the UP lines the start waits for.
    assert cfg.node(3).storage_address == "127.0.1.4:7000"


def test_the_plain_cluster_renders_as_before() -> None:
    plain = ClusterConfig.from_env()
    lines = _yaml(plain, 1)
    assert not any(line.startswith("broadcast_address") for line in lines)
    assert '      - seeds: "127.0.0.2:7000,127.0.0.3:7000,127.0.0.4:7000"' in lines
    assert "cluster_name: cassieq-cluster" in lines
    delayed = plain.variant(3)
    assert {delayed.node(n).node_dir for n in delayed.numbers}.isdisjoint(
        plain.node(n).node_dir for n in plain.numbers
    )
    assert not plain.delayed and delayed.delayed


def test_toxiproxy_config_forwards_each_proxy_to_its_node() -> None:
    assert proxies(("127.0.0.2", "127.0.0.3"), 7000) == [
        {
            "name": "cassieq-storage-127.0.0.2",
            "listen": "127.0.1.2:7000",
            "upstream": "127.0.0.2:7000",
            "enabled": True,
        },
        {
            "name": "cassieq-storage-127.0.0.3",
            "listen": "127.0.1.3:7000",
            "upstream": "127.0.0.3:7000",
            "enabled": True,
        },
    ]
    assert ClusterConfig.from_env(inter_node_delay_ms=2).proxies() == proxies(
        ("127.0.0.2", "127.0.0.3", "127.0.0.4"), 7000
    )


def test_latency_toxics_delay_both_directions_by_whole_milliseconds() -> None:
    toxics = latency_toxics(5)
    assert [t["stream"] for t in toxics] == ["upstream", "downstream"]
    assert all(t["type"] == "latency" and t["toxicity"] == 1.0 for t in toxics)
    assert all(t["attributes"] == {"latency": 5, "jitter": 0} for t in toxics)
    assert len({t["name"] for t in toxics}) == 2
    with pytest.raises(ValueError, match="at least 1 ms"):
        latency_toxics(0)


def test_only_loopback_hosts_can_be_delayed() -> None:
    assert proxy_host("127.0.0.254") == "127.0.1.254"
    for bad in ("10.0.0.2", "127.0.1.2", "127.0.0.1", "localhost"):
        with pytest.raises(ValueError, match="inter-node delay needs"):
            proxy_host(bad)
    with pytest.raises(ValueError, match="inter-node delay needs"):
        ClusterConfig.from_env(hosts="10.0.0.1,10.0.0.2", inter_node_delay_ms=1)
    with pytest.raises(ValueError, match="negative"):
        ClusterConfig(inter_node_delay_ms=-1)


def test_the_option_needs_a_cluster() -> None:
    with pytest.raises(ValueError, match="needs a cluster"):
        from_options(None, None, None, None, 1)
    cfg = from_options(3, None, None, None, 4)
    assert cfg is not None and cfg.inter_node_delay_ms == 4
    plain = from_options(3, None, None, None, None)
    assert plain is not None and not plain.delayed


def test_a_missing_toxiproxy_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("GOPATH", str(tmp_path / "go"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("GOBIN", raising=False)
    with pytest.raises(CassandraToolError) as caught:
        find_toxiproxy()
    assert TOXIPROXY_INSTALL in str(caught.value)
    assert TOXIPROXY_INSTALL == "go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0"


def test_a_go_installed_server_counts_only_when_it_is_toxiproxy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "go" / "bin"
    bin_dir.mkdir(parents=True)
    server = bin_dir / "server"
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("GOPATH", str(tmp_path / "go"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("GOBIN", raising=False)
    server.write_text("#!/bin/sh\necho 'some other server 1.0'\n")
    server.chmod(server.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(CassandraToolError, match="not found"):
        find_toxiproxy()
    server.write_text("#!/bin/sh\necho 'toxiproxy-server version 2.12.0'\n")
    assert find_toxiproxy() == server
    monkeypatch.setenv("CASSIEQ_TOXIPROXY", str(tmp_path / "nope"))
    with pytest.raises(CassandraToolError, match="CASSIEQ_TOXIPROXY"):
        find_toxiproxy()


def test_nothing_running_means_the_plain_cluster(tmp_path: Path) -> None:
    plain = ClusterConfig.from_env()
    assert running_variant(plain) is plain
    proxy = Toxiproxy(tmp_path)
    proxy.dir.mkdir(parents=True)
    proxy.pid_file.write_text(f"{os.getpid()}\n")  # a live pid that is not Toxiproxy
    assert proxy.owned_pid() is None
    assert running_variant(plain) is plain
    assert proxy.stop() is None and not proxy.pid_file.exists()


def test_the_command_refuses_a_delay_without_a_cluster_and_offers_it_with_one() -> None:
    from click.testing import CliRunner

    from cassieq.cli.main import cli

    refused = CliRunner().invoke(cli, ["cassandra", "start", "--inter-node-delay-ms", "1"])
    assert refused.exit_code == 1
    assert "--inter-node-delay-ms needs a cluster (--nodes 3)" in refused.output
    zero = CliRunner().invoke(
        cli, ["cassandra", "start", "--nodes", "3", "--inter-node-delay-ms", "0"]
    )
    assert zero.exit_code == 2  # usage: at least 1 ms
    helped = CliRunner().invoke(cli, ["cassandra", "start", "--help"])
    assert "--inter-node-delay-ms" in helped.output
