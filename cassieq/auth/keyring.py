"""Account keys at rest: AES-256-GCM under a key-encryption key (KEK).

A stored key reads ``v1:<kek id>:<base64url(nonce || ciphertext || tag)>``. The associated
data names the account and the key, so a ciphertext copied into another account's row (or
under another key name) does not decrypt. The KEK id is a short fingerprint of the KEK: a
row sealed under another KEK is told apart from a damaged one, without saying anything
useful about the KEK itself.
"""

from __future__ import annotations

import binascii
import hashlib
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from cassieq.auth.b64url import b64url_decode, b64url_encode

VERSION = "v1"
KEK_BYTES = 32
_NONCE_BYTES = 12


class UndecryptableKey(ValueError):
    """A sealed key this KEK cannot open (another KEK, another row, or damaged)."""


def parse_key_encryption_key(text: str) -> bytes:
    """CASSIEQ_KEY_ENCRYPTION_KEY: 32 bytes, base64url (padding optional)."""
    try:
        kek = b64url_decode(text.strip())
    except (binascii.Error, ValueError):
        kek = b""
    if len(kek) != KEK_BYTES:
        raise ValueError(
            "CASSIEQ_KEY_ENCRYPTION_KEY must be 32 random bytes, base64url-encoded (make one "
            'with: python -c "import base64, secrets; '
            'print(base64.urlsafe_b64encode(secrets.token_bytes(32)).decode())")'
        )
    return kek


def key_encryption_key(setting: str | None) -> bytes | None:
    """CASSIEQ_KEY_ENCRYPTION_KEY parsed, or None (the keyspace's own key is used)."""
    return None if setting is None else parse_key_encryption_key(setting)


def previous_key_encryption_keys(setting: str | None) -> list[bytes]:
    """CASSIEQ_KEY_ENCRYPTION_KEY_PREVIOUS: earlier keys, comma-separated, each as the
    current one is written."""
    if setting is None or not setting.strip():
        return []
    try:
        return [parse_key_encryption_key(part) for part in setting.split(",") if part.strip()]
    except ValueError as exc:
        raise ValueError(f"CASSIEQ_KEY_ENCRYPTION_KEY_PREVIOUS: {exc}") from None


# Said at the start of a server whose account keys' key-encryption key is in the keyspace.
KEK_IN_KEYSPACE_WARNING = (
    "account keys are encrypted under a key kept in the same keyspace (no "
    "CASSIEQ_KEY_ENCRYPTION_KEY): anyone who can read the keyspace can decrypt them. Set "
    "CASSIEQ_KEY_ENCRYPTION_KEY on every server (docs/operations/security.md, Keys at rest)"
)


def is_sealed(stored: str) -> bool:
    """Keys are base64url (no ':'), so a plaintext key never looks sealed."""
    return stored.startswith(VERSION + ":")


def _associated_data(account: str, key_name: str) -> bytes:
    # Names never hold NUL (their alphabet is [a-zA-Z0-9_.-]): the joining is unambiguous.
    return b"\0".join((b"cassieq account key", account.encode(), key_name.encode()))


class KeyCipher:
    def __init__(self, kek: bytes) -> None:
        if len(kek) != KEK_BYTES:
            raise ValueError(f"a key-encryption key is {KEK_BYTES} bytes")
        self._aead = AESGCM(kek)
        self.kek_id = hashlib.sha256(b"cassieq kek id\0" + kek).hexdigest()[:8]

    def seal(self, account: str, key_name: str, key: str) -> str:
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, key.encode(), _associated_data(account, key_name))
        return f"{VERSION}:{self.kek_id}:{b64url_encode(nonce + sealed)}"

    def open(self, account: str, key_name: str, stored: str) -> str:
        version, _, rest = stored.partition(":")
        kek_id, _, body = rest.partition(":")
        if version != VERSION or not body:
            raise UndecryptableKey("not a sealed key of a known format")
        if kek_id != self.kek_id:
            raise UndecryptableKey(f"sealed under another key-encryption key (id {kek_id})")
        try:
            raw = b64url_decode(body)
            plain = self._aead.decrypt(
                raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], _associated_data(account, key_name)
            )
            return plain.decode()
        except (binascii.Error, ValueError, InvalidTag, UnicodeDecodeError) as exc:
            raise UndecryptableKey("does not decrypt for this account and key name") from exc
