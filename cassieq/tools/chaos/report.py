"""The chaos run's figures for people (a rich table) and for scripts (one JSON object)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

Row = tuple[str, Callable[[Mapping[str, Any]], str]]

RECOVERY_NOTE = (
    "recovered: seconds from the fault until a put answered 201 and a delivery came, both "
    "sent after the fault, through the server it hit (server faults) or through either "
    "server (node faults); any server: the same through either server. '-': never within "
    "the run."
)


def _n(key: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda r: str(r.get(key, "-"))


def _by(key: str) -> Callable[[Mapping[str, Any]], str]:
    def show(r: Mapping[str, Any]) -> str:
        items = r.get(key) or {}
        return ", ".join(f"{k} {v}" for k, v in items.items()) or "0"

    return show


def _pointers(r: Mapping[str, Any]) -> str:
    p = r.get("pointers")
    if not p:
        return "unread"
    stragglers = len(p.get("stragglers") or {})
    return f"{p['reader']} / {p['invisibility']} / {p['repair']}" + (
        f" ({stragglers} stragglers)" if stragglers else ""
    )


def _verdict(r: Mapping[str, Any]) -> str:
    if "error" in r:
        return f"ERROR: {r['error']}"
    return "PASS" if r.get("passed") else "FAIL: " + "; ".join(r.get("violations", []))


def _api(r: Mapping[str, Any]) -> str:
    if not r.get("batch"):
        return "v1"
    batches = f"v2, batches of {r['batch']}"
    return f"{batches} and v1, half each" if r.get("mixed") else batches


ROWS: list[Row] = [
    ("API", _api),
    ("partitions / workers", lambda r: f"{r.get('partitions', 1)} / {r.get('workers', 1)}"),
    ("puts answered 201", lambda r: f"{r.get('puts_201', '-')} of {r.get('messages', '-')}"),
    ("put attempts (no answer)", lambda r: f"{r.get('put_attempts')} ({r.get('put_unanswered')})"),
    ("LOST", _n("lost")),
    (
        "  never delivered / lease ran out",
        lambda r: f"{r.get('lost_never_delivered')} / {r.get('lost_not_redelivered')}",
    ),
    ("  ack outcome unverifiable", _n("ack_unverifiable")),
    ("DOUBLE WITHIN LEASE", _n("double_within_lease")),
    ("delivered after ack", _n("delivered_after_ack")),
    ("deliveries", _n("deliveries")),
    (
        "redeliveries (left unacked on purpose)",
        lambda r: f"{r.get('redeliveries')} ({r.get('left_unacked')})",
    ),
    ("acks applied (v1 204, v2 acked)", _n("acks_204")),
    (
        "409s on valid receipts (ack had applied)",
        lambda r: f"{r.get('acks_409_valid')} ({r.get('acks_409_applied')})",
    ),
    (
        "  409s: all / after no answer / after redelivery",
        lambda r: (
            f"{r.get('acks_409')} / {r.get('acks_409_after_unanswered')} / "
            f"{r.get('acks_409_after_redelivery')}"
        ),
    ),
    ("5xx", lambda r: f"{r.get('http_5xx', '-')}" + _detail(r, "http_5xx_by_route")),
    ("no answer (refused, reset, timeout)", _by("unanswered_by_server")),
    ("pointers reader / invisibility / repair", _pointers),
    (
        "pointers within one bucket",
        lambda r: "yes" if r.get("pointers_within_one_bucket") else "NO",
    ),
    (
        "seconds: setup / puts / drain / total",
        lambda r: " / ".join(str(v) for v in (r.get("seconds") or {}).values()) or "-",
    ),
    ("timed out", lambda r: "YES" if r.get("timed_out") else "no"),
    ("verdict", _verdict),
]


def _subscription_rows(results: Mapping[str, Mapping[str, Any]]) -> list[Row]:
    """Two rows per ordered subscription (--subscriptions), in the order they were made."""
    names: list[str] = []
    for r in results.values():
        names += [n for n in r.get("subscriptions") or {} if n not in names]
    rows: list[Row] = []
    for name in names:

        def figures(r: Mapping[str, Any], name: str = name) -> str:
            s = (r.get("subscriptions") or {}).get(name)
            if s is None:
                return "-"
            lag = "?" if s["final_lag"] is None else s["final_lag"]
            return (
                f"{s['read']} / {s['done']} / {s['lost']} / {s['double']} / {s['order']}"
                f" (lag {lag})"
            )

        def commits(r: Mapping[str, Any], name: str = name) -> str:
            s = (r.get("subscriptions") or {}).get(name)
            if s is None:
                return "-"
            return (
                f"{s['commits_applied']} / {s['commits_refused']} / {s['commits_unknown']} "
                f"({s['unknown_resolved_applied']} / {s['unknown_resolved_not_applied']} / "
                f"{s['applied_late']})"
            )

        rows.append((f"{name}: read / done / LOST / DOUBLE / ORDER", figures))
        rows.append((f"  {name} commits applied / refused / unknown ({RESOLVED})", commits))
    return rows


def _shared_rows(results: Mapping[str, Mapping[str, Any]]) -> list[Row]:
    """Three rows per shared subscription (--shared-subscriptions): its own figures, read
    as the queue's rows of the same names are."""
    names: list[str] = []
    for r in results.values():
        names += [n for n in r.get("shared_subscriptions") or {} if n not in names]
    rows: list[Row] = []
    for name in names:

        def line(label: str, form: str, name: str = name) -> Row:
            def show(r: Mapping[str, Any]) -> str:
                s = (r.get("shared_subscriptions") or {}).get(name)
                return "-" if s is None else form.format_map(s)

            return label, show

        rows += [
            line(
                f"{name}: LOST / DOUBLE WITHIN LEASE / after ack",
                "{lost} / {double_within_lease} / {delivered_after_ack}",
            ),
            line(
                f"  {name} deliveries / redeliveries (unacked) / acks",
                "{deliveries} / {redeliveries} ({left_unacked}) / {acks_204}",
            ),
            line(
                f"  {name} 409s valid / 5xx / unverifiable / lag",
                "{acks_409_valid} / {http_5xx} / {ack_unverifiable} / {final_lag}",
            ),
        ]
    return rows


# How the commits without an answer were settled by reading the position back.
RESOLVED = "read back: applied / not / later"


def _detail(r: Mapping[str, Any], key: str) -> str:
    items = r.get(key) or {}
    return f" ({', '.join(f'{k} {v}' for k, v in items.items())})" if items else ""


def print_table(results: Mapping[str, Mapping[str, Any]], console: Console) -> None:
    table = Table(title="cassieq chaos")
    table.add_column("figure", style="bold")
    for name in results:
        table.add_column(name)
    # The verdict stays last: the subscriptions' rows go before it.
    rows = [*ROWS[:-1], *_subscription_rows(results), *_shared_rows(results), ROWS[-1]]
    for label, show in rows:
        table.add_row(label, *(show(r) for r in results.values()))
    console.print(table)

    faults = Table(title="time to recover after each fault")
    for col in ("scenario", "fault", "at s", "recovered s", "any server s"):
        faults.add_column(col)
    for name, r in results.items():
        for rec in r.get("recoveries") or []:
            faults.add_row(
                name,
                rec["event"],
                str(rec["at_s"]),
                _seconds(rec["recovered_s"]),
                _seconds(rec["any_server_s"]),
            )
        for err in r.get("fault_errors") or []:
            faults.add_row(name, f"FAILED {err}", "", "", "")
    if faults.row_count:
        console.print(faults)
        console.print(RECOVERY_NOTE)


def _seconds(value: float | None) -> str:
    return "-" if value is None else str(value)


def to_json(results: Mapping[str, Mapping[str, Any]]) -> str:
    return json.dumps(results, indent=2, default=str)


def passed(results: Mapping[str, Mapping[str, Any]]) -> bool:
    return bool(results) and all(r.get("passed") is True for r in results.values())
