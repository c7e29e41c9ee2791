"""Identifiers: a type prefix and a ULID (time-sortable, 26 characters of Crockford base32).

A ULID is 128 bits: the time in milliseconds since the epoch (48 bits), then 80 random bits,
written as 26 base32 digits, most significant first (https://github.com/ulid/spec). Generated
here in a few lines: the python-ulid package is a costly import at every Lambda cold start (it
reads its own version through importlib.metadata; bench/results/docstring-figures.md), and ids
are only ever generated, never parsed. tests/unit/test_ids.py checks them against python-ulid's decoder.
"""

from __future__ import annotations

import os
import time

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid() -> str:
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    return "".join(CROCKFORD[(value >> shift) & 0x1F] for shift in range(125, -1, -5))


def new_id(prefix: str) -> str:
    return f"{prefix}_{ulid()}"


def memory_id() -> str:
    return new_id("mem")
