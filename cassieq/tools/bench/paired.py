"""v1 and v2 HTTP e2e in turns on one server: the ratio issue #15 asks for, without the
machine's drift between two measurements made minutes apart.

The run's v1 section and its v2 section measure their HTTP e2e about three minutes apart,
five seconds each. This machine's speed drifts by tens of percent over minutes, and so
did that ratio: in one run both v2 HTTP figures were 40% below the runs before and after
it, while the v1 figure was not. Here the two alternate in turns of equal length on one
server, v1 v2 v2 v1 in each round, so that a drift steady over a round weighs on both
alike; each figure is what its turns moved over the time they took.

Before the timed turns, one untimed turn of each API, v2 then v1, warms the server and
opens the clients' connections (the first timed turn was v1's, on a cold server), and
puts a v2 turn before the first v1 turn: each API then has half of its turns right after
a v2 turn, which writes five times as much as a v1 turn for Cassandra to flush and compact.

The turns run in a keyspace of their own (emptied first), on queues that wait an hour
before finalizing a sealed bucket: no turn carries repair, whose work (a finalize, reads,
the bucket's deletion) is per bucket, so a v2 turn leaves five times as much of it. A
server repairs every queue of its keyspace 15 s after a bucket's seal by default, and with
that (in a keyspace of their own) one run's ratio was 6.35 where the sections' was 4.94;
in the run's keyspace the turns' server also took up the earlier measurements' repair.
The sections carry none of their own either (it comes due after their five seconds), but
they do carry the earlier measurements'. So the figures here leave repair out for both
APIs; they are not a steady state.

SQS through boto3 takes turns on the same server too (issue #38: its e2e against v2's in the
same batch, on the same server), in batches of at most 10, between the v2 turns: v1 v2 sqs
sqs v2 v1. Every turn also counts the server's CPU time (cassieq.tools.bench.cpu) and the
load generator's: CPU seconds per 1,000 messages of each API, with no repair in them and no
other measurement's queues to repair, are the figures the server's cost per message is
judged on.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from cassandra.cluster import Session

from cassieq.config import Settings
from cassieq.store.cassandra import apply_schema, default_schema_dir, drop_keyspace
from cassieq.tools.bench.cpu import CpuMeter
from cassieq.tools.bench.measure import run_clients
from cassieq.tools.bench.servers import server_process
from cassieq.tools.bench.targets import HttpTarget, put_get_ack
from cassieq.tools.bench.targets_sqs import MAX_SQS_BATCH, SqsBatchTarget
from cassieq.tools.bench.targets_v2 import HttpBatchTarget, cycle

ROUND = ("v1", "v2", "sqs", "sqs", "v2", "v1")
WARM_UP = ("v2", "sqs", "v1")  # untimed, before the first round
APIS = ("v1", "v2", "sqs")
# An hour before a sealed bucket is finalized (and repaired): after the turns.
NO_REPAIR_DURING_TURNS = {"repairWorkerBucketFinalizeTimeSeconds": 3600}


def paired_keyspace(keyspace: str) -> str:
    """The turns' keyspace beside the run's."""
    return f"{keyspace}_paired"


async def paired_http_e2e(
    settings: Settings,
    session: Session,
    keyspace: str,
    *,
    clients: int,
    seconds: float,
    batch: int,
    rounds: int,
) -> dict[str, Any]:
    """Messages per second put->get->ack over /api/v1, send->receive->ack in batches of
    ``batch`` over /api/v2 and in batches of up to 10 through boto3 over SQS, ``rounds``
    rounds of six turns of ``seconds`` after a warm-up turn of each; the ratios, and each
    API's CPU seconds per 1,000 messages (server and client). ``keyspace`` is dropped and
    made anew first."""
    drop_keyspace(session, keyspace)
    apply_schema(session, keyspace, settings.replication, default_schema_dir())
    async with server_process(settings, keyspace) as server:
        v1 = HttpTarget(server.url, server.account, server.key)
        v2 = HttpBatchTarget(server.url, server.account, server.key)
        sqs = SqsBatchTarget(server.url, server.account, server.key, clients)
        sqs_batch = min(batch, MAX_SQS_BATCH)
        try:
            tag = secrets.token_hex(4)
            q1, q2, q3 = f"p1-{tag}", f"p2-{tag}", f"p3-{tag}"
            await v1.create_queue(q1, NO_REPAIR_DURING_TURNS)
            await v2.create_queue(q2, NO_REPAIR_DURING_TURNS)
            # Made through v1 for the same option (CreateQueue has no attribute for it).
            await v1.create_queue(q3, NO_REPAIR_DURING_TURNS)
            await sqs.use_queue(q3)

            async def one(i: int) -> int:
                return int(await put_get_ack(v1, q1, f"c-{i}"))

            async def batched(i: int) -> int:
                return await cycle(v2, q2, batch, i)

            async def through_sqs(i: int) -> int:
                return await cycle(sqs, q3, sqs_batch, i)

            step = {"v1": one, "v2": batched, "sqs": through_sqs}
            for api in WARM_UP:
                await run_clients(clients, seconds, step[api])
            moved = dict.fromkeys(APIS, 0)
            took = dict.fromkeys(APIS, 0.0)
            server_cpu = dict.fromkeys(APIS, 0.0)
            client_cpu = dict.fromkeys(APIS, 0.0)
            turns: list[dict[str, Any]] = []
            for _ in range(rounds):
                for api in ROUND:
                    meter = CpuMeter(server.pid)
                    meter.start()
                    cpu = time.process_time()
                    n, elapsed = await run_clients(clients, seconds, step[api])
                    spent = meter.spent()
                    moved[api] += n
                    took[api] += elapsed
                    server_cpu[api] += spent.get("server", 0.0)
                    client_cpu[api] += spent["client"]
                    # The load generator shares the cores: how much of one it used.
                    client = (time.process_time() - cpu) / elapsed
                    turns.append(
                        {
                            "api": api,
                            "e2e_per_s": round(n / elapsed, 1),
                            "client_cores": round(client, 2),
                            "server_cores": round(spent.get("server", 0.0) / elapsed, 2),
                        }
                    )
        finally:
            await v1.close()
            await v2.close()
            await sqs.close()
    v1_rate, v2_rate, sqs_rate = (moved[api] / max(took[api], 1e-9) for api in APIS)
    return {
        "batch": batch,
        "sqs_batch": sqs_batch,
        "seconds_per_turn": seconds,
        "turns": turns,
        "v1_e2e_per_s": round(v1_rate, 1),
        "v2_e2e_per_s": round(v2_rate, 1),
        "sqs_e2e_per_s": round(sqs_rate, 1),
        "ratio": round(v2_rate / max(v1_rate, 0.001), 2),
        "sqs_over_v2": round(sqs_rate / max(v2_rate, 0.001), 2),
        # CPU seconds per 1,000 messages e2e over each API's turns.
        "cpu_s_per_1000": {
            api: {
                "server_cpu_s_per_1000": round(server_cpu[api] * 1000 / max(moved[api], 1), 3),
                "client_cpu_s_per_1000": round(client_cpu[api] * 1000 / max(moved[api], 1), 3),
            }
            for api in APIS
        },
    }
