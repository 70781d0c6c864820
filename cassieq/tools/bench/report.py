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
    if "workers" in result:
        each = ", ".join(f"{n}: {w['e2e_per_s']}" for n, w in result["workers"].items())
        lines.append(
            f"v1 HTTP e2e/s by `cassieq serve --workers` ({each}); last ÷ first: "
            f"{result['workers_http_e2e_last_over_first']}"
        )
    lines += _api_cost(result.get("api_cost", {}))
    if "v2" in result:
        lines += ["", *_v2_table(result["v2"]), "", *_acceptance(result.get("acceptance", []))]
    return "\n".join(lines)


def _v2_table(v2: dict[str, Any]) -> list[str]:
    lines = [
        f"v2, {v2['clients']} clients (messages per second)",
        "",
        "| where | batch | put/s | receive+ack/s | e2e/s | LWTs/message | send p50/p99 ms | "
        "receive p50/p99 ms | ack p50/p99 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for where in ("engine", "http", "sqs"):
        for batch, m in v2.get(where, {}).items():
            lat = m["latency_ms"]

            def pp(op: str, lat: dict[str, Any] = lat) -> str:
                return f"{lat[op]['p50']}/{lat[op]['p99']}" if op in lat else "-"

            lwts = v2["lwts_per_message"].get(batch, "-") if where == "engine" else "-"
            where = "sqs (boto3)" if where == "sqs" else where
            lines.append(
                f"| {where} | {batch} | {m['put_per_s']} | {m['receive_ack_per_s']} | "
                f"{m['e2e_per_s']} | {lwts} | {pp('send')} | {pp('receive')} | {pp('ack')} |"
            )
    paired = v2.get("paired_http_e2e")
    if paired:
        lines.append(
            f"HTTP e2e in turns on one server ({len(paired['turns'])} turns of "
            f"{paired['seconds_per_turn']} s): v1 {paired['v1_e2e_per_s']}/s, v2 batches of "
            f"{paired['batch']} {paired['v2_e2e_per_s']}/s, ratio {paired['ratio']}"
        )
    apart = v2.get("http_e2e_ratio_minutes_apart")
    if apart is not None:
        lines.append(f"v2 HTTP e2e ÷ v1 HTTP e2e, the two sections minutes apart: {apart}")
    for case, wake in v2.get("wake_up_ms", {}).items():
        lines.append(
            f"long-poll wake-up, put on the {case.replace('_', ' ')}: p50 {wake['p50']} ms, "
            f"p95 {wake['p95']} ms ({wake['samples']} samples, {wake['missed']} missed)"
        )
    idle = v2["idle_waiters"]
    reads = ", ".join(f"{name} {n}" for name, n in idle["reads_per_s"].items())
    lines.append(
        f"{idle['waiters_per_server']} idle waiters per server over {idle['seconds']} s: "
        f"store reads/s {reads}; returned early {idle['returned_early']}"
    )
    return lines


def _api_cost(cost: dict[str, Any]) -> list[str]:
    lines = []
    if "sqs_over_v2_http_e2e" in cost:
        lines.append(f"SQS (boto3) e2e ÷ v2 HTTP e2e, same batch: {cost['sqs_over_v2_http_e2e']}")
    for api, row in cost.items():
        if isinstance(row, dict) and api != "in_turns":
            lines.append(
                f"{api}: {row['e2e_per_s']} e2e/s; CPU s per 1,000 messages e2e: server "
                f"{row['server_cpu_s_per_1000']}, client {row['client_cpu_s_per_1000']}"
            )
    turns = cost.get("in_turns")
    if turns:
        lines.append(f"in turns on one server: SQS e2e ÷ v2 e2e {turns['sqs_over_v2_e2e']}")
        for api, row in turns.items():
            if isinstance(row, dict):
                lines.append(
                    f"  {api}: {row['e2e_per_s']} e2e/s; CPU s per 1,000 messages e2e: server "
                    f"{row['server_cpu_s_per_1000']}, client {row['client_cpu_s_per_1000']}"
                )
    return lines


def _acceptance(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| acceptance (#15) | figure | limit | verdict |", "|---|---|---|---|"]
    for row in rows:
        verdict = "pass" if row["passed"] else "FAIL"
        lines.append(f"| {row['check']} | {row['figure']} | {row['limit']} | {verdict} |")
    return lines
