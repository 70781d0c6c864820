"""Inter-node delay for the local cluster: its storage traffic through Toxiproxy.

On one machine every node answers another within microseconds, so a Paxos round costs what
the CPU costs, not what a network costs. Between machines it costs round trips. To measure
that here without traffic shaping (``tc netem`` is refused on this kernel), each node of the
delayed cluster listens on its own 127.0.0.x storage port as usual but *advertises* a proxy
address (``broadcast_address``): 127.0.1.x on the same port, where a Toxiproxy proxy forwards
to 127.0.0.x after a latency toxic. Peers reach a node only through what it advertises
(gossip, seeds, messaging), so every inter-node message is delayed once on its way; clients
keep the undelayed CQL address (rpc_address), as an application server next to a coordinator.

Cassandra sends each direction of a conversation over its own outbound connection (a reply
travels on the replier's connection to the asker's proxy), so a message crosses one proxy in
its upstream direction: the upstream toxic is the one-way delay. The downstream toxic, of
the same latency, delays what little flows back on a connection (the handshake's answer).

The delayed cluster has its own data directories and cluster name (see ClusterConfig): a
node's identity is its advertised address, and the plain cluster's data knows other ones.
Toxiproxy is an external program (Go); nothing in CI needs it, only this option does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassieq.tools.devcluster.cassandra import CassandraToolError, pid_alive, port_open

__all__ = [
    "TOXIPROXY_INSTALL",
    "Toxiproxy",
    "find_toxiproxy",
    "latency_toxics",
    "proxies",
    "proxy_host",
]

TOXIPROXY_INSTALL = "go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0"
# Beside the proxies' 127.0.1.x, off the dev node's 127.0.0.1.
API_HOST = "127.0.1.1"
API_PORT = 8474
START_TIMEOUT_S = 15.0
_PROXY_PREFIX = "cassieq-storage-"


def proxy_host(host: str) -> str:
    """The address node ``host`` advertises: 127.0.0.x -> 127.0.1.x (loopback only: a
    proxy must listen on an address of this machine, beside the node's own)."""
    parts = host.split(".")
    if len(parts) != 4 or parts[:3] != ["127", "0", "0"] or not parts[3].isdigit():
        raise ValueError(f"inter-node delay needs cluster hosts 127.0.0.x (got {host})")
    if not 2 <= int(parts[3]) <= 254:
        raise ValueError(f"inter-node delay needs cluster hosts 127.0.0.2..254 (got {host})")
    return f"127.0.1.{parts[3]}"


def proxies(hosts: tuple[str, ...], storage_port: int) -> list[dict[str, Any]]:
    """Toxiproxy's proxy list (the shape of its -config file and of POST /populate): one
    proxy per node, from its advertised address to its own storage port."""
    return [
        {
            "name": f"{_PROXY_PREFIX}{host}",
            "listen": f"{proxy_host(host)}:{storage_port}",
            "upstream": f"{host}:{storage_port}",
            "enabled": True,
        }
        for host in hosts
    ]


def latency_toxics(delay_ms: int) -> list[dict[str, Any]]:
    """A fixed latency (no jitter) on both directions of a proxy; Toxiproxy takes whole ms."""
    if delay_ms < 1:
        raise ValueError(f"an inter-node delay is at least 1 ms (got {delay_ms})")
    return [
        {
            "name": f"delay-{stream}",
            "type": "latency",
            "stream": stream,
            "toxicity": 1.0,
            "attributes": {"latency": delay_ms, "jitter": 0},
        }
        for stream in ("upstream", "downstream")
    ]


def find_toxiproxy() -> Path:
    """$CASSIEQ_TOXIPROXY, else toxiproxy-server on PATH, else the binary `go install` leaves
    in $GOBIN or $GOPATH/bin (~/go/bin), named `server`."""
    given = os.environ.get("CASSIEQ_TOXIPROXY")
    if given:
        if not os.access(given, os.X_OK):
            raise CassandraToolError(f"$CASSIEQ_TOXIPROXY={given} is not an executable")
        return Path(given)
    on_path = shutil.which("toxiproxy-server")
    if on_path:
        return Path(on_path)
    gopath = os.environ.get("GOPATH", "").split(os.pathsep)[0] or str(Path.home() / "go")
    bins = [os.environ.get("GOBIN", ""), str(Path(gopath) / "bin"), str(Path.home() / "go/bin")]
    for directory in filter(None, bins):
        candidate = Path(directory) / "server"
        if os.access(candidate, os.X_OK) and _is_toxiproxy(candidate):
            return candidate
    raise CassandraToolError(
        "--inter-node-delay-ms needs Toxiproxy, which was not found (toxiproxy-server on PATH, "
        f"or `server` in $GOBIN, $GOPATH/bin or ~/go/bin). Install it with: {TOXIPROXY_INSTALL}"
    )


def _is_toxiproxy(binary: Path) -> bool:
    # `go install .../cmd/server` names it `server`: make sure this one is Toxiproxy.
    try:
        out = subprocess.run(
            [str(binary), "-version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "toxiproxy" in (out.stdout + out.stderr).lower()


@dataclass(frozen=True)
class Toxiproxy:
    """The one Toxiproxy server the delayed cluster uses, in ``home``/cluster-toxiproxy."""

    home: Path
    host: str = API_HOST
    port: int = API_PORT

    @property
    def dir(self) -> Path:
        return self.home / "cluster-toxiproxy"

    @property
    def pid_file(self) -> Path:
        return self.dir / "toxiproxy.pid"

    @property
    def log_file(self) -> Path:
        return self.dir / "toxiproxy.log"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def owned_pid(self) -> int | None:
        """The pid in our pid file if it is alive and serves our API address."""
        try:
            pid = int(self.pid_file.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (FileNotFoundError, ValueError, OSError):
            return None
        # Pids are recycled: ours was started with exactly this -host and -port.
        wanted = [b"-host", self.host.encode(), b"-port", str(self.port).encode()]
        if pid_alive(pid) and cmdline[1:5] == wanted:
            return pid
        return None

    def start(self, config: list[dict[str, Any]], delay_ms: int) -> int:
        """Run the server (reusing ours when it runs), create the proxies and set every
        proxy's latency to ``delay_ms``; return its pid."""
        pid = self.owned_pid()
        if pid is None:
            if port_open(self.host, self.port):
                raise CassandraToolError(
                    f"{self.host}:{self.port} is held by a process cassieq did not start "
                    f"(no live Toxiproxy in {self.pid_file}); stop it first"
                )
            pid = self._launch(config)
        self._request("POST", "/populate", config)  # creates, or replaces, the proxies
        for proxy in config:
            self.set_latency(proxy["name"], delay_ms)
        return pid

    def _launch(self, config: list[dict[str, Any]]) -> int:
        binary = find_toxiproxy()
        self.dir.mkdir(parents=True, exist_ok=True)
        conf = self.dir / "proxies.json"
        conf.write_text(json.dumps(config, indent=2) + "\n")
        cmd = [str(binary), "-host", self.host, "-port", str(self.port), "-config", str(conf)]
        # It logs every connection at info; warnings are what matter here.
        env = {**os.environ, "LOG_LEVEL": "warn"}
        with self.log_file.open("ab") as out:
            proc = subprocess.Popen(
                cmd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # outlives the command, as the nodes do
            )
        self.pid_file.write_text(f"{proc.pid}\n")
        deadline = time.monotonic() + START_TIMEOUT_S
        while not port_open(self.host, self.port):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                self.pid_file.unlink(missing_ok=True)
                raise CassandraToolError(f"Toxiproxy did not start; read {self.log_file}")
            time.sleep(0.1)
        return proc.pid

    def set_latency(self, proxy: str, delay_ms: int) -> None:
        for toxic in latency_toxics(delay_ms):
            try:
                self._request("POST", f"/proxies/{proxy}/toxics", toxic)
            except _Conflict:  # there already: change its latency
                self._request("POST", f"/proxies/{proxy}/toxics/{toxic['name']}", toxic)

    def latency(self) -> dict[str, int]:
        """Proxy name -> the upstream latency (ms) it adds now; {} when not running."""
        if self.owned_pid() is None:
            return {}
        out: dict[str, int] = {}
        for name, proxy in self._request("GET", "/proxies", None).items():
            for toxic in proxy.get("toxics", []):
                if toxic.get("stream") == "upstream" and toxic.get("type") == "latency":
                    out[name] = int(toxic["attributes"]["latency"])
        return out

    def stop(self) -> int | None:
        """SIGTERM our server and wait for it; its pid, or None when none ran."""
        pid = self.owned_pid()
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)
        return pid

    def _request(self, method: str, path: str, body: object) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(  # noqa: S310 -- our own http:// loopback API
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
                text = response.read()
        except urllib.error.HTTPError as exc:
            if exc.code == 409:
                raise _Conflict(path) from exc
            detail = exc.read().decode(errors="replace")
            raise CassandraToolError(f"Toxiproxy {method} {path}: {exc.code} {detail}") from exc
        except urllib.error.URLError as exc:
            raise CassandraToolError(f"Toxiproxy at {self.url} did not answer: {exc}") from exc
        return json.loads(text) if text.strip() else None


class _Conflict(Exception):
    pass
