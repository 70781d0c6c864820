"""The LWT ceiling: compare-and-set updates issued directly with cassandra-driver."""

from __future__ import annotations

import secrets

from cassandra.cluster import Session

from cassieq.store.cassandra import check_keyspace, execute_async
from cassieq.tools.bench.measure import rate


async def raw_cas_rate(
    session: Session,
    keyspace: str,
    concurrency: int,
    seconds: float,
    *,
    one_partition: bool = False,
) -> float:
    """Compare-and-set updates per second, each client on its own row.

    With ``one_partition`` the rows share one partition, as the messages of a bucket do:
    Cassandra runs Paxos per partition, so LWTs on one partition queue behind each other.
    """
    check_keyspace(keyspace)
    session.execute(
        f"CREATE TABLE IF NOT EXISTS {keyspace}.bench_lwt "
        "(k text, c int, v bigint, PRIMARY KEY (k, c))"
    )
    insert = session.prepare(f"INSERT INTO {keyspace}.bench_lwt (k, c, v) VALUES (?, ?, 0)")
    cas = session.prepare(f"UPDATE {keyspace}.bench_lwt SET v = ? WHERE k = ? AND c = ? IF v = ?")
    shared = f"raw-{secrets.token_hex(6)}"
    keys = [
        (shared if one_partition else f"raw-{secrets.token_hex(6)}", i) for i in range(concurrency)
    ]
    for key in keys:
        session.execute(insert, key)
    values = [0] * concurrency  # each client's row holds its own count of updates

    async def update(client: int) -> bool:
        value = values[client]
        await execute_async(session, cas, (value + 1, *keys[client], value))
        values[client] = value + 1
        return True

    return await rate(concurrency, seconds, update)
