"""When each chaos scenario injects its faults (no servers, no cluster)."""

from __future__ import annotations

from cassieq.tools.chaos.faults import Step, plan


def test_baseline_injects_nothing() -> None:
    assert plan("baseline", 200, 5) == []


def test_node_kill_kills_at_a_third_and_restarts_at_two_thirds() -> None:
    assert plan("node-kill", 300, 5) == [Step(100, "kill node"), Step(200, "restart node")]


def test_server_kill_restarts_after_the_delay() -> None:
    assert plan("server-kill", 300, 5) == [Step(100, "kill server"), Step(105, "restart server")]


def test_both_kills_the_server_while_the_node_is_down() -> None:
    steps = plan("both", 300, 5)
    assert [s.action for s in steps] == [
        "kill node",
        "kill server",
        "restart server",
        "restart node",
    ]
    assert steps[0].at == 100 and steps[-1].at == 200
    assert steps[0].at < steps[1].at < steps[2].at < steps[3].at
