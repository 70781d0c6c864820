"""Access key ids: ``<account>`` is the account's primary key, ``<account>.<keyName>``
another of its keys; the secret access key is the key itself.

Account and key names may both contain '.', so ``a.b.c`` may name account ``a.b.c``
(primary), ``a.b`` (key ``c``) or ``a`` (key ``b.c``): every reading whose account has
that key is a candidate and the signature decides (each is checked in constant time).
"""

from __future__ import annotations

from cassieq.api.sqs.sigv4 import Secret
from cassieq.engine import QueueEngine
from cassieq.engine.errors import AccountNotFound

PRIMARY = "primary"
# Each candidate costs an account lookup (cached): an id with more dots is not one of ours.
MAX_READINGS = 8


def readings(access_key_id: str) -> list[tuple[str, str]]:
    """(account, key name) readings of an access key id, the whole id first."""
    found = [(access_key_id, PRIMARY)]
    at = len(access_key_id)
    while (at := access_key_id.rfind(".", 0, at)) > 0:
        if at < len(access_key_id) - 1:
            found.append((access_key_id[:at], access_key_id[at + 1 :]))
    return found[:MAX_READINGS]


async def secrets_for(engine: QueueEngine, access_key_id: str) -> list[Secret]:
    out = []
    for account_name, key_name in readings(access_key_id):
        try:
            account = await engine.account_for_auth(account_name)
        except AccountNotFound:
            continue
        key = account.keys.get(key_name)
        if key is not None:
            out.append(Secret(account_name, key_name, key))
    return out
