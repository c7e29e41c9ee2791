"""Strict JSON decoding for request bodies, shared by the REST and MCP surfaces (stdlib only)."""

from __future__ import annotations

import json
from typing import Any


class DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key[:64]


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Reject ``{"a": 1, "a": 2}``: parsers disagree on which value wins (RFC 8259 §4), so
    accepting it lets a proxy and this service read different requests from one body."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise ValueError(name)  # NaN, Infinity, -Infinity are not JSON


#: one decoder for every body: ``json.loads`` with hooks builds a new one (and its scanner) per call,
#: which took as long as the decoding of a tools/call (≈ 20 µs)
_DECODER = json.JSONDecoder(object_pairs_hook=_object_without_duplicates, parse_constant=_no_constants)


def loads(text: str) -> Any:
    """``json.loads`` without duplicate keys or NaN/Infinity. Raises ``DuplicateKey``,
    ``json.JSONDecodeError``, ``ValueError`` or ``RecursionError``."""
    if not isinstance(text, str):
        raise TypeError(f"the JSON object must be str, not {type(text).__name__}")
    if text.startswith("\ufeff"):  # as json.loads refuses it
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER.decode(text)
