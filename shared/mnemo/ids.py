"""Identifiers: a type prefix and a ULID (time-sortable, 26 characters of Crockford base32)."""

from __future__ import annotations

from ulid import ULID


def new_id(prefix: str) -> str:
    return f"{prefix}_{ULID()}"


def memory_id() -> str:
    return new_id("mem")
