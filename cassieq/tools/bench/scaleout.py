"""Scale-out by simulation: what partitions give when a Paxos round costs network round trips.

Run against the local cluster started with an inter-node delay
(``cassieq cassandra start --nodes 3 --inter-node-delay-ms 1``, see
cassieq/tools/devcluster/delay.py) and against the plain one, to compare:

    python -m cassieq.tools.bench.scaleout --keyspace cassieq_scaleout --json out.json

It measures, on an RF 3 keyspace of its own (schema applied; dropped first with --recreate):

1. the raw LWT round trip, one at a time: ``INSERT ... IF NOT EXISTS`` and ``UPDATE ... IF``
   at QUORUM / SERIAL: what one Paxos round costs (each round trip to a replica crosses the
   delay twice);
2. raw LWT throughput of N concurrent clients on one partition and on 8 (or --partitions)
   partitions: Paxos serialises one partition, distinct partitions run side by side;
3. the engine's v2 e2e (send a batch, receive and ack until it is through) with the same
   clients on one queue of P partitions, for each P of --partitions. Until queues have
   partitions (``QueueOptions.partitions``), ``--layout queues`` stands P queues in for P
   partitions: each partition of a queue is its own monoton, buckets and pointers, which is
   what a queue of its own is.

CPU seconds of this process (the engine) and of the cluster's JVMs are taken over each e2e
turn, per message: the other bound of the capacity model (docs/design/capacity-model.md).
Every phase runs for --seconds; nothing waits unbounded (LWTs time out at the server).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cassandra import ConsistencyLevel
from cassandra.cluster import Session

from cassieq.engine import QueueEngine
from cassieq.model import QueueOptions
from cassieq.store.cassandra import (
    CassandraStore,
    apply_schema,
    check_keyspace,
    connect,
    default_schema_dir,
    drop_keyspace,
    execute_async,
    server_version,
)
from cassieq.tools.bench.measure import Latencies, percentiles, run_clients
from cassieq.tools.bench.targets_v2 import EngineBatchTarget, cycle

Say = Callable[[str], None]
_TABLE = "scaleout_lwt"


def _prepare(session: Session, text: str) -> Any:
    statement = session.prepare(text)
    # Stated, not inherited: a Paxos round at QUORUM (SERIAL for its read) crosses to a
    # quorum of replicas; LOCAL_* would be the same in one datacenter.
    statement.consistency_level = ConsistencyLevel.QUORUM
    statement.serial_consistency_level = ConsistencyLevel.SERIAL
    return statement


async def lwt_round_trip(session: Session, keyspace: str, samples: int) -> dict[str, Any]:
    """One LWT at a time (no contention): INSERT IF NOT EXISTS on new partitions, then
    UPDATE IF on one row; milliseconds, nearest-rank percentiles."""
    insert = _prepare(
        session, f"INSERT INTO {keyspace}.{_TABLE} (k, c, v) VALUES (?, 0, 0) IF NOT EXISTS"
    )
    update = _prepare(
        session, f"UPDATE {keyspace}.{_TABLE} SET v = ? WHERE k = ? AND c = 0 IF v = ?"
    )
    read = _prepare(session, f"SELECT v FROM {keyspace}.{_TABLE} WHERE k = ? AND c = 0")
    tag = secrets.token_hex(4)
    out: dict[str, Any] = {"samples": samples}
    timings: list[float] = []
    timeouts = 0
    for i in range(samples):
        started = time.perf_counter()
        try:
            await execute_async(session, insert, (f"rt-{tag}-{i}",))
        except Exception:  # a server timeout: counted, not timed (its cost is the timeout)
            timeouts += 1
            continue
        timings.append((time.perf_counter() - started) * 1000)
    out["insert_if_not_exists_ms"] = _summary(timings)
    timings, value, row = [], 0, f"rt-{tag}-0"
    for _ in range(samples):
        started = time.perf_counter()
        try:
            await execute_async(session, update, (value + 1, row, value))
        except Exception:  # outcome unknown: read the row at SERIAL and go on from it
            timeouts += 1
            value = (await execute_async(session, read, (row,)))[0].v
            continue
        timings.append((time.perf_counter() - started) * 1000)
        value += 1
    out["update_if_ms"] = _summary(timings)
    out["timeouts"] = timeouts
    return out


async def lwt_rate(
    session: Session, keyspace: str, clients: int, seconds: float, partitions: int
) -> dict[str, Any]:
    """UPDATE IF per second by ``clients`` clients, each on a row of its own, the rows spread
    over ``partitions`` partitions (client i on partition i mod partitions). Server timeouts
    (Paxos contention past cas_contention_timeout) are counted, not fatal: the client reads
    its row back and goes on."""
    tag = secrets.token_hex(4)
    insert = session.prepare(f"INSERT INTO {keyspace}.{_TABLE} (k, c, v) VALUES (?, ?, 0)")
    update = _prepare(
        session, f"UPDATE {keyspace}.{_TABLE} SET v = ? WHERE k = ? AND c = ? IF v = ?"
    )
    read = _prepare(session, f"SELECT v FROM {keyspace}.{_TABLE} WHERE k = ? AND c = ?")
    rows = [(f"p-{tag}-{i % partitions}", i) for i in range(clients)]
    for row in rows:
        session.execute(insert, row)
    values = [0] * clients
    latencies: list[float] = []
    failed = 0

    async def step(client: int) -> int:
        nonlocal failed
        started = time.perf_counter()
        try:
            result = await execute_async(
                session, update, (values[client] + 1, *rows[client], values[client])
            )
        except Exception:  # a timed-out Paxos round: outcome unknown, read it at SERIAL
            failed += 1
            values[client] = (await execute_async(session, read, rows[client]))[0].v
            return 0
        latencies.append((time.perf_counter() - started) * 1000)
        values[client] += 1
        return 1 if result[0][0] else 0  # [applied]; each row has one writer: always applied

    moved, took = await run_clients(clients, seconds, step)
    return {
        "clients": clients,
        "partitions": partitions,
        "per_s": round(moved / took, 1),
        "timeouts": failed,
        "latency_ms": _summary(latencies),
    }


def _summary(values: list[float]) -> dict[str, float]:
    mean = round(sum(values) / len(values), 2) if values else 0.0
    return {"mean": mean, **percentiles(values, p50=0.5, p90=0.9, p99=0.99)}


async def engine_e2e(
    store: CassandraStore,
    *,
    clients: int,
    seconds: float,
    batch: int,
    partitions: int,
    layout: str,
    engines: int,
    jvm_pids: list[int],
) -> dict[str, Any]:
    """v2 e2e messages per second: ``clients`` clients cycle batches on one queue of
    ``partitions`` partitions (layout "partitions"), or on ``partitions`` queues, client i on
    queue i mod partitions (layout "queues").

    ``engines`` QueueEngines stand for as many API servers: one engine groups the concurrent
    sends of all its clients into shared LWTs, so one engine alone hides what Paxos costs
    servers that contend for the same partitions. Client i is served by engine
    (i // queues) mod engines, so the clients of every queue spread over the engines."""
    all_engines = [QueueEngine(store) for _ in range(engines)]
    account = f"so-{secrets.token_hex(4)}"
    await all_engines[0].create_account(account)
    targets = [EngineBatchTarget(engine, account) for engine in all_engines]
    engine = all_engines[0]
    tag = secrets.token_hex(3)
    if layout == "partitions":
        names = [f"so-{tag}-p{partitions}"]
        options = QueueOptions(partitions=partitions)  # type: ignore[call-arg,unused-ignore]
    else:
        names = [f"so-{tag}-q{i}" for i in range(partitions)]
        options = QueueOptions()
    for name in names:
        await engine.create_queue(account, name, options)
    cpu_before = _cpu_seconds(jvm_pids)
    own_before = time.process_time()
    width = len(names)
    moved, took = await run_clients(
        clients,
        seconds,
        lambda i: cycle(targets[(i // width) % engines], names[i % width], batch, i),
    )
    jvm_cpu = _cpu_seconds(jvm_pids) - cpu_before
    own_cpu = time.process_time() - own_before
    per_message = max(moved, 1)
    return {
        "layout": layout,
        "partitions": partitions,
        "clients": clients,
        "engines": engines,
        "batch": batch,
        "e2e_per_s": round(moved / took, 1),
        "messages": moved,
        "engine_cpu_ms_per_message": round(own_cpu * 1000 / per_message, 3),
        "cassandra_cpu_ms_per_message": round(jvm_cpu * 1000 / per_message, 3),
        "latency_ms": _merged_latencies(targets),
    }


def _merged_latencies(targets: list[EngineBatchTarget]) -> dict[str, dict[str, float]]:
    merged = Latencies()
    for target in targets:
        for name, values in target.latencies.samples.items():
            merged.samples.setdefault(name, []).extend(values)
    return merged.summary()


def _cpu_seconds(pids: list[int]) -> float:
    """utime + stime of the processes (the cluster's JVMs), in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (stat fields 14, 15)
    return total / tick


def _cluster_pids() -> tuple[list[int], dict[str, Any]]:
    """The running local cluster's JVM pids and what it is (delayed or not, and by how much)."""
    from cassieq.tools.devcluster.cassandra import owned_pid
    from cassieq.tools.devcluster.cluster import ClusterConfig, running_variant

    cfg = running_variant(ClusterConfig.from_env())
    pids = [pid for n in cfg.numbers if (pid := owned_pid(cfg.node(n))) is not None]
    return pids, {"nodes": len(pids), "inter_node_delay_ms": cfg.inter_node_delay_ms}


async def run(args: argparse.Namespace, say: Say) -> dict[str, Any]:
    check_keyspace(args.keyspace)
    counts = sorted({int(p) for p in args.partitions.split(",")})
    layout = args.layout
    if layout == "auto":
        layout = "partitions" if "partitions" in QueueOptions.__struct_fields__ else "queues"
    pids, cluster_info = _cluster_pids()
    cluster, session = connect(args.hosts.split(","), args.port, connect_timeout=10.0)
    try:
        if args.recreate:
            drop_keyspace(session, args.keyspace)
        replication = f"{{'class': 'NetworkTopologyStrategy', 'datacenter1': {args.rf}}}"
        apply_schema(session, args.keyspace, replication, default_schema_dir())
        session.execute(
            f"CREATE TABLE IF NOT EXISTS {args.keyspace}.{_TABLE} "
            "(k text, c int, v bigint, PRIMARY KEY (k, c))"
        )
        result: dict[str, Any] = {
            "label": args.label,
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "cassandra": server_version(session),
            "cluster": cluster_info,
            "replication_factor": args.rf,
            "cores": os.cpu_count(),
            "load_average_at_start": list(os.getloadavg()),
            "seconds_per_measurement": args.seconds,
        }
        phases = set(args.phases.split(","))
        if "lwt" in phases:
            say(f"LWT round trip, one at a time, {args.samples} samples each ...")
            result["lwt_round_trip"] = await lwt_round_trip(session, args.keyspace, args.samples)
        result["lwt_rate"] = {}
        for p in counts if "lwt" in phases else ():
            say(f"LWT rate, {args.lwt_clients} clients on {p} partition(s) ...")
            result["lwt_rate"][str(p)] = await lwt_rate(
                session, args.keyspace, args.lwt_clients, args.seconds, p
            )
        store = CassandraStore(session, args.keyspace)
        result["e2e"] = {}
        for p in counts if "e2e" in phases else ():
            say(f"engine v2 b{args.batch} e2e, {args.clients} clients, {p} ({layout}) ...")
            result["e2e"][str(p)] = await engine_e2e(
                store,
                clients=args.clients,
                seconds=args.seconds,
                batch=args.batch,
                partitions=p,
                layout=layout,
                engines=args.engines,
                jvm_pids=pids,
            )
        low, high = str(counts[0]), str(counts[-1])
        result["ratios"] = {"of": f"{high} over {low} partitions"}
        if result["lwt_rate"]:
            result["ratios"]["lwt_rate"] = _ratio(result["lwt_rate"], high, low, "per_s")
        if result["e2e"]:
            result["ratios"]["e2e"] = _ratio(result["e2e"], high, low, "e2e_per_s")
        result["load_average_at_end"] = list(os.getloadavg())
        return result
    finally:
        cluster.shutdown()


def _ratio(section: dict[str, Any], high: str, low: str, key: str) -> float:
    return round(float(section[high][key]) / max(float(section[low][key]), 0.001), 2)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m cassieq.tools.bench.scaleout", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--hosts", default="127.0.0.2,127.0.0.3,127.0.0.4")
    p.add_argument("--port", type=int, default=9042)
    p.add_argument("--keyspace", default="cassieq_scaleout")
    p.add_argument("--rf", type=int, default=3)
    p.add_argument("--partitions", default="1,8", help="partition counts, comma-separated")
    p.add_argument("--layout", choices=("auto", "partitions", "queues"), default="auto")
    p.add_argument("--clients", type=int, default=16, help="engine e2e clients")
    p.add_argument("--lwt-clients", type=int, default=16, help="raw LWT rate clients")
    p.add_argument("--engines", type=int, default=8, help="engines (servers) for the e2e")
    p.add_argument("--batch", type=int, default=10)
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--samples", type=int, default=200, help="LWT round-trip samples")
    p.add_argument("--phases", default="lwt,e2e", help="lwt (raw LWTs), e2e (the engine)")
    p.add_argument("--recreate", action="store_true", help="drop the keyspace first")
    p.add_argument("--label", default="")
    p.add_argument("--json", type=Path, default=None, help="write the result here too")
    return p


def main(argv: list[str] | None = None) -> None:
    from cassieq.logs import configure_logging

    args = parser().parse_args(argv)
    configure_logging("console", "warning")  # the engine's info lines are not the result

    def say(message: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)

    result = asyncio.run(run(args, say))
    text = json.dumps(result, indent=2)
    if args.json is not None:
        args.json.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
