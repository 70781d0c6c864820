"""schemathesis against the OpenAPI document the server serves, with valid credentials.

Checks: no 5xx, and every status code, content type and body conforms to the spec.
Each operation gets CASSIEQ_FUZZ_EXAMPLES generated cases (default 25); the total is
printed. (Driven through hypothesis directly: the schemathesis pytest plugin of this
version does not run under pytest 9.)
"""

from __future__ import annotations

import os
import uuid
from collections import Counter

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import checks

from tests.api.conftest import ADMIN_TOKEN, AccountCtx, Server

EXAMPLES = int(os.environ.get("CASSIEQ_FUZZ_EXAMPLES", "25"))
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]


def _fuzz_account(server: Server) -> AccountCtx:
    name = f"fuzz-{uuid.uuid4().hex[:10]}"
    with server.admin() as admin:
        body = admin.post("/api/v1/accounts", json=name).json()
    ctx = AccountCtx(body["accountName"], body["keys"], server.url)
    with ctx.client() as c:
        c.post("/queues", json={"queueName": "sq"})
        for i in range(20):
            c.post("/queues/sq/messages", content=f"seed-{i}".encode())
    return ctx


def _headers_for(case: schemathesis.Case, account: AccountCtx) -> dict[str, str]:
    path = case.operation.path
    if path.startswith(("/api/v1/accounts/{account}/queues", "/api/v2/accounts/{account}/queues")):
        # Valid credentials for a real account and queue, so fuzzing reaches the handlers.
        params = dict(case.path_parameters or {})
        params["account"] = account.name
        if "queue" in params and case.method.upper() != "DELETE":
            params["queue"] = "sq"
        case.path_parameters = params
        return {"Authorization": f"Key {account.keys['primary']}"}
    if path.startswith(("/api/v1/accounts", "/api/v1/permissions", "/api/v1/debug")):
        return {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    return {}


def test_served_api_conforms_to_its_spec(server: Server) -> None:
    account = _fuzz_account(server)
    schema = schemathesis.openapi.from_url(f"{server.url}/schema/openapi.json")
    cases: Counter[str] = Counter()
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 24

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def fuzz(case: schemathesis.Case) -> None:
            headers = _headers_for(case, account)
            cases[f"{case.method.upper()} {case.operation.path}"] += 1
            case.call_and_validate(headers=headers, checks=CHECKS, timeout=30)

        fuzz()

    total = sum(cases.values())
    print(f"\nschemathesis: {total} generated cases over {len(cases)} operations, no failure")
    assert len(cases) == len(operations)
