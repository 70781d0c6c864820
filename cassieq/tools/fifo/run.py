"""A FIFO check end to end: a new .fifo queue, the workload, the verdicts, one result dict.

Against servers already running (``--endpoint``, with an account and key), or against
servers this run starts on a keyspace of its own (the local node, or the hosts
``CASSIEQ_CASSANDRA_HOSTS`` names), dropped afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cassieq.config import Settings
from cassieq.tools.fifo.checker import VIOLATIONS, check
from cassieq.tools.fifo.events import write_jsonl
from cassieq.tools.fifo.workload import (
    Credentials,
    FifoWorkload,
    Shape,
    create_fifo_queue,
    new_client,
)

Say = Callable[[str], None]
LEFT = [
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
]


def run_check(
    creds: Credentials,
    shape: Shape,
    say: Say,
    *,
    queue: str | None = None,
    keep_queue: bool = False,
    events: Path | None = None,
    hold: threading.Event | None = None,
) -> dict[str, Any]:
    """Blocking: the whole run against ``creds``' endpoints."""
    url = create_fifo_queue(creds, shape, queue)
    say(
        f"queue {url}: {shape.groups} groups x {shape.per_group}, {shape.consumers} consumers, "
        f"visibility {shape.visibility} s"
    )
    workload = FifoWorkload(creds, shape, url, say, hold=hold)
    queue_after: dict[str, str] = {}
    try:
        log = workload.run()
    finally:
        workload.stop()
        client = new_client(creds, creds.endpoints[0], shape)
        with contextlib.suppress(Exception):  # the figures matter more than these
            # What the queue says is left (approximate, as SQS's: shown, not judged).
            queue_after = client.get_queue_attributes(QueueUrl=url, AttributeNames=LEFT)[
                "Attributes"
            ]
            if not keep_queue:
                client.delete_queue(QueueUrl=url)
    if events is not None:
        write_jsonl(log, events)
    verdict = check(log)
    progress = workload.progress
    result = verdict.summary()
    sends_end = progress.sends_done or progress.finished
    acked_end = progress.all_acked or progress.finished
    elapsed = acked_end - progress.started
    result["run"] = {
        "queue": url,
        "endpoints": list(creds.endpoints),
        "shape": {k: v for k, v in vars(shape).items()},
        "timed_out": progress.timed_out,
        "harness_errors": progress.harness_errors,
        "foreign_messages": progress.foreign_messages,
        "seconds": {
            "sends": round(sends_end - progress.started, 1),
            "until_all_acked": round(elapsed, 1),
            "total": round(progress.finished - progress.started, 1),
        },
        "acked_per_second": round(result["acked"] / elapsed, 1) if elapsed > 0 else None,
        "queue_after": queue_after,
        "events": str(events) if events else None,
    }
    failures = [f"{VIOLATIONS[k]} {result[k]}" for k in VIOLATIONS if result[k]]
    if progress.timed_out:
        failures.append("timed out")
    if progress.harness_errors:
        failures.append("harness error")
    if progress.foreign_messages:
        failures.append("messages this run did not send")
    if result["messages"] < shape.groups * shape.per_group and not progress.timed_out:
        failures.append(f"only {result['messages']} messages stored")
    # "passed" (the checker's) becomes the run's: a timeout or a broken harness fails it too.
    result["ok"] = result["passed"] = not failures
    result["failures"] = failures
    return result


async def run_local(
    settings: Settings,
    *,
    keyspace: str,
    servers: int,
    shape: Shape,
    say: Say,
    keep_keyspace: bool = False,
    events: Path | None = None,
) -> dict[str, Any]:
    """``servers`` `cassieq serve` processes on ``keyspace`` (dropped and re-created), an
    account on the first, the check through all of them."""
    from cassieq.store.cassandra import apply_schema, connect, default_schema_dir, drop_keyspace
    from cassieq.tools.bench.servers import server_process

    cluster, session = await asyncio.to_thread(
        connect, settings.cassandra_hosts, settings.cassandra_port
    )
    try:
        await asyncio.to_thread(drop_keyspace, session, keyspace)
        await asyncio.to_thread(
            apply_schema, session, keyspace, settings.replication, default_schema_dir()
        )
        async with contextlib.AsyncExitStack() as stack:
            began = time.monotonic()
            first = await stack.enter_async_context(server_process(settings, keyspace))
            urls = [first.url]
            for _ in range(servers - 1):
                other = await stack.enter_async_context(
                    server_process(settings, keyspace, account=(first.account, first.key))
                )
                urls.append(other.url)
            say(f"{servers} server(s) on keyspace {keyspace} in {time.monotonic() - began:.1f} s")
            creds = Credentials(
                endpoints=tuple(urls),
                access_key=first.account,
                secret_key=first.key,
                region=settings.sqs_region,
            )
            result = await asyncio.to_thread(run_check, creds, shape, say, events=events)
        result["run"]["keyspace"] = keyspace
        return result
    finally:
        if not keep_keyspace:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(drop_keyspace, session, keyspace)
        await asyncio.to_thread(cluster.shutdown)
