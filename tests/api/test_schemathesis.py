"""Fuzzing every route of the served OpenAPI document, with valid credentials, on each store.

Two parts, both counted:

- generated: schemathesis, CASSIEQ_FUZZ_EXAMPLES cases per operation (default 25). Checks:
  no 5xx, and every status code, content type and body conforms to the spec. (Driven
  through hypothesis directly: the schemathesis pytest plugin of this version does not run
  under pytest 9.)
- hand-written, derived from the same document so that every route is covered: OPTIONS on
  every path (and the operator routes' /admin mirror), JSON nested 1,000 levels on every
  route with a JSON body, and integers beyond 64 bits in every integer parameter and
  every integer field of a JSON body.

The totals are printed (`pytest -s`) as one line per store, `fuzz[<store>]: N requests
(...), 5xx=0`, and written as JSON to build/test-artifacts/fuzz-<store>.json (or the
directory in CASSIEQ_FUZZ_REPORT_DIR).
"""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import checks
from schemathesis.core.errors import InvalidSchema
from schemathesis.core.result import Err, Ok
from schemathesis.schemas import APIOperation

from cassieq.api.app import create_app
from cassieq.api.http.bodies import MAX_JSON_DEPTH
from cassieq.config import Settings
from cassieq.store.memory import MemoryStore
from tests.api.conftest import ADMIN_TOKEN, AccountCtx, Server
from tests.api.live import served

EXAMPLES = int(os.environ.get("CASSIEQ_FUZZ_EXAMPLES", "25"))
REPORT_DIR = Path(os.environ.get("CASSIEQ_FUZZ_REPORT_DIR", "build/test-artifacts"))
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]
BIG_INTEGERS = (2**63, 2**64 + 1, -(2**64) - 1)
DEEP_BODIES = {
    "deep array": b"[" * 1000 + b"]" * 1000,
    "deep object": b'{"a":' * 1000 + b"1" + b"}" * 1000,
}
TOO_DEEP = {"errors": [f"the JSON body is nested deeper than {MAX_JSON_DEPTH} levels"]}
TOO_DEEP_V2 = {"code": 400, "message": TOO_DEEP["errors"][0]}  # /api/v2's one error shape


@pytest.fixture
def target(store_kind: str, request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(store, base URL): the memory store served in process, Cassandra by `cassieq serve`."""
    if store_kind == "cassandra":
        server: Server = request.getfixturevalue("server")
        yield "cassandra", server.url
        return
    app = create_app(Settings(admin_token=ADMIN_TOKEN), MemoryStore(), background=False)
    with served(app) as port:
        yield "memory", f"http://127.0.0.1:{port}"


@dataclass
class Tally:
    """Every request the fuzz sent, by kind and by status class."""

    sent: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)

    def note(self, kind: str, what: str, status: int) -> None:
        self.sent[kind] += 1
        self.statuses[status] += 1
        if status >= 500:
            self.server_errors.append(f"{status} {what}")

    def report(self, store: str, operations: int) -> dict[str, Any]:
        return {
            "store": store,
            "operations": operations,
            "requests": sum(self.sent.values()),
            "by_kind": dict(sorted(self.sent.items())),
            "by_status": {str(k): v for k, v in sorted(self.statuses.items())},
            "5xx": len(self.server_errors),
        }


def _fuzz_account(url: str) -> AccountCtx:
    name = f"fuzz-{uuid.uuid4().hex[:10]}"
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    body = httpx.post(f"{url}/api/v1/accounts", json=name, headers=admin, timeout=30).json()
    ctx = AccountCtx(body["accountName"], body["keys"], url)
    with ctx.client() as c:
        c.post("/queues", json={"queueName": "sq"})
        for i in range(20):
            c.post("/queues/sq/messages", content=f"seed-{i}".encode())
    return ctx


def _auth(path: str, account: AccountCtx) -> dict[str, str]:
    if path.startswith(("/api/v1/accounts/{account}/queues", "/api/v2/accounts/{account}/queues")):
        return {"Authorization": f"Key {account.keys['primary']}"}
    if path.startswith(("/api/v1/accounts", "/api/v1/permissions", "/api/v1/debug")):
        return {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    return {}


def _headers_for(case: schemathesis.Case[Any], account: AccountCtx) -> dict[str, str]:
    path = case.operation.path
    if path.startswith(("/api/v1/accounts/{account}/queues", "/api/v2/accounts/{account}/queues")):
        # Valid credentials for a real account and queue, so fuzzing reaches the handlers.
        params = dict(case.path_parameters or {})
        params["account"] = account.name
        if "queue" in params and case.method.upper() != "DELETE":
            params["queue"] = "sq"
        case.path_parameters = params
    return _auth(path, account)


def _operation(
    result: Ok[APIOperation[Any, Any, Any, Any]] | Err[InvalidSchema],
) -> APIOperation[Any, Any, Any, Any]:
    """The operation of a result of the schema, or the schema's error raised."""
    if isinstance(result, Err):
        raise result.err()
    return result.ok()


def test_served_api_conforms_to_its_spec(target: tuple[str, str]) -> None:
    store, url = target
    account = _fuzz_account(url)
    document = httpx.get(f"{url}/schema/openapi.json", timeout=30).json()
    schema = schemathesis.openapi.from_url(f"{url}/schema/openapi.json")
    tally = Tally()
    covered: Counter[str] = Counter()
    operations = [_operation(result) for result in schema.get_all_operations()]
    assert len(operations) >= 24

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def fuzz(case: schemathesis.Case[Any]) -> None:
            headers = _headers_for(case, account)
            what = f"{case.method.upper()} {case.operation.path}"
            covered[what] += 1
            response = case.call_and_validate(headers=headers, checks=CHECKS, timeout=30)
            tally.note("generated", what, response.status_code)

        fuzz()
    assert len(covered) == len(operations)

    with httpx.Client(base_url=url, timeout=30) as http:
        _options_everywhere(http, document, account, tally)
        _deep_json_everywhere(http, document, account, tally)
        _big_integers_everywhere(http, document, account, tally)

    report = tally.report(store, len(operations))
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    (REPORT_DIR / f"fuzz-{store}.json").write_text(json.dumps(report, indent=2) + "\n")
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(tally.sent.items()))
    print(f"\nfuzz[{store}]: {report['requests']} requests ({kinds}), 5xx={report['5xx']}")
    assert tally.server_errors == []
    # Every hand-written kind ran.
    assert {"options", "deep json", "big integer"} <= set(tally.sent)


# ------------------------------------------------------------------ hand-written cases


def _concrete(path: str, account: AccountCtx, **values: object) -> str:
    """The document's path with real values: the fuzz account, its queue, key primary."""
    defaults: dict[str, object] = {
        "account": account.name,
        "queue": "sq",
        "key_name": "primary",
        "bucket": 0,
        "monoton": 0,
    }
    for name, value in {**defaults, **values}.items():
        path = path.replace("{" + name + "}", str(value))
    return path


def _required_query(op: dict[str, Any]) -> dict[str, str]:
    # Only popReceipt is required anywhere: a malformed one, the request never gets that far.
    return {
        p["name"]: "x" for p in op.get("parameters", []) if p["in"] == "query" and p["required"]
    }


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, op in item.items():
            if method in {"get", "put", "post", "delete", "patch"}:
                yield path, method.upper(), op


def _options_everywhere(
    http: httpx.Client, document: dict[str, Any], account: AccountCtx, tally: Tally
) -> None:
    for path, item in document["paths"].items():
        methods = {m.upper() for m in item if m in {"get", "put", "post", "delete", "patch"}}
        mirrors = [path]
        if path.startswith(("/api/v1/accounts", "/api/v1/permissions")) and "/queues" not in path:
            mirrors.append("/admin" + path)  # the operator routes at CassieQ's admin paths
        for p in mirrors:
            concrete = _concrete(p, account)
            response = http.options(concrete)  # no credentials: a preflight carries none
            tally.note("options", f"OPTIONS {concrete}", response.status_code)
            assert response.status_code == 204, (concrete, response.text)
            assert methods <= set(response.headers["allow"].split(", ")), (
                concrete,
                response.headers,
            )


def _deep_json_everywhere(
    http: httpx.Client, document: dict[str, Any], account: AccountCtx, tally: Tally
) -> None:
    routes = 0
    for path, method, op in _operations(document):
        if "application/json" not in op.get("requestBody", {}).get("content", {}):
            continue
        routes += 1
        for name, body in DEEP_BODIES.items():
            response = http.request(
                method,
                _concrete(path, account),
                params=_required_query(op),
                content=body,
                headers={**_auth(path, account), "Content-Type": "application/json"},
            )
            tally.note("deep json", f"{method} {path} ({name})", response.status_code)
            assert response.status_code == 400, (method, path, response.text)
            assert response.json() == (TOO_DEEP_V2 if path.startswith("/api/v2/") else TOO_DEEP)
    assert routes >= 5  # create queue, update message, create account, add key, permissions


def _big_integers_everywhere(
    http: httpx.Client, document: dict[str, Any], account: AccountCtx, tally: Tally
) -> None:
    fields = 0
    for path, method, op in _operations(document):
        auth = _auth(path, account)
        for param in op.get("parameters", []):
            if not _is_integer(param["schema"]):
                continue
            fields += 1
            for value in BIG_INTEGERS:
                target, query = path, _required_query(op)
                if param["in"] == "path":
                    target = _concrete(path, account, **{param["name"]: value})
                else:
                    target, query = _concrete(path, account), {**query, param["name"]: str(value)}
                response = http.request(method, target, params=query, headers=auth)
                what = f"{method} {path} {param['name']}={value}"
                tally.note("big integer", what, response.status_code)
                # A bad parameter, named: 400.
                assert response.status_code == 400, (what, response.text)
                assert param["name"] in _first_error(response), (what, response.text)
        body = _json_body_schema(document, op)
        for name in _integer_fields(body):
            fields += 1
            for value in BIG_INTEGERS:
                data = {**_required_fields(body), name: value}
                response = http.request(
                    method,
                    _concrete(path, account),
                    params=_required_query(op),
                    json=data,
                    headers=auth,
                )
                what = f"{method} {path} body {name}={value}"
                tally.note("big integer", what, response.status_code)
                # An invalid body, named: 422 (the contract's status for a body).
                assert response.status_code == 422, (what, response.text)
                assert _first_error(response).startswith(f"{name}:"), (what, response.text)
    assert fields >= 11  # 3 query, 3 path (debug), 5 body fields


def _first_error(response: httpx.Response) -> str:
    """The first problem named: v1's {"errors": [...]}, or v2's {"code", "message"} (whose
    message joins them)."""
    body = response.json()
    first: str = body["errors"][0] if "errors" in body else body["message"]
    return first


def _json_body_schema(document: dict[str, Any], op: dict[str, Any]) -> dict[str, Any]:
    content = op.get("requestBody", {}).get("content", {}).get("application/json")
    if content is None:
        return {}
    return _resolve(document, content["schema"])


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        *_, name = schema["$ref"].split("/")
        resolved: dict[str, Any] = document["components"]["schemas"][name]
        return resolved
    return schema


def _integer_fields(schema: dict[str, Any]) -> list[str]:
    return [name for name, prop in schema.get("properties", {}).items() if _is_integer(prop)]


def _is_integer(schema: dict[str, Any]) -> bool:
    """An integer, or an integer or null (an optional parameter)."""
    alternatives = schema.get("oneOf", schema.get("anyOf", []))
    return schema.get("type") == "integer" or any(a.get("type") == "integer" for a in alternatives)


def _required_fields(schema: dict[str, Any]) -> dict[str, Any]:
    """Valid values for the body's required fields (names, a level)."""
    samples = {"string": "fuzzbig", "array": ["r"], "integer": 1, "boolean": False}
    return {
        name: samples[schema["properties"][name].get("type", "string")]
        for name in schema.get("required", [])
    }
