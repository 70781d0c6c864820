"""The scenarios' faults: when to kill and restart what, and doing it.

Every fault is timed against the put phase (of length T): node faults kill a Cassandra node
at T/3 and restart it at 2T/3; server faults SIGKILL server B at T/3 and restart it on the
same port a few seconds later; ``both`` overlaps the two (the server dies while the node is
down).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from cassieq.tools.chaos.ledger import FaultEvent, Ledger
from cassieq.tools.chaos.options import Scenario
from cassieq.tools.chaos.servers import ServerError, ServerProcess

if TYPE_CHECKING:
    from cassieq.tools.devcluster.cluster import ClusterConfig

Action = Literal["kill node", "restart node", "kill server", "restart server"]
Say = Callable[[str], None]

KILLED_SERVER = "B"
SERVER_READY_TIMEOUT_S = 60.0
NODE_RESTART_TIMEOUT_S = 240.0


@dataclass(frozen=True, slots=True)
class Step:
    at: float  # seconds after the put phase began
    action: Action


def plan(scenario: Scenario, put_seconds: float, restart_delay: float) -> list[Step]:
    third = put_seconds / 3
    node = [Step(third, "kill node"), Step(2 * third, "restart node")]
    if scenario == "node-kill":
        return node
    if scenario == "server-kill":
        return [Step(third, "kill server"), Step(third + restart_delay, "restart server")]
    if scenario == "both":
        # The server dies while the node is down, and comes back before the node does.
        kill = third + min(10.0, third / 4)
        server = [Step(kill, "kill server"), Step(kill + restart_delay, "restart server")]
        return sorted(node + server, key=lambda s: s.at)
    return []


class FaultInjector:
    def __init__(
        self,
        steps: list[Step],
        *,
        ledger: Ledger,
        servers: dict[str, ServerProcess],
        cluster: ClusterConfig | None,
        node: int,
        say: Say,
    ) -> None:
        self._steps, self._ledger, self._servers = steps, ledger, servers
        self._cluster, self._node, self._say = cluster, node, say
        self.errors: list[str] = []
        self._node_down = self._server_down = False
        self.busy = False  # in the middle of a kill or restart: not to be cancelled

    async def run(self, start: float) -> None:
        """Inject each step at its time (the caller cancels what is left at the deadline)."""
        for step in self._steps:
            await asyncio.sleep(max(0.0, start + step.at - time.monotonic()))
            self.busy = True
            try:
                await self._do(step.action)
            finally:
                self.busy = False

    async def heal(self) -> None:
        """Bring back whatever is still down (a run cut short by its deadline): the next
        scenario, and whoever uses the cluster next, needs every node up."""
        if self._server_down:
            await self._do("restart server")
        if self._node_down:
            await self._do("restart node")

    async def _do(self, action: Action) -> None:
        server = self._servers[KILLED_SERVER]
        target = f"node {self._node}" if action.endswith("node") else f"server {server.name}"
        affected = None if action.endswith("node") else server.name
        event = FaultEvent(f"{action.split()[0]} {target}", time.monotonic(), affected)
        self._ledger.faults.append(event)
        index = len(self._ledger.faults) - 1
        self._say(f"fault: {event.name}")
        try:
            if action == "kill node":
                from cassieq.tools.devcluster.cluster import kill_node

                self._node_down = True
                await asyncio.to_thread(kill_node, self._config(), self._node, log=self._say)
            elif action == "restart node":
                from cassieq.tools.devcluster.cluster import restart_node

                await asyncio.to_thread(
                    restart_node,
                    self._config(),
                    self._node,
                    log=self._say,
                    timeout=NODE_RESTART_TIMEOUT_S,
                )
                self._node_down = False
            elif action == "kill server":
                self._server_down = True
                await asyncio.to_thread(server.kill)
            else:
                server.start()
                await server.wait_ready(SERVER_READY_TIMEOUT_S)
                self._server_down = False
        except (ServerError, RuntimeError, OSError) as exc:
            self.errors.append(f"{event.name}: {type(exc).__name__}: {exc}")
            self._say(f"fault {event.name} failed: {exc}")
            return
        done = time.monotonic()
        self._ledger.faults[index] = dataclasses.replace(event, done=done)
        self._say(f"fault: {event.name} done in {done - event.at:.1f} s")

    def _config(self) -> ClusterConfig:
        if self._cluster is None:
            raise RuntimeError("node faults need the cluster (not --single-node)")
        return self._cluster


def ensure_cluster(cfg: ClusterConfig, say: Say) -> None:
    """Every node up before a scenario: a node an earlier run left down is restarted; a
    cluster that does not run at all is an error (this tool never starts one)."""
    from cassieq.tools.devcluster.cluster import cluster_status, restart_node

    down = [n for n, st in zip(cfg.numbers, cluster_status(cfg), strict=True) if not st.reachable]
    if len(down) == len(cfg.hosts):
        raise RuntimeError(
            f"no node of the cluster answers on {','.join(cfg.hosts)}:{cfg.native_port}: "
            "start it with `cassieq cassandra start --nodes 3`"
        )
    for n in down:
        say(f"node {n} is down: restarting it before the scenario")
        restart_node(cfg, n, log=say, timeout=NODE_RESTART_TIMEOUT_S)
