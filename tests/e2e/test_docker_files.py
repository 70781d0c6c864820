"""The Docker files only run `cassieq` commands, and each of them runs here on the host
(there is no Docker engine on this machine): the image's default and `dev` commands, the
healthcheck, and every command of compose.yaml."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import yaml

from cassieq.cli.main import cli
from cassieq.tools.bench.servers import free_port
from tests.conftest import CassandraNode

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "docker" / "Dockerfile").read_text()
COMPOSE = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())


def _json_instruction(name: str) -> list[str]:
    match = re.search(rf"^{name}\s+(\[.*\])\s*$", DOCKERFILE, re.M)
    assert match, f"no exec-form {name} in the Dockerfile"
    return list(json.loads(match.group(1)))


def _healthcheck() -> list[str]:
    match = re.search(r"^HEALTHCHECK\b.*?\bCMD\s+(\[[^\n]*\])", DOCKERFILE, re.M | re.S)
    assert match, "no exec-form HEALTHCHECK CMD in the Dockerfile"
    return list(json.loads(match.group(1)))


def _seconds(value: object) -> float:
    text = str(value)
    assert text.endswith("s"), f"a duration in seconds: {text}"
    return float(text[:-1])


def _tolerance_s(options: dict[str, object]) -> float:
    """How long Docker lets a container fail its healthcheck before it calls it unhealthy:
    the start period, then `retries` failed checks `interval` apart."""
    interval = _seconds(options.get("interval", "30s"))
    start = _seconds(options.get("start_period", "0s"))
    return start + interval * int(str(options.get("retries", 3)))


def _image_tolerance_s() -> float:
    match = re.search(r"^HEALTHCHECK((?:\s+--[\w-]+=\S+)*)", DOCKERFILE, re.M)
    assert match, "no HEALTHCHECK in the Dockerfile"
    flags = re.findall(r"--([\w-]+)=(\S+)", match.group(1))
    return _tolerance_s({name.replace("-", "_"): value for name, value in flags})


def _image_env() -> dict[str, str]:
    block = re.search(r"^ENV (.*?)(?=^\S)", DOCKERFILE, re.M | re.S)
    assert block
    pairs = re.findall(r"(CASSIEQ_\w+|PYTHONUNBUFFERED)=(\S+)", block.group(1))
    return dict(pairs)


def _cassieq_commands() -> list[list[str]]:
    commands = [_json_instruction("CMD"), ["dev"]]
    for service in COMPOSE["services"].values():
        if service.get("image") == "cassieq":
            commands.append(list(service["command"]))
    return commands


def test_every_command_the_images_run_is_a_cassieq_command() -> None:
    assert _json_instruction("ENTRYPOINT") == ["cassieq"]
    assert "USER cassieq" in DOCKERFILE
    for command in _cassieq_commands():
        group, *rest = command
        found = cli.get_command(None, group)  # type: ignore[arg-type]
        assert found is not None, f"`cassieq {group}` does not exist"
        if rest and hasattr(found, "get_command"):
            assert found.get_command(None, rest[0]) is not None, f"`cassieq {' '.join(command)}`"


def _env(node: CassandraNode, port: int, extra: dict[str, str]) -> dict[str, str]:
    s = node.settings
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSIEQ_")}
    env.update(_image_env())
    env.update(extra)
    env.update(
        {
            "CASSIEQ_PORT": str(port),
            "CASSIEQ_CASSANDRA_HOSTS": ",".join(s.cassandra_hosts),
            "CASSIEQ_CASSANDRA_PORT": str(s.cassandra_port),
            "CASSIEQ_KEYSPACE": s.keyspace,
            "CASSIEQ_SCHEMA_DIR": str(ROOT / "schema" / "cassandra"),
        }
    )
    return env


def _compose_healthcheck(service: dict[str, object]) -> list[str]:
    check = service.get("healthcheck")
    assert isinstance(check, dict), "the cassieq service has no healthcheck"
    test = list(check["test"])
    assert test[0] == "CMD", "an exec-form healthcheck (no shell in the image's PATH needed)"
    return [str(arg) for arg in test[1:]]


def _passes(check: list[str], port: int, within_s: float) -> bool:
    """Run a healthcheck command, aimed at this port, as Docker does: again until it passes,
    for as long as Docker would before calling the container unhealthy (``within_s``: the
    start period and the retries). Readiness waits for the first background pass, which on
    the test keyspace every other test has filled, on a busy machine, took over 30 s."""
    aimed = [arg.replace("8080", str(port)) for arg in check]
    assert aimed[0] == "python" and "/ready" in aimed[-1]
    deadline = time.monotonic() + within_s
    while True:
        run = subprocess.run([sys.executable, *aimed[1:]], timeout=30, check=False)
        if run.returncode == 0 or time.monotonic() > deadline:
            return run.returncode == 0
        time.sleep(0.5)  # Docker's interval, shortened; bounded by the deadline


def _serve_and_check_health(
    command: list[str], env: dict[str, str], port: int, check: list[str], within_s: float
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "cassieq", *command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, f"`cassieq {' '.join(command)}` exited"
            try:
                httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)  # polling the process start, bounded by the deadline
        # The image's HEALTHCHECK (or the compose service's), exactly as written.
        assert _passes(check, port, within_s), f"`cassieq {' '.join(command)}` never ready"
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_image_commands_run_on_the_host(
    cassandra_node: CassandraNode, cassandra_store: object
) -> None:
    # Both at once (each in a process of its own, on a port of its own): one after the
    # other, the test waited out two server starts and two first background passes in turn.
    def serve(command: list[str]) -> None:
        port = free_port()
        env = _env(cassandra_node, port, {})
        _serve_and_check_health(command, env, port, _healthcheck(), _image_tolerance_s())

    commands = (_json_instruction("CMD"), ["dev"])
    with ThreadPoolExecutor(len(commands)) as pool:
        for done in [pool.submit(serve, command) for command in commands]:
            done.result()  # re-raises a failed check


def test_compose_commands_run_on_the_host(
    cassandra_node: CassandraNode, cassandra_store: object
) -> None:
    for name, service in COMPOSE["services"].items():
        if service.get("image") != "cassieq":
            continue
        port = free_port()
        extra = {
            k: str(v)
            for k, v in service.get("environment", {}).items()
            if not str(v).startswith("$")
        }
        env = _env(
            cassandra_node,
            port,
            {
                k: v
                for k, v in extra.items()
                if k not in ("CASSIEQ_CASSANDRA_HOSTS", "CASSIEQ_KEYSPACE")
            },
        )
        env["CASSIEQ_ADMIN_TOKEN"] = "compose-test-" + "x" * 32  # serve wants 32+
        if service["command"][0] == "schema":
            done = subprocess.run(
                [sys.executable, "-m", "cassieq", *service["command"]],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, f"{name}: {done.stderr}"
            assert "up to date" in done.stdout
        else:
            check = _compose_healthcheck(service)
            within_s = _tolerance_s(service["healthcheck"])
            _serve_and_check_health(list(service["command"]), env, port, check, within_s)


def test_the_docker_page_matches_the_files() -> None:
    page = (ROOT / "docs/operations/docker.md").read_text()
    assert "docker build -f docker/Dockerfile -t cassieq ." in page
    assert "docker run -p 8080:8080 cassieq dev" in page
    assert "docker compose -f docker/compose.yaml up --build" in page
    assert "docker build -f docker/Dockerfile -t cassieq ." in DOCKERFILE
