"""Access key ids -> account keys, names with dots included, on both stores."""

from __future__ import annotations

import uuid

from cassieq.api.sqs.credentials import MAX_READINGS, readings, secrets_for
from cassieq.api.sqs.sigv4 import Secret
from cassieq.engine import QueueEngine
from cassieq.store.base import Store


def test_readings_whole_id_first_then_each_dot_from_the_right() -> None:
    assert readings("acme") == [("acme", "primary")]
    assert readings("a.b.c") == [("a.b.c", "primary"), ("a.b", "c"), ("a", "b.c")]
    # A leading or trailing dot gives no reading with an empty name.
    assert readings(".a.") == [(".a.", "primary")]
    assert len(readings("x" + ".y" * 50)) == MAX_READINGS


async def test_every_reading_with_that_key_is_a_candidate(sqs_store: Store) -> None:
    engine = QueueEngine(sqs_store)
    base = f"d{uuid.uuid4().hex[:10]}"
    plain = await engine.accounts.create(base)
    dotted = await engine.accounts.create(f"{base}.k")
    k_key = await engine.accounts.add_key(base, "k")
    found = await secrets_for(engine, f"{base}.k")
    assert found == [
        Secret(f"{base}.k", "primary", dotted.keys["primary"]),
        Secret(base, "k", k_key),
    ]
    assert await secrets_for(engine, base) == [Secret(base, "primary", plain.keys["primary"])]
    assert await secrets_for(engine, f"{base}.secondary") == [
        Secret(base, "secondary", plain.keys["secondary"])
    ]
    assert await secrets_for(engine, f"{base}.nokey") == []
    assert await secrets_for(engine, "no/such account") == []
