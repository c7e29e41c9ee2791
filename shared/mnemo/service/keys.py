"""API keys: generated secrets, stored only as salted SHA-256 hashes, checked in constant time.

A key is looked up by an id derived from the key itself (a truncated SHA-256, so any string can
be a key, including a ``MNEMO_BOOTSTRAP_KEY`` of the user's choosing); the stored salted hash is
then compared with ``hmac.compare_digest``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

KEY_PREFIX = "mnemo_"
MIN_KEY_LENGTH = 16


def new_plain_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def key_id_for(plain: str) -> str:
    return "key_" + hashlib.sha256(plain.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def new_salt() -> str:
    return secrets.token_hex(16)


def hash_secret(plain: str, salt: str) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + plain.encode("utf-8", "surrogatepass")).hexdigest()


def verify(plain: str, salt: str, expected_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(plain, salt), expected_hash)


_DUMMY_SALT = "00" * 16
_DUMMY_HASH = hash_secret("", _DUMMY_SALT)


def burn_time(plain: str) -> None:
    """Do the work of a verification for an unknown key, so timing does not tell ids apart."""
    verify(plain, _DUMMY_SALT, _DUMMY_HASH)
