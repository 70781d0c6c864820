"""LWTs per message of v2 batches on a real Cassandra: put -> receive(N) -> ack(N).

Not a test (it prints only): ``CLIENTS`` concurrent clients on one in-process engine, each
sending N messages (one grouped write), receiving up to N and acking them in one batch,
for ``SECONDS``. The LWTs are counted twice: the store calls of every LWT primitive
(CountingStore) and the conditional statements Cassandra actually ran (LwtTally: every
round of a batch, every retry). Usage:

    PYTHONPATH=. python scripts/batch_lwts.py [--hosts 127.0.0.1] [--keyspace KS]
        [--clients 32] [--batch 10] [--seconds 20] [--bucket-size 20] [--random-order]
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import time
from collections import Counter

from cassieq.engine import QueueEngine
from cassieq.logs import configure_logging
from cassieq.model import OutgoingMessage, QueueOptions
from cassieq.store.cassandra import CassandraStore, connect
from cassieq.store.counting import BUCKET_PARTITION_LWTS, CountingStore


async def run(args: argparse.Namespace) -> None:
    cluster, session = connect(args.hosts.split(","), args.port)
    try:
        inner = CassandraStore(session, args.keyspace)
        store = CountingStore(inner)
        engine = QueueEngine(store)
        account = f"lwts-{secrets.token_hex(4)}"
        await engine.accounts.create(account)
        await engine.create_queue(
            account, "q", QueueOptions(strict_fifo=args.strict_fifo, bucket_size=args.bucket_size)
        )
        acked = 0
        deadline = 0.0
        spent: Counter[str] = Counter()  # seconds, summed over clients, by step
        received: Counter[int] = Counter()  # receives by how many they got

        async def client(c: int) -> None:
            nonlocal acked
            i = 0
            while time.monotonic() < deadline:
                bodies = [f"c{c}-{i + k}" for k in range(args.batch)]
                i += args.batch
                t0 = time.monotonic()
                await engine.send(account, "q", [OutgoingMessage(body=b) for b in bodies])
                t1 = time.monotonic()
                got = await engine.receive(account, "q", args.batch, 30)
                t2 = time.monotonic()
                received[len(got)] += 1
                if got:
                    outcomes = await engine.ack_batch(account, "q", [d.receipt for d in got])
                    acked += sum(o is None for o in outcomes)
                spent.update({"send": t1 - t0, "receive": t2 - t1, "ack": time.monotonic() - t2})

        store.reset()
        inner.lwt_tally.counts.clear()
        started = time.monotonic()
        deadline = started + args.seconds
        await asyncio.gather(*(client(c) for c in range(args.clients)))
        elapsed = time.monotonic() - started
        sent_lwts = Counter[str]()
        for (primitive, event), n in inner.lwt_tally.counts.items():
            if event != "undecided":
                sent_lwts[primitive] += n
        calls = {k: v for k, v in store.calls.items() if k in sent_lwts or k in store.calls}
        print(f"clients={args.clients} batch={args.batch} seconds={elapsed:.1f}")
        print(f"messages acked: {acked} ({acked / elapsed:.0f}/s)")
        print(f"LWT store calls: {store.lwts} -> {store.lwts / max(acked, 1):.3f} per message")
        total = sum(sent_lwts.values())
        print(f"LWT statements run: {total} -> {total / max(acked, 1):.3f} per message")
        on_buckets = sum(n for p, n in sent_lwts.items() if p in BUCKET_PARTITION_LWTS)
        print(f"  of which on bucket partitions: {on_buckets / max(acked, 1):.3f} per message")
        print("  by primitive (statements run):", dict(sorted(sent_lwts.items())))
        events = Counter[str]()
        for (_, event), n in inner.lwt_tally.counts.items():
            events[event] += n
        print("  by outcome:", dict(sorted(events.items())))
        print("  store calls:", dict(sorted(calls.items())))
        print("  receives by size:", dict(sorted(received.items())))
        cycles = sum(received.values())
        print("  mean seconds per step:", {k: round(v / cycles, 3) for k, v in spent.items()})
    finally:
        cluster.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9042)
    parser.add_argument("--keyspace", default="cassieq_test_w1")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--bucket-size", type=int, default=QueueOptions().bucket_size)
    parser.add_argument("--random-order", dest="strict_fifo", action="store_false")
    configure_logging(level="warning")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
