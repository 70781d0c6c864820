"""`cassieq chaos --fifo`: one scenario's faults under the FIFO check's workload.

The scenario's keyspace, two servers and faults are chaos's (``servers``, ``faults``); the
workload and the verdicts are `cassieq fifo-check`'s (boto3 through both servers' SQS
endpoints, ``cassieq.tools.fifo``). The chaos options map onto the FIFO workload: --messages
over --groups groups, --consumers, --lease as the visibility timeout, one first delivery in
--unacked-every left to expire, --rate paces the sends (the faults are timed against the send
phase: messages / rate seconds). The run does not end before every fault was injected and
healed, and then every message acked.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

from cassieq.model import DeduplicationScope
from cassieq.store.cassandra import apply_schema, connect, default_schema_dir, drop_keyspace
from cassieq.tools.chaos.faults import FaultInjector, ensure_cluster, plan
from cassieq.tools.chaos.ledger import Ledger
from cassieq.tools.chaos.options import ChaosOptions, Scenario
from cassieq.tools.chaos.servers import new_servers
from cassieq.tools.fifo.run import run_check
from cassieq.tools.fifo.workload import Credentials, Shape

if TYPE_CHECKING:
    from cassieq.tools.devcluster.cluster import ClusterConfig

Say = Callable[[str], None]
READY_TIMEOUT_S = 60.0
RETRY_FRACTION = 0.05


def fifo_shape(opts: ChaosOptions, groups: int, dedup_scope: DeduplicationScope = "queue") -> Shape:
    return Shape(
        groups=groups,
        dedup_scope=dedup_scope,
        per_group=max(1, opts.messages // groups),
        consumers=opts.consumers,
        expire_fraction=1 / opts.unacked_every if opts.unacked_every else 0.0,
        retry_fraction=RETRY_FRACTION,
        visibility=opts.lease,
        timeout=opts.deadline,
        rate=opts.rate,
        request_timeout=opts.request_timeout,
        seed=opts.seed,
    )


async def run_fifo_scenario(
    scenario: Scenario,
    opts: ChaosOptions,
    cluster: ClusterConfig | None,
    say: Say,
    groups: int,
    dedup_scope: DeduplicationScope = "queue",
) -> dict[str, Any]:
    keyspace = f"cassieq_chaos_fifo_{scenario.replace('-', '_')}_{secrets.token_hex(3)}"

    def note(message: str) -> None:
        say(f"[{scenario} fifo] {message}")

    with contextlib.ExitStack() as stack:
        if opts.log_dir is not None:
            log_dir = opts.log_dir / keyspace
            log_dir.mkdir(parents=True, exist_ok=True)
        else:
            log_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="chaos-")))
        if cluster is not None:
            await asyncio.to_thread(ensure_cluster, cluster, note)
        note(f"keyspace {keyspace} on {','.join(opts.hosts)} ({opts.replication})")
        db, session = await asyncio.to_thread(connect, opts.hosts, opts.native_port)
        try:
            await asyncio.to_thread(
                apply_schema, session, keyspace, opts.replication, default_schema_dir()
            )
            result = await _with_servers(
                scenario, opts, cluster, keyspace, log_dir, note, groups, dedup_scope
            )
        finally:
            if not opts.keep_keyspace:
                try:
                    await asyncio.to_thread(drop_keyspace, session, keyspace)
                except Exception as exc:  # a failed drop must not hide the run's figures
                    note(f"could not drop keyspace {keyspace}: {exc}")
            await asyncio.to_thread(db.shutdown)
    result.update(scenario=scenario, keyspace=keyspace, fifo=True, dedup_scope=dedup_scope)
    return result


async def _with_servers(
    scenario: Scenario,
    opts: ChaosOptions,
    cluster: ClusterConfig | None,
    keyspace: str,
    log_dir: Path,
    note: Say,
    groups: int,
    dedup_scope: DeduplicationScope,
) -> dict[str, Any]:
    token = secrets.token_urlsafe(32)
    servers = new_servers(
        ("A", "B"),
        log_dir,
        hosts=opts.hosts,
        native_port=opts.native_port,
        keyspace=keyspace,
        admin_token=token,
        receipt_secret=secrets.token_urlsafe(24),
        partitions=opts.partitions,
        workers=opts.workers,
    )
    shape = fifo_shape(opts, groups, dedup_scope)
    ledger = Ledger()  # the injector writes its faults here
    injector: FaultInjector | None = None
    faults_done = threading.Event()
    try:
        for server in servers.values():
            server.start()
        await asyncio.gather(*(s.wait_ready(READY_TIMEOUT_S) for s in servers.values()))
        account, key = await _create_account(servers["A"].url, token)
        creds = Credentials(
            endpoints=tuple(s.url for s in servers.values()),
            access_key=account,
            secret_key=key,
            region=_region(servers["A"].env),
        )
        send_seconds = shape.groups * shape.per_group / opts.rate
        injector = FaultInjector(
            plan(scenario, send_seconds, opts.server_restart_delay),
            ledger=ledger,
            servers=servers,
            cluster=cluster,
            node=opts.node,
            say=note,
        )
        check = asyncio.create_task(
            asyncio.to_thread(run_check, creds, shape, note, hold=faults_done)
        )
        # The queue is made before the first send: the faults' clock starts about then.
        faults = asyncio.create_task(injector.run(time.monotonic()))
        faults.add_done_callback(lambda _t: faults_done.set())
        try:
            result = await check
        finally:
            if not faults.done():
                faults.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await faults
    finally:
        if injector is not None:
            await injector.heal()
        for server in servers.values():
            await asyncio.to_thread(server.stop)
    assert injector is not None  # made before the check ran, or we raised
    if injector.errors:
        result["failures"].append("fault injection failed")
        result["ok"] = False
    result["run"]["faults"] = [dataclasses.asdict(f) for f in ledger.faults]
    result["run"]["fault_errors"] = injector.errors
    result["run"]["server_errors"] = {
        name: errors for name, s in servers.items() if (errors := s.logged_errors())
    }
    result["passed"] = result["ok"]
    result["violations"] = result["failures"]
    return result


def _region(env: Any) -> str:
    from cassieq.config import Settings

    return str(env.get("CASSIEQ_SQS_REGION") or Settings().sqs_region)


async def _create_account(url: str, token: str) -> tuple[str, str]:
    name = f"fifo-{secrets.token_hex(3)}"
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session,
        session.post(
            f"{url}/api/v1/accounts", json=name, headers={"Authorization": f"Bearer {token}"}
        ) as response,
    ):
        body = await response.json(content_type=None)
        if response.status != 201:
            raise RuntimeError(f"account creation answered {response.status}: {body}")
        return name, str(body["keys"]["primary"])
