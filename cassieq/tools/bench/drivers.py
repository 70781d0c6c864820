"""``cassieq bench driver``: what a request costs in the Python driver the store uses, beside
a native one (acsylla, the DataStax C++ driver's asyncio bindings), against the same node.

The server's CPU per message (issue 38) is now spread thin over the HTTP layer, the engine
and the driver; on two shared cores, what the driver spends is also what Cassandra does not
get. This measures the floor under the store: the store's own way of sending (cassandra-driver
through ``execute_async``, batches bound by ``add_prepared``) and acsylla's, with the same
three requests a message's life is made of (a read, a compare-and-set, a conditional batch
of ``BATCH_ROWS`` rows of one partition, as a grouped take or ack), ``clients`` of them in
flight, over ``seconds`` each. CPU is the whole process's (every thread of either driver).

Each client updates rows of its own, and every update is conditional on the value it wrote
before: a run checks at the end that each row holds as many updates as were counted, so a
request answered but not applied cannot pass for one done.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from cassandra.query import BatchStatement, BatchType

from cassieq.config import Settings
from cassieq.store.cassandra import check_keyspace, connect, drop_keyspace, execute_async
from cassieq.store.cassandra.binding import add_prepared
from cassieq.tools.bench.measure import run_clients

BATCH_ROWS = 10
BODY = b"m" * 64  # a small message body in each batch row
REQUESTS = ("read", "lwt", "batch")
DRIVERS = ("cassandra-driver", "acsylla")

Step = Callable[[int], Awaitable[bool]]
# Per request kind (REQUESTS): requests sent, per second, CPU ms per request.
Figures = dict[str, dict[str, float]]


class DriverBenchError(RuntimeError):
    """A run that cannot measure what it says (a driver missing, an update not applied)."""


def _table(keyspace: str) -> str:
    return f"{keyspace}.bench_driver"


async def _turn(clients: int, seconds: float, step: Step) -> dict[str, float]:
    async def one(index: int) -> int:
        return 1 if await step(index) else 0

    started = time.process_time()
    count, elapsed = await run_clients(clients, seconds, one)
    cpu_ms = (time.process_time() - started) * 1000 / count if count else 0.0
    return {
        "requests": count,
        "per_s": round(count / elapsed, 1),
        "cpu_ms_per_request": round(cpu_ms, 4),
    }


async def _turns(clients: int, seconds: float, steps: tuple[Step, Step, Step]) -> Figures:
    """A turn of each request kind (REQUESTS' order), one after the other."""
    return {
        request: await _turn(clients, seconds, step)
        for request, step in zip(REQUESTS, steps, strict=True)
    }


class _Rows:
    """Each client's partition and the value its rows hold (every update adds one)."""

    def __init__(self, driver: str, clients: int) -> None:
        tag = secrets.token_hex(4)
        self.keys = [f"{driver[:3]}-{tag}-{i}" for i in range(clients)]
        self.single = [0] * clients  # row 0 of each partition: the single LWTs
        self.batched = [0] * clients  # rows 1..BATCH_ROWS: the batches


async def _python_driver(
    settings: Settings, keyspace: str, clients: int, seconds: float
) -> Figures:
    cluster, session = connect(settings.cassandra_hosts, settings.cassandra_port)
    try:
        table = _table(keyspace)
        rows = _Rows("python", clients)
        insert = session.prepare(f"INSERT INTO {table} (k, c, v, body) VALUES (?, ?, 0, ?)")
        for key in rows.keys:
            for c in range(BATCH_ROWS + 1):
                session.execute(insert, (key, c, BODY))
        read = session.prepare(f"SELECT v FROM {table} WHERE k = ? AND c = 0")
        cas = session.prepare(f"UPDATE {table} SET v = ?, body = ? WHERE k = ? AND c = ? IF v = ?")

        async def one_read(i: int) -> bool:
            await execute_async(session, read, (rows.keys[i],))
            return True

        async def one_lwt(i: int) -> bool:
            v = rows.single[i]
            answer = await execute_async(session, cas, (v + 1, BODY, rows.keys[i], 0, v))
            _applied(answer[0][0], "cassandra-driver", "lwt")
            rows.single[i] = v + 1
            return True

        async def one_batch(i: int) -> bool:
            v = rows.batched[i]
            batch = BatchStatement(batch_type=BatchType.UNLOGGED)
            for c in range(1, BATCH_ROWS + 1):
                add_prepared(batch, cas, (v + 1, BODY, rows.keys[i], c, v))
            answer = await execute_async(session, batch, None)
            _applied(answer[0][0], "cassandra-driver", "batch")
            rows.batched[i] = v + 1
            return True

        figures = await _turns(clients, seconds, (one_read, one_lwt, one_batch))
        check = session.prepare(f"SELECT c, v FROM {table} WHERE k = ?")
        for i, key in enumerate(rows.keys):
            held = {row[0]: row[1] for row in session.execute(check, (key,))}
            _held_as_counted(held, rows.single[i], rows.batched[i], "cassandra-driver")
        return figures
    finally:
        cluster.shutdown()


async def _acsylla(settings: Settings, keyspace: str, clients: int, seconds: float) -> Figures:
    try:
        import acsylla
    except ImportError as exc:
        raise DriverBenchError(
            "acsylla is not installed: `pip install -e '.[dev]'` (or `pip install acsylla`)"
        ) from exc
    cluster = acsylla.create_cluster(
        list(settings.cassandra_hosts),
        port=settings.cassandra_port,
        protocol_version=4,
        consistency="LOCAL_QUORUM",  # as the store's statements
        serial_consistency="LOCAL_SERIAL",
        retry_policy="fallthrough",  # the store never lets a driver re-send an LWT
        tcp_nodelay=True,
        # Its C++ driver is Scylla's fork: against Cassandra it logs, as an error, on every
        # connection, that the node has no shards. A real failure raises.
        log_level="critical",
    )
    session = await cluster.create_session()
    try:
        table = _table(keyspace)
        rows = _Rows("acsylla", clients)
        insert = await session.create_prepared(
            f"INSERT INTO {table} (k, c, v, body) VALUES (?, ?, 0, ?)"
        )
        for key in rows.keys:
            for c in range(BATCH_ROWS + 1):
                statement = insert.bind()
                statement.bind_list([key, c, BODY])
                await session.execute(statement)
        read = await session.create_prepared(f"SELECT v FROM {table} WHERE k = ? AND c = 0")
        cas = await session.create_prepared(
            f"UPDATE {table} SET v = ?, body = ? WHERE k = ? AND c = ? IF v = ?"
        )

        async def one_read(i: int) -> bool:
            statement = read.bind()
            statement.bind_list([rows.keys[i]])
            await session.execute(statement)
            return True

        async def one_lwt(i: int) -> bool:
            v = rows.single[i]
            statement = cas.bind()
            statement.bind_list([v + 1, BODY, rows.keys[i], 0, v])
            answer = await session.execute(statement)
            _applied(answer.first().column_value("[applied]"), "acsylla", "lwt")
            rows.single[i] = v + 1
            return True

        async def one_batch(i: int) -> bool:
            v = rows.batched[i]
            batch = acsylla.create_batch_unlogged()
            for c in range(1, BATCH_ROWS + 1):
                statement = cas.bind()
                statement.bind_list([v + 1, BODY, rows.keys[i], c, v])
                batch.add_statement(statement)
            answer = await session.execute_batch(batch)
            _applied(answer.first().column_value("[applied]"), "acsylla", "batch")
            rows.batched[i] = v + 1
            return True

        figures = await _turns(clients, seconds, (one_read, one_lwt, one_batch))
        check = await session.create_prepared(f"SELECT c, v FROM {table} WHERE k = ?")
        for i, key in enumerate(rows.keys):
            statement = check.bind()
            statement.bind_list([key])
            result = await session.execute(statement)
            held = {row.column_value("c"): row.column_value("v") for row in result.all()}
            _held_as_counted(held, rows.single[i], rows.batched[i], "acsylla")
        return figures
    finally:
        await session.close()


def _applied(flag: Any, driver: str, request: str) -> None:
    if flag is not True:
        raise DriverBenchError(f"{driver}: a {request} was not applied (another writer?)")


def _held_as_counted(held: dict[Any, Any], single: int, batched: int, driver: str) -> None:
    expected = {0: single, **{c: batched for c in range(1, BATCH_ROWS + 1)}}
    if held != expected:
        raise DriverBenchError(f"{driver}: rows hold {held}, the run counted {expected}")


async def run_drivers(
    settings: Settings,
    *,
    keyspace: str,
    clients: int,
    seconds: float,
    say: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Both drivers' figures, and acsylla's CPU per request as a share of the Python
    driver's (``cpu_ratio``, lower is cheaper)."""
    check_keyspace(keyspace)
    cluster, session = connect(settings.cassandra_hosts, settings.cassandra_port)
    try:
        drop_keyspace(session, keyspace)  # waits for the schema to agree, as every bench
        session.execute(f"CREATE KEYSPACE {keyspace} WITH replication = {settings.replication}")
        session.execute(
            f"CREATE TABLE {_table(keyspace)} "
            "(k text, c int, v bigint, body blob, PRIMARY KEY (k, c))"
        )
    finally:
        cluster.shutdown()
    say(f"cassandra-driver: read, LWT, batch of {BATCH_ROWS}, {clients} in flight ...")
    python = await _python_driver(settings, keyspace, clients, seconds)
    say(f"acsylla: read, LWT, batch of {BATCH_ROWS}, {clients} in flight ...")
    native = await _acsylla(settings, keyspace, clients, seconds)
    ratio = {
        r: round(native[r]["cpu_ms_per_request"] / python[r]["cpu_ms_per_request"], 3)
        for r in REQUESTS
        if python[r]["cpu_ms_per_request"]
    }
    return {
        "clients": clients,
        "seconds": seconds,
        "batch_rows": BATCH_ROWS,
        "drivers": {"cassandra-driver": python, "acsylla": native},
        "cpu_ratio": ratio,
    }


def drivers_table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['clients']} requests in flight, {result['seconds']} s each "
        f"(batch: {result['batch_rows']} conditional rows of one partition)",
        f"{'request':8} {'driver':17} {'per s':>10} {'CPU ms/request':>15}",
    ]
    for request in REQUESTS:
        for driver in DRIVERS:
            figures = result["drivers"][driver][request]
            lines.append(
                f"{request:8} {driver:17} {figures['per_s']:>10.1f} "
                f"{figures['cpu_ms_per_request']:>15.4f}"
            )
        if request in result["cpu_ratio"]:
            lines.append(f"{'':8} {'acsylla ÷ python':17} {result['cpu_ratio'][request]:>26.3f}")
    return "\n".join(lines)
