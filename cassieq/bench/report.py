"""The benchmark's table for people."""

from __future__ import annotations

from typing import Any


def table(result: dict[str, Any]) -> str:
    lines = [
        f"cassieq bench, {result['date']}, Apache Cassandra {result['cassandra']}, "
        f"{result['cores']} cores, {result['seconds_per_measurement']} s per measurement",
        "",
        "| where | clients | raw LWT/s | put/s | get+ack/s | e2e/s | put p50/p99 ms | "
        "get p50/p99 ms | ack p50/p99 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for where in ("engine", "http"):
        for clients, m in result.get(where, {}).items():
            lat = m["latency_ms"]

            def pp(op: str, lat: dict[str, Any] = lat) -> str:
                return f"{lat[op]['p50']}/{lat[op]['p99']}" if op in lat else "-"

            lines.append(
                f"| {where} | {clients} | {result['raw_lwt_per_s'].get(clients, '-')} | "
                f"{m['put_per_s']} | {m['get_ack_per_s']} | {m['e2e_per_s']} | "
                f"{pp('put')} | {pp('get')} | {pp('ack')} |"
            )
    lines += [
        "",
        f"LWTs per message (engine, most clients): {result['lwts_per_message']} "
        f"(minimum the design allows: {result['min_lwts_per_message']})",
        f"e2e ÷ (raw LWT/s ÷ minimum LWTs per message): {result['e2e_over_lwt_bound']}",
        f"LWT/s with all clients on one partition: {result['raw_lwt_one_partition_per_s']}; "
        f"LWTs per message on bucket partitions: {result['message_partition_lwts_per_message']}",
        f"puts, grouped ÷ one CAS per put: {result['grouped_over_per_put']} "
        f"({result['put_per_s_per_put_strategy']} put/s one-per-put)",
        f"backlog ratio (get+ack with history ÷ fresh): {result['backlog_ratio']}",
    ]
    if "http_over_engine_e2e" in result:
        lines.append(f"HTTP e2e ÷ engine e2e: {result['http_over_engine_e2e']}")
    return "\n".join(lines)
