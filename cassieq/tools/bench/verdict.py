"""Issue #15's acceptance, checked against one bench run's figures."""

from __future__ import annotations

from typing import Any

MAX_LWTS_PER_MESSAGE = 0.5
MIN_HTTP_E2E_OVER_V1 = 5.0
MAX_WAKE_SAME_MS = 50.0
MAX_WAKE_OTHER_MS = 1500.0
MAX_IDLE_READS_PER_S = 3.0


def acceptance(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per check the run has the figures for: what, the figure, the limit, passed."""
    v2 = result.get("v2")
    if not v2:
        return []
    batch = str(max(int(b) for b in v2["engine"]))
    clients = v2["clients"]
    rows: list[dict[str, Any]] = []

    def check(name: str, figure: float, limit: str, passed: bool) -> None:
        rows.append({"check": name, "figure": figure, "limit": limit, "passed": passed})

    lwts = v2["lwts_per_message"][batch]
    check(
        f"v2 LWTs per message put->receive->ack, batches of {batch}, {clients} clients",
        lwts,
        f"<= {MAX_LWTS_PER_MESSAGE:g}",
        lwts <= MAX_LWTS_PER_MESSAGE,
    )
    # From v1 and v2 turns on one server where the run has them (cassieq.tools.bench.paired),
    # else from the two sections' figures.
    paired = v2.get("paired_http_e2e")
    ratio = paired["ratio"] if paired else apart_http_e2e_ratio(result)
    if ratio is not None:
        how = "in turns on one server" if paired else "minutes apart"
        check(
            f"v2 HTTP e2e, batches of {batch} / v1 HTTP e2e, {clients} clients, {how}",
            ratio,
            f">= {MIN_HTTP_E2E_OVER_V1:g}",
            ratio >= MIN_HTTP_E2E_OVER_V1,
        )
    for case, limit in (("same_server", MAX_WAKE_SAME_MS), ("other_server", MAX_WAKE_OTHER_MS)):
        wake = v2.get("wake_up_ms", {}).get(case)
        if wake is not None:
            # A run where most waiters were not woken by their put has no latency to judge.
            woken = wake["samples"] > wake["missed"]
            check(
                f"long-poll wake-up p50 ms, put on the {case.replace('_', ' ')}",
                wake["p50"],
                f"<= {limit:g}",
                woken and wake["p50"] <= limit,
            )
    idle = v2["idle_waiters"]
    worst = max(idle["reads_per_s"].values())
    check(
        f"store reads/s per server, {idle['waiters_per_server']} idle waiters (worst server)",
        worst,
        f"<= {MAX_IDLE_READS_PER_S:g}",
        worst <= MAX_IDLE_READS_PER_S and idle["returned_early"] == 0,
    )
    return rows


def apart_http_e2e_ratio(result: dict[str, Any]) -> float | None:
    """v2 HTTP e2e (largest batch) over v1 HTTP e2e from the v1 and v2 sections' own
    figures, minutes apart."""
    v2 = result.get("v2", {})
    v1_http = result.get("http", {}).get(str(v2.get("clients")))
    if "http" not in v2 or not v1_http:
        return None
    batch = str(max(int(b) for b in v2["http"]))
    ratio = float(v2["http"][batch]["e2e_per_s"]) / max(float(v1_http["e2e_per_s"]), 0.001)
    return round(ratio, 2)


def api_cost(result: dict[str, Any]) -> dict[str, Any]:
    """Issue #38's figures from one run: SQS ÷ v2 HTTP e2e (largest batch, SQS's at most 10)
    and CPU seconds per 1,000 messages e2e of each API's server, and of the load generator
    (boto3's for SQS), at the most clients."""
    v2 = result.get("v2", {})
    out: dict[str, Any] = {}
    top = v2.get("clients") or max((int(c) for c in result.get("http", {})), default=None)
    v1 = result.get("http", {}).get(str(top))
    rows: dict[str, dict[str, Any] | None] = {"v1": v1}
    if "http" in v2:
        batch = str(max(int(b) for b in v2["http"]))
        rows[f"v2_b{batch}"] = v2["http"][batch]
    if "sqs" in v2:
        sqs_batch, sqs = next(iter(v2["sqs"].items()))
        rows[f"sqs_b{sqs_batch}"] = sqs
        v2_same = v2.get("http", {}).get(sqs_batch)
        if v2_same:
            out["sqs_over_v2_http_e2e"] = round(
                float(sqs["e2e_per_s"]) / max(float(v2_same["e2e_per_s"]), 0.001), 2
            )
    for name, row in rows.items():
        if row and "server_cpu_s_per_1000" in row:
            out[name] = {
                "e2e_per_s": row["e2e_per_s"],
                "server_cpu_s_per_1000": row["server_cpu_s_per_1000"],
                "client_cpu_s_per_1000": row["client_cpu_s_per_1000"],
            }
    # The same from the turns on one server (cassieq.tools.bench.paired): no repair, and no
    # earlier measurement's queues to repair, in them.
    paired = v2.get("paired_http_e2e") or {}
    if "cpu_s_per_1000" in paired:
        out["in_turns"] = {
            "sqs_over_v2_e2e": paired["sqs_over_v2"],
            **{
                name: {"e2e_per_s": paired[f"{api}_e2e_per_s"], **paired["cpu_s_per_1000"][api]}
                for name, api in (
                    ("v1", "v1"),
                    (f"v2_b{paired['batch']}", "v2"),
                    (f"sqs_b{paired['sqs_batch']}", "sqs"),
                )
            },
        }
    return out
