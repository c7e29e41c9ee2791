"""The LIKE patterns of ``path_filter`` and ``memory_type`` (docs/contract.md §3), defined once.

``%`` matches any run of characters (also none), ``_`` exactly one character, and ``\\``
makes the next character literal (``\\%``, ``\\_``, ``\\\\``; ``\\x`` is just ``x``). Matching
is case-insensitive: pattern and value are both case-folded. A memory without a kind or path
is matched as the empty string, so ``%`` matches it and ``_%`` does not.

A pattern ending in a lone ``\\`` escapes nothing and is rejected (400 ``invalid_request``).

Backends translate the pattern themselves (SQLite ``LIKE … ESCAPE '\\'``; OpenSearch a
``wildcard`` query with its own metacharacters escaped); :func:`like_matches` is the reference
semantics they are tested against, and what the service uses to explain a ``no_match``.
"""

from __future__ import annotations

import re
from functools import lru_cache


def like_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid LIKE pattern, or None when it is."""
    escaped = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
    if escaped:
        return "the pattern ends with a lone `\\`, which escapes nothing; write `\\\\` for a literal backslash"
    return None


@lru_cache(maxsize=256)
def like_regex(pattern: str) -> re.Pattern[str]:
    """``pattern`` (already valid) as an anchored regular expression over case-folded text."""
    out: list[str] = []
    chars = iter(pattern.casefold())
    for char in chars:
        if char == "\\":
            out.append(re.escape(next(chars, "")))
        elif char == "%":
            out.append(".*")
        elif char == "_":
            out.append(".")
        else:
            out.append(re.escape(char))
    return re.compile("".join(out), re.DOTALL)


def like_matches(pattern: str, value: str | None) -> bool:
    """True when ``value`` (None counts as "") matches the LIKE ``pattern``."""
    return like_regex(pattern).fullmatch((value or "").casefold()) is not None


def is_match_all(pattern: str | None) -> bool:
    """True for patterns that match every value, the empty one included (``%``, ``%%``, …)."""
    return pattern is None or (pattern != "" and set(pattern) == {"%"})
