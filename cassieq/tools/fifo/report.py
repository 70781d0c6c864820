"""A FIFO run's figures for people; the JSON summary is ``run.result``'s dict as it is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cassieq.tools.fifo.checker import VIOLATIONS


def figures(result: Mapping[str, Any]) -> str:
    run = result.get("run", {})
    lines = [
        f"queue {run['queue']} through {', '.join(run.get('endpoints', []))}"
        if "queue" in run
        else f"events of {run.get('events')}",
        f"{result['groups']} groups, {result['messages']} messages stored "
        f"({result['send_attempts']} send attempts: {result['sends_retried']} repeated a dedup "
        f"id, {result['retries_same_id']} of them answered the first MessageId; "
        f"{result['sends_unanswered']} unanswered, {result['sends_failed']} failed)",
        f"{result['deliveries']} deliveries ({result['redeliveries']} redeliveries, "
        f"{result['left_to_expire']} leases left to expire), {result['acked']} messages acked "
        f"({result['ack_unverified']} by an unanswered ack), {result['ack_refused']} acks refused",
    ]
    seconds = run.get("seconds")
    if seconds:
        lines.append(
            "seconds: "
            + ", ".join(f"{k} {v}" for k, v in seconds.items())
            + (f"; {run['acked_per_second']} messages acked/s" if "acked_per_second" in run else "")
        )
    if run.get("queue_after"):
        lines.append(
            "left in the queue (approximate): "
            + ", ".join(
                f"{k.removeprefix('ApproximateNumberOf')} {v}"
                for k, v in run["queue_after"].items()
            )
        )
    lines.append("")
    width = max(len(label) for label in VIOLATIONS.values())
    for key, label in VIOLATIONS.items():
        lines.append(f"  {label:<{width}}  {result[key]}")
    for key in ("timed_out", "harness_errors", "fault_errors", "foreign_messages"):
        if run.get(key):
            lines.append(f"  {key.replace('_', ' ')}: {run[key]}")
    bad = {g: n for g, n in _bad_groups(result).items() if n}
    if bad:
        lines.append("  groups with violations: " + ", ".join(f"{g} ({n})" for g, n in bad.items()))
    for kind, samples in result.get("samples", {}).items():
        lines.append(f"  e.g. {kind}: {samples[0]}")
    lines.append("")
    lines.append("PASS" if result.get("ok") else "FAIL: " + "; ".join(result.get("failures", [])))
    return "\n".join(lines)


def _bad_groups(result: Mapping[str, Any]) -> dict[str, int]:
    return {
        group: sum(int(figures.get(key, 0)) for key in VIOLATIONS)
        for group, figures in result.get("per_group", {}).items()
    }
