"""One scenario end to end: keyspace, two servers, account and queue, workload with faults,
pointers, verdicts; everything it started is stopped, and its keyspace dropped."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

from cassieq.store.cassandra import apply_schema, connect, default_schema_dir, drop_keyspace
from cassieq.tools.chaos.client import ChaosClient
from cassieq.tools.chaos.faults import FaultInjector, ensure_cluster, plan
from cassieq.tools.chaos.ledger import Ledger, judge, recoveries
from cassieq.tools.chaos.options import NODE_SCENARIOS, ChaosOptions, Scenario
from cassieq.tools.chaos.servers import new_servers
from cassieq.tools.chaos.sub_ledger import SubLedger, judge_subscription, stored_bodies
from cassieq.tools.chaos.workload import Workload

if TYPE_CHECKING:
    from cassieq.tools.devcluster.cluster import ClusterConfig

Say = Callable[[str], None]

SERVER_NAMES = ("A", "B")
READY_TIMEOUT_S = 60.0
ACCOUNT = "chaos"
QUEUE = "soak"


class SetupError(RuntimeError):
    """The scenario could not be set up (servers, account, queue)."""


async def run_scenario(
    scenario: Scenario, opts: ChaosOptions, cluster: ClusterConfig | None, say: Say
) -> dict[str, Any]:
    began = time.monotonic()
    deadline = began + opts.deadline
    keyspace = f"cassieq_chaos_{scenario.replace('-', '_')}_{secrets.token_hex(3)}"

    def note(message: str) -> None:
        say(f"[{scenario}] {message}")

    with contextlib.ExitStack() as stack:
        if opts.log_dir is not None:
            log_dir = opts.log_dir / keyspace
            log_dir.mkdir(parents=True, exist_ok=True)
        else:
            log_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="chaos-")))
        result: dict[str, Any] = {
            "scenario": scenario,
            "keyspace": keyspace,
            "hosts": list(opts.hosts),
            "replication": opts.replication,
            "batch": opts.batch,
            "mixed": opts.mixes_apis,
            "partitions": opts.partitions,
            "workers": opts.workers,
            "consumers": opts.consumers,
            "log_dir": str(log_dir) if opts.log_dir is not None else None,
        }
        if cluster is not None:
            await asyncio.to_thread(ensure_cluster, cluster, note)
            pids_before = await asyncio.to_thread(node_pids, cluster)
        note(f"keyspace {keyspace} on {','.join(opts.hosts)} ({opts.replication})")
        db, session = await asyncio.to_thread(connect, opts.hosts, opts.native_port)
        try:
            await asyncio.to_thread(
                apply_schema, session, keyspace, opts.replication, default_schema_dir()
            )
            result.update(
                await _with_servers(
                    scenario, opts, cluster, keyspace, log_dir, note, began, deadline
                )
            )
            if cluster is not None:
                pids_after = await asyncio.to_thread(node_pids, cluster)
                _check_cluster_untouched(result, pids_before, pids_after, opts)
        finally:
            if not opts.keep_keyspace:
                try:
                    await asyncio.to_thread(drop_keyspace, session, keyspace)
                except Exception as exc:  # a failed drop must not hide the run's figures
                    note(f"could not drop keyspace {keyspace}: {exc}")
            await asyncio.to_thread(db.shutdown)
    return result


async def _with_servers(
    scenario: Scenario,
    opts: ChaosOptions,
    cluster: ClusterConfig | None,
    keyspace: str,
    log_dir: Path,
    note: Say,
    began: float,
    deadline: float,
) -> dict[str, Any]:
    token, secret = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    servers = new_servers(
        SERVER_NAMES,
        log_dir,
        hosts=opts.hosts,
        native_port=opts.native_port,
        keyspace=keyspace,
        admin_token=token,
        receipt_secret=secret,
        partitions=opts.partitions,
        workers=opts.workers,
    )
    ledger = Ledger()
    client: ChaosClient | None = None
    injector: FaultInjector | None = None
    try:
        for server in servers.values():
            server.start()
        await asyncio.gather(*(s.wait_ready(READY_TIMEOUT_S) for s in servers.values()))
        key = await _create_account(servers["A"].url, token)
        client = ChaosClient(
            {name: s.url for name, s in servers.items()},
            account=ACCOUNT,
            key=key,
            queue=QUEUE,
            admin_token=token,
            receipt_secret=secret,
            ledger=ledger,
            timeout=opts.request_timeout,
        )
        await _create_queue(client, opts)
        await _wait_queue_everywhere(client, opts)
        for i in range(opts.subscriptions):
            name = f"sub-{i}"
            await _create_subscription(client, name)
            ledger.subscriptions[name] = SubLedger(name)
        shared: dict[str, ChaosClient] = {}
        for i in range(opts.shared_subscriptions):
            name = f"shared-{i}"
            await _create_subscription(client, name, "shared")
            shared[name] = client.shared_subscription(name, ledger.add_shared(name))
            await _wait_subscription_everywhere(shared[name], opts)
        setup_s = time.monotonic() - began
        note(f"set up in {setup_s:.1f} s; servers {', '.join(s.url for s in servers.values())}")

        workload = Workload(
            client, opts, scenario, deadline, note, ledger.subscriptions, shared=shared
        )
        injector = FaultInjector(
            plan(scenario, workload.put_seconds, opts.server_restart_delay),
            ledger=ledger,
            servers=servers,
            cluster=cluster,
            node=opts.node,
            say=note,
        )
        # The run's start is the put phase's: faults are timed against it.
        faults = asyncio.create_task(injector.run(time.monotonic()))
        progress = await workload.run()
        await _settle_faults(faults, injector)
        pointers = await client.pointers()
        lags = {name: await _final_lag(client, name) for name in shared}
        finished = time.monotonic()
    finally:
        if injector is not None:
            await injector.heal()
        if client is not None:
            await client.close()
        for server in servers.values():
            await asyncio.to_thread(server.stop)

    assert injector is not None  # set before the workload ran, or we raised
    verdicts = judge(ledger, opts.lease, progress.puts_started)
    figures = dataclasses.asdict(verdicts)
    samples = figures.pop("samples")
    # Kept even when the log directory is a temporary one: CI shows only the result.
    samples["server_errors"] = {
        name: errors for name, s in servers.items() if (errors := s.logged_errors())
    }
    violations = verdicts.violations()
    subscriptions = _judge_subscriptions(ledger, progress.puts_started)
    for sv in subscriptions.values():
        violations += sv.pop("violations")
    shared_figures = _judge_shared(ledger, opts.lease, progress.puts_started, lags)
    for sv in shared_figures.values():
        violations += sv.pop("violations")
    within = _within_one_bucket(pointers)
    if not within:
        violations.append("pointers apart by more than one bucket")
    if progress.timed_out:
        violations.append("timed out")
    if injector.errors:
        violations.append("fault injection failed")
    if progress.task_errors:
        violations.append("harness error (a producer or consumer died)")
    puts_end = progress.puts_done or finished
    return {
        "passed": not violations,
        "violations": violations,
        "timed_out": progress.timed_out,
        **figures,
        # Only with --subscriptions: without, the result is what it always was.
        **({"subscriptions": subscriptions} if subscriptions else {}),
        **({"shared_subscriptions": shared_figures} if shared_figures else {}),
        "recoveries": [dataclasses.asdict(r) for r in recoveries(ledger, progress.puts_started)],
        "fault_errors": injector.errors,
        "harness_errors": progress.task_errors,
        "puts_by_api": dict(progress.puts_by_api),
        "deliveries_by_api": dict(progress.deliveries_by_api),
        "pointers": pointers,
        "pointers_within_one_bucket": within,
        "seconds": {
            "setup": round(progress.puts_started - began, 1),
            "puts": round(puts_end - progress.puts_started, 1),
            "drain": round(finished - puts_end, 1),
            "total": round(finished - began, 1),
        },
        "servers": {name: {"url": s.url, "starts": s.starts} for name, s in servers.items()},
        "samples": samples,
    }


def _judge_subscriptions(ledger: Ledger, origin: float) -> dict[str, dict[str, Any]]:
    """Each subscription's figures (with its violations, taken out by the caller)."""
    stored, attempted = stored_bodies(
        [(p.body, p.status) for p in ledger.puts], {d.body for d in ledger.deliveries}
    )
    out: dict[str, dict[str, Any]] = {}
    for name, book in ledger.subscriptions.items():
        v = judge_subscription(book, stored, attempted, origin)
        out[name] = {**dataclasses.asdict(v), "violations": v.violations()}
    return out


def _judge_shared(
    ledger: Ledger, lease: float, origin: float, lags: dict[str, int | None]
) -> dict[str, dict[str, Any]]:
    """Each shared subscription judged as the queue is, from its own ledger (the queue's
    puts): its figures, its samples, its final lag, and its violations named after it (taken
    out by the caller)."""
    out: dict[str, dict[str, Any]] = {}
    for name, book in ledger.shared.items():
        v = judge(book, lease, origin)
        out[name] = {
            **dataclasses.asdict(v),
            # The server's count of messages not finished in it, after the drain: shown
            # beside the ledger's verdicts, not one of them (it also counts what the run
            # cannot know of, such as a monoton taken by a put that never wrote its row).
            "final_lag": lags.get(name),
            "violations": [f"{name} {violation}" for violation in v.violations()],
        }
    return out


async def _final_lag(client: ChaosClient, name: str) -> int | None:
    for server in client.urls:
        _, _, lag = await client.subscription(server, name)
        if lag is not None:
            return lag
    return None


def node_pids(cluster: ClusterConfig) -> list[int | None]:
    from cassieq.tools.devcluster.cluster import cluster_status

    return [st.pid for st in cluster_status(cluster)]


def _check_cluster_untouched(
    result: dict[str, Any],
    before: list[int | None],
    after: list[int | None],
    opts: ChaosOptions,
) -> None:
    """A node restarted by anyone but this run (the cluster is shared) makes the figures
    meaningless: say so, and fail the scenario."""
    result["cluster_pids"] = {"before": before, "after": after}
    ours = opts.node if result["scenario"] in NODE_SCENARIOS else None
    changed = [n for n, (b, a) in enumerate(zip(before, after, strict=True), 1) if b != a]
    foreign = [n for n in changed if n != ours]
    if foreign:
        result["passed"] = False
        result.setdefault("violations", []).append(
            f"cluster node(s) {foreign} restarted during the run by someone else"
        )


async def _settle_faults(task: asyncio.Task[None], injector: FaultInjector) -> None:
    """A kill or restart under way is let finish (a half-restarted node helps nobody); steps
    still waiting for their time are dropped."""
    if not task.done() and not injector.busy:
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def _within_one_bucket(pointers: dict[str, Any] | None) -> bool:
    if pointers is None:
        return False
    values = [int(pointers[k]) for k in ("reader", "invisibility", "repair")]
    return max(values) - min(values) <= 1


async def _create_account(url: str, token: str) -> str:
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session,
        session.post(
            f"{url}/api/v1/accounts", json=ACCOUNT, headers={"Authorization": f"Bearer {token}"}
        ) as response,
    ):
        body = await response.json(content_type=None)
        if response.status != 201:
            raise SetupError(f"account creation answered {response.status}: {body}")
        key: str = body["keys"]["primary"]
        return key


async def _create_queue(client: ChaosClient, opts: ChaosOptions) -> None:
    wanted = {
        "queueName": QUEUE,
        "bucketSize": opts.bucket_size,
        "maxDeliveryCount": opts.max_delivery_count,
        "repairWorkerPollSeconds": opts.repair_poll,
        "repairWorkerBucketFinalizeTimeSeconds": opts.finalize,
    }
    status, body = await client.create_queue("A", wanted)
    if status != 201:
        raise SetupError(f"queue creation answered {status}: {body}")
    # v1 answers a create with an empty body (as CassieQ): read the definition back, and
    # check that the options took (unknown fields are ignored by the API).
    status, body = await client.get_queue("A")
    if status != 200 or not isinstance(body, dict):
        raise SetupError(f"reading the new queue answered {status}: {body}")
    echoed = {
        "bucketSize": body.get("bucketSize"),
        "maxDeliveryCount": body.get("maxDeliveryCount"),
        "repairWorkerPollSeconds": body.get("repairWorkerPollFrequencySeconds"),
        "repairWorkerBucketFinalizeTimeSeconds": body.get(
            "repairWorkerTombstonedBucketTimeoutSeconds"
        ),
    }
    if any(echoed[k] != wanted[k] for k in echoed):
        raise SetupError(f"the queue's options did not take: asked {wanted}, got {body}")


async def _create_subscription(client: ChaosClient, name: str, mode: str = "ordered") -> None:
    status, body = await client.create_subscription("A", name, mode)
    if status != 201:
        raise SetupError(f"creating subscription {name} answered {status}: {body}")


async def _wait_queue_everywhere(client: ChaosClient, opts: ChaosOptions) -> None:
    """Both servers must know the queue (each caches queues for a moment) before the run."""
    for server in client.urls:
        for _ in range(50):
            call, delivery = await client.get(server, opts.lease)
            if call.status == 204:
                break
            if delivery is not None:
                raise SetupError("a fresh queue delivered a message")
            await asyncio.sleep(0.2)
        else:
            raise SetupError(f"server {server} does not see the queue")


async def _wait_subscription_everywhere(view: ChaosClient, opts: ChaosOptions) -> None:
    """Both servers must know the shared subscription (``view`` points at it) before the
    run: each answers its receive with an empty list."""
    for server in view.urls:
        for _ in range(50):
            call, got = await view.receive(server, opts.lease, 1, 0)
            if got:
                raise SetupError(f"a fresh subscription {view.shared_name} delivered a message")
            if call.status == 200:
                break
            await asyncio.sleep(0.2)
        else:
            raise SetupError(f"server {server} does not see subscription {view.shared_name}")
